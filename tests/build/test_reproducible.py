"""A clean build of the same sources in another directory gives the site built here, byte for byte.

The slow test copies the working tree (into a directory of another name and
depth, so a leaked absolute path would show), gives the copy a ``.venv`` of
its own at the copy's path, as a fresh clone has, runs ``make build`` there
with the same ``SOURCE_DATE_EPOCH`` and PDF as the site here, and compares
the two sites file by file; a difference is reported with the file and its
first differing line. The site here is the one ``make test`` built (after
the single-page build that printed the book, with a warm execution cache),
the copy's is built from nothing: so the test also checks that a build
that reuses what an earlier one left equals a clean one. The copy reads its
pages in one process, the site here in one per core (``tools.build.jobs``):
so the site does not depend on how many processes read it, or on the
machine's cores. The fast tests
check that report, that a copy's ``.venv`` really lives at the copy's path,
and the one setting that made the site depend on it (the themes' templates
paths, hashed into ``.buildinfo``).

"""

from __future__ import annotations

import json
import os
import subprocess
from types import SimpleNamespace

import pytest
from sphinx.builders.html import BuildInfo
from sphinx.config import Config

from _ext.publish import pdf
from _ext.site_build import reproducible
from tools import ROOT, SITE, build, workcopy


@pytest.mark.slow
def test_a_clean_build_elsewhere_equals_the_site_built_here(tmp_path, site_dir, monkeypatch):
    copy = workcopy.copy_tree(ROOT, tmp_path / "another" / "directory")
    workcopy.own_venv(copy, ROOT)
    printed = site_dir / pdf.PDF_NAME  # the same printed book, if the site here has one
    monkeypatch.setenv(pdf.PDF_ENV, str(printed) if printed.is_file() else "")
    monkeypatch.setenv(build.JOBS_ENV, "1")  # the site here was read by one process per core
    epoch = reproducible.source_date_epoch()  # the site here was dated with it
    assert epoch is not None, "no SOURCE_DATE_EPOCH and no git history to date the site from"
    result = workcopy.build(copy, source_date_epoch=epoch)
    assert result.ok, result.log[-3000:]
    assert (copy / SITE / "index.html").is_file()
    assert workcopy.differences(site_dir, copy / SITE) == [], (
        "the site here differs from a clean build of its sources (if they changed since it was built: make pdf)")


def test_a_difference_names_the_file_and_first_differing_line(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for site, date in ((a, "Jan 01"), (b, "Feb 02")):
        (site / "book").mkdir(parents=True)
        (site / "book" / "page.html").write_text(f"<html>\n<p>same</p>\n<p>{date}</p>\n</html>\n")
        (site / "same.css").write_text("p {}\n")
    (b / "extra.png").write_bytes(b"\x89PNG")
    found = workcopy.differences(a, b)
    assert found == [f"only in {b}: extra.png",
                     "book/page.html: line 3: '<p>Jan 01</p>' != '<p>Feb 02</p>'"]


def test_identical_trees_have_no_difference(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "image.png").write_bytes(bytes(range(256)))
    assert workcopy.differences(tmp_path / "a", tmp_path / "b") == []
    (tmp_path / "b" / "image.png").write_bytes(bytes(range(255)) + b"\x00")
    assert workcopy.differences(tmp_path / "a", tmp_path / "b") == [
        "image.png: binary files differ from byte 255"]


def test_a_copys_own_venv_finds_the_theme_at_the_copys_path(tmp_path):
    """What makes the slow test see a directory leak: each copy's theme lives under that copy."""
    script = ROOT / ".venv" / "bin" / "jupyter-book"
    original = script.read_bytes()
    copy = workcopy.copy_tree(ROOT, tmp_path / "copy")
    workcopy.own_venv(copy, ROOT)
    assert not (copy / ".venv").is_symlink()
    found = subprocess.run([copy / ".venv" / "bin" / "python", "-c",
                            "import sys, sphinx_book_theme, selfattention; "
                            "print(sys.prefix, sphinx_book_theme.get_html_theme_path(), selfattention.__file__)"],
                           capture_output=True, text=True, check=True,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).stdout.split()
    assert all(path.startswith(f"{copy}/") for path in found), found
    assert (copy / ".venv" / "bin" / "jupyter-book").read_text().startswith(f"#!{copy}/.venv/bin/python")
    assert script.read_bytes() == original, "the original environment is left as it was"


def buildinfo_hash(root, theme_templates) -> str:
    """The config hash Sphinx writes to ``.buildinfo`` for a book at ``root`` whose theme adds a templates path."""
    config = Config({"templates_path": ["_templates"]}, {})
    config.templates_path.append(str(theme_templates))
    reproducible.relative_template_paths(SimpleNamespace(confdir=str(root)), config)
    # Sphinx joins each entry with the configuration directory: the same directories as before.
    assert [os.path.normpath(os.path.join(root, path)) for path in config.templates_path] == [
        str(root / "_templates"), str(theme_templates)]
    return BuildInfo(config, config_categories=frozenset({"html"})).config_hash


def test_the_buildinfo_hash_does_not_depend_on_the_books_directory(tmp_path):
    theme = ".venv/lib/python3.11/site-packages/sphinx_book_theme/theme/sphinx_book_theme/components"
    first, second = tmp_path / "first", tmp_path / "another" / "directory"
    assert buildinfo_hash(first, first / theme) == buildinfo_hash(second, second / theme)
    assert buildinfo_hash(first, first / theme) != buildinfo_hash(first, first / theme.replace("3.11", "3.12"))


def test_the_processes_that_read_pages_are_one_per_core_unless_set(monkeypatch):
    monkeypatch.delenv(build.JOBS_ENV, raising=False)
    assert build.jobs() == len(os.sched_getaffinity(0))
    monkeypatch.setenv(build.JOBS_ENV, "3")
    assert build.jobs() == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(build.JOBS_ENV, bad)
        with pytest.raises(SystemExit, match=f"BOOK_BUILD_JOBS must be a whole number.*{bad!r}"):
            build.jobs()


def test_the_downloadable_notebook_joins_the_streams_the_kernel_split():
    """Two prints arrive as one stream output or as two, as the kernel's buffer is flushed: the same notebook."""
    def notebook(*outputs):
        cell = {"cell_type": "code", "id": "random", "source": "print('a'); print('b')", "outputs": list(outputs)}
        return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    def stream(text, name="stdout"):
        return {"output_type": "stream", "name": name, "text": text}

    image = {"output_type": "display_data", "data": {"text/plain": ["<Figure>"]}, "metadata": {}}
    one = reproducible.stable_notebook(notebook(stream(["a\n", "b\n"]), image, stream("c")))
    split = reproducible.stable_notebook(notebook(stream(["a\n"]), stream("b\n"), image, stream("c")))
    assert one == split
    outputs = json.loads(split)["cells"][0]["outputs"]
    assert [o.get("text") for o in outputs] == [["a\n", "b\n"], None, "c"]  # a lone stream keeps its layout
    errors = json.loads(reproducible.stable_notebook(notebook(stream("a\n"), stream("b\n", "stderr"))))
    assert len(errors["cells"][0]["outputs"]) == 2, "stdout and stderr stay apart"
    outputs = [stream(["a\n"]), stream("b\n")]
    assert reproducible.merged_streams(outputs)[0]["text"] == ["a\n", "b\n"]
    assert outputs == [stream(["a\n"]), stream("b\n")], "the outputs given are left as they were"
