"""What the plain Binder link opens: each chapter as a notebook beside the pages, and the handler that fetches it.

``_ext/live_code/notebooks.py`` writes every notebook page's source as an
``.ipynb`` (as myst-nb reads it, no outputs, cells numbered: two writes of one
tree are byte-identical, as builds of one commit are). ``binder/live_book.py``,
the session's server extension, takes the site and the notebook from the link
and refuses any other kind of value in one line. ``tests/browser/test_binder.py``
follows the link through a simulated BinderHub.
"""

from __future__ import annotations

import importlib.util
import sys

import nbformat
import pytest
from myst_nb.core.read import read_myst_markdown_notebook
from tornado import web

from _ext.live_code import notebooks
from tools import ROOT

#: The notebook pages (a kernelspec in their front matter), as the build finds them: ``{docname: source}``.
CHAPTERS = {path.relative_to(ROOT).with_suffix("").as_posix(): path for path in sorted((ROOT / "book").glob("*.md"))
            if "\nkernelspec:" in path.read_text().split("\n---\n", 1)[0]}


def live_book():
    """``binder/live_book.py``, imported without writing byte-code into ``binder/`` (its hash names Binder's ref)."""
    spec = importlib.util.spec_from_file_location("live_book", ROOT / "binder" / "live_book.py")
    module = importlib.util.module_from_spec(spec)
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = dont_write
    return module


def test_every_chapter_is_written_as_its_notebook_without_outputs_and_alike_twice(tmp_path):
    assert len(CHAPTERS) >= 13 and set(CHAPTERS) >= {f"book/{stem}" for stem in ("smoothing", "learning")}
    first = notebooks.write_notebooks(CHAPTERS, tmp_path / "a")
    second = notebooks.write_notebooks(CHAPTERS, tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    for docname, path in zip(sorted(CHAPTERS), first, strict=True):
        assert path == tmp_path / "a" / notebooks.FOLDER / f"{docname}.ipynb"
        written = nbformat.reads(path.read_text(), as_version=4)
        nbformat.validate(written)
        source = read_myst_markdown_notebook(CHAPTERS[docname].read_text(), path=CHAPTERS[docname])
        assert [(c.cell_type, c.source) for c in written.cells] == [(c.cell_type, c.source) for c in source.cells]
        assert all(c.outputs == [] for c in written.cells if c.cell_type == "code")
        assert written.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("site", [
    "http://example.org/book/_static/live-code/",  # plain http off this computer
    "https://example.org/book/_static/live-code",  # not a folder
    "https://example.org/_static/live-code/?x=1",  # a query
    "https://user@example.org/_static/live-code/",  # a user name
    "file:///etc/",
    "javascript:alert(1)//",
])
def test_the_handler_refuses_a_site_that_is_not_an_https_folder(site):
    with pytest.raises(web.HTTPError) as refused:
        live_book().site_url(site)
    assert refused.value.status_code == 400 and repr(site) in refused.value.reason
    assert "\n" not in refused.value.reason


@pytest.mark.parametrize("notebook", ["../etc/passwd.ipynb", "/tmp/x.ipynb", "book/../../x.ipynb",
                                      "book/smoothing.md", "book/smoothing.ipynb?x", ""])
def test_the_handler_refuses_a_notebook_outside_the_book(notebook):
    with pytest.raises(web.HTTPError) as refused:
        live_book().notebook_path(notebook)
    assert refused.value.status_code == 400 and repr(notebook) in refused.value.reason


def test_the_handler_accepts_the_site_and_notebook_a_page_names():
    module = live_book()
    for site in ("https://reader.github.io/fork/_static/live-code/", "http://127.0.0.1:8000/_static/live-code/"):
        assert module.site_url(site) == site
    assert module.notebook_path("book/smoothing.ipynb") == "book/smoothing.ipynb"
