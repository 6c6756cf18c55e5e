"""live_code's workaround for sphinx-thebe: its loader and page configuration never reach a page.

sphinx-thebe (loaded by jupyter-book for the launch button) would add a
loader that fetches thebe 0.8.2 from a CDN, and a configuration for it on
every page; it has no option to leave them out, so
:func:`live_code.disconnect_sphinx_thebe` disconnects its two listeners.
These tests fire those listeners' events in a small Sphinx project and look
at what was added. The built pages are checked too, in
``tests/browser/test_thebe.py``.
"""

from __future__ import annotations

from docutils.utils import new_document
from sphinx.application import Sphinx

from _ext import live_code


def sphinx_app(tmp_path, extensions):
    """A Sphinx HTML application, its builder initialised, for a one-page project."""
    (tmp_path / "conf.py").write_text("")
    (tmp_path / "index.rst").write_text("A page\n======\n")
    return Sphinx(tmp_path, tmp_path, tmp_path / "_build", tmp_path / "_doctrees", "html",
                  confoverrides={"extensions": extensions}, status=None, warning=None)


def what_sphinx_thebe_adds(app) -> tuple[list, list]:
    """The scripts and the page nodes added when the events sphinx-thebe listens to fire."""
    scripts = len(app.registry.js_files)
    app.events.emit("env-before-read-docs", app.env, ["index"])
    doctree = new_document("index")
    app.events.emit("doctree-resolved", doctree, "index")
    return app.registry.js_files[scripts:], [node.astext() for node in doctree.children]


def test_sphinx_thebe_alone_adds_a_loader_and_a_page_configuration(tmp_path):
    """The control: what the workaround must remove is there without it."""
    scripts, nodes = what_sphinx_thebe_adds(sphinx_app(tmp_path, ["sphinx_thebe"]))
    assert any("THEBE_JS_URL" in attributes.get("body", "") for _, attributes in scripts)
    assert any("text/x-thebe-config" in text for text in nodes)


def test_live_code_leaves_sphinx_thebe_nothing_to_add(tmp_path):
    app = sphinx_app(tmp_path, ["sphinx_thebe", "_ext.live_code"])
    assert what_sphinx_thebe_adds(app) == ([], [])


def test_live_code_loads_sphinx_thebe_itself(tmp_path):
    """Whatever the order of the extensions, the listeners exist when live_code disconnects them."""
    app = sphinx_app(tmp_path, ["_ext.live_code"])
    assert "sphinx_thebe" in app.extensions
    assert what_sphinx_thebe_adds(app) == ([], [])
    handlers = {listener.handler for listeners in app.events.listeners.values() for listener in listeners}
    assert not handlers & set(live_code.SPHINX_THEBE_LISTENERS.values())
