"""``_ext/publish``: the repository from the environment, Binder's ref from ``binder/``, the PDF link with a PDF.

Each case builds a one-page notebook with the book's own configuration
(``_config.yml`` through jupyter-book's configuration, so the real theme
options, launch settings and repository defaults), the theme, myst-nb and
the ``live_code`` and ``publish`` extensions, and reads the written page.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from jupyter_book.config import get_final_config
from sphinx.application import Sphinx
from sphinx.errors import ConfigError

from _ext.publish import binder_ref, pdf, repository
from tools import ROOT, workcopy

NOTEBOOK = workcopy.NOTEBOOK_HEADER + """# A chapter

```{code-cell} ipython3
print(6 * 7)
```
"""
ENV = (repository.REPOSITORY_ENV, pdf.PDF_ENV)


def book_config() -> dict:
    """The Sphinx settings jupyter-book makes of ``_config.yml`` (its local extensions left to the test)."""
    user = yaml.safe_load((ROOT / "_config.yml").read_text())
    user["sphinx"].pop("local_extensions")
    config, _ = get_final_config(user_yaml=user, cli_config={"latex_individualpages": False}, sourcedir=ROOT)
    keep = ("html_theme", "html_theme_options", "html_context", "html_sourcelink_suffix")
    return {key: config[key] for key in keep}


def build(tmp_path: Path, monkeypatch, **env) -> str:
    """Build the one-page book with ``env`` as the only BOOK_* variables; the page's HTML."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "conf.py").write_text("")
    (src / "index.md").write_text(NOTEBOOK)
    overrides = {**book_config(), "extensions": ["myst_nb", "_ext.live_code", "_ext.publish"],
                 "nb_execution_mode": "off"}
    app = Sphinx(src, src, tmp_path / "out", tmp_path / "doctrees", "html", confoverrides=overrides,
                 status=None, warning=None, freshenv=False)
    app.build()
    return (tmp_path / "out" / "index.html").read_text()


def live_code_config(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="live-code-config">(.*?)</script>', page).group(1))


@pytest.mark.slow  # builds a page with live_code, which serves thebe from node_modules (make assets)
def test_a_published_book_launches_binder_from_its_repository_and_environment(tmp_path, monkeypatch):
    page = build(tmp_path, monkeypatch, BOOK_REPOSITORY="forker/self-attention-fork")
    config = live_code_config(page)
    ref = binder_ref.environment_ref(ROOT)
    assert (config["repo"], config["ref"]) == ("forker/self-attention-fork", ref)
    # sphinx-book-theme's plain Binder link (notebook_interface: classic opens tree/<source>).
    assert f"https://mybinder.org/v2/gh/forker/self-attention-fork/{ref}?urlpath=tree/index.md" in page


@pytest.mark.slow  # builds a page with live_code, which serves thebe from node_modules (make assets)
def test_an_unpublished_book_names_no_repository(tmp_path, monkeypatch):
    page = build(tmp_path, monkeypatch)
    assert live_code_config(page)["repo"] == ""
    assert "mybinder.org/v2/" not in page
    assert "executablebooks" not in page and "github.com/" not in page
    assert "btn-launch-thebe" in page, "Live Code (for make live) is still in the launch menu"


@pytest.mark.parametrize("value", ["self-attention", "a/b/c", "https://github.com/a/b", "-a/b", "a/b.git", "a b/c"])
def test_a_malformed_repository_is_refused_by_name(value):
    with pytest.raises(ConfigError, match="BOOK_REPOSITORY"):
        repository.repository_from_env({repository.REPOSITORY_ENV: value})


def copy_tree(tmp_path: Path) -> Path:
    """A copy of the repository's ``binder/``, ``book/`` and ``src/``."""
    for name in ("binder", "book", "src"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return tmp_path


def test_binders_ref_changes_with_binder_only(tmp_path):
    """A push that changes only the chapters or the package launches Binder's cached image; binder/ a new one."""
    tree = copy_tree(tmp_path)
    ref = binder_ref.environment_ref(tree)
    assert ref == binder_ref.environment_ref(ROOT) and re.fullmatch(r"binder-[0-9a-f]{16}", ref)
    for changed in ("book/smoothing.md", "src/selfattention/__init__.py"):
        with (tree / changed).open("a") as file:
            file.write("\n# a push of this file only\n")
        assert binder_ref.environment_ref(tree) == ref
    refs = {ref}
    for changed in sorted((tree / "binder").iterdir()):  # each file of binder/ names the environment
        with changed.open("a") as file:
            file.write("\n")
        assert binder_ref.environment_ref(tree) not in refs, changed.name
        refs.add(binder_ref.environment_ref(tree))
    (tree / "binder" / "start").write_text("#!/bin/bash\nexec \"$@\"\n")  # a file added to binder/
    assert binder_ref.environment_ref(tree) not in refs


def test_a_well_formed_repository_is_taken():
    assert repository.repository_from_env({repository.REPOSITORY_ENV: " a/b "}) == "a/b"


def test_the_repository_is_named_only_by_the_environment():
    """jupyter-book fills in its own repository when _config.yml names none: that default is replaced,
    and _config.yml names none (a name there would be a second place, and is refused)."""
    user = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "url" not in user.get("repository", {}) and "branch" not in user.get("repository", {})
    assert book_config()["html_theme_options"]["repository_url"] == repository.JUPYTER_BOOK_DEFAULT_URL


def test_a_repository_in_the_configuration_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(repository, "JUPYTER_BOOK_DEFAULT_URL", "https://github.com/somebody/else")
    with pytest.raises(ConfigError, match=r"remove repository\.url"):
        build(tmp_path, monkeypatch)


@pytest.mark.slow  # builds a page with live_code, which serves thebe from node_modules (make assets)
def test_the_pdf_is_linked_only_when_it_was_printed(tmp_path, monkeypatch):
    printed = tmp_path / "book.pdf"
    printed.write_bytes(b"%PDF-1.4 a printed book")
    site = tmp_path / "out"
    page = build(tmp_path, monkeypatch, BOOK_PDF=str(printed))
    assert f'href="{pdf.PDF_NAME}"' in page and pdf.LINK["text"] in page
    assert (site / pdf.PDF_NAME).read_bytes() == printed.read_bytes()
    # make build after make pdf: the same site as a build that never saw a PDF.
    page = build(tmp_path, monkeypatch)
    assert pdf.PDF_NAME not in page and not (site / pdf.PDF_NAME).exists()


def test_a_missing_pdf_is_refused_by_name(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="BOOK_PDF"):
        build(tmp_path, monkeypatch, BOOK_PDF=str(tmp_path / "never-printed.pdf"))
