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

from pathlib import Path

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


PREAMBLE = Path(live_code.__file__).parent / "static" / "live_preamble.py"


def run_live(monkeypatch, code: str):
    """``code`` run in an IPython shell after the live preamble: (stdout, the outputs it displayed).

    myst_nb's own glue is put back afterwards (the preamble replaces it in the process)."""
    import myst_nb
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    monkeypatch.setattr(myst_nb, "glue", myst_nb.glue)
    shell = InteractiveShell.instance()
    with capture_output() as captured:
        assert shell.run_cell(PREAMBLE.read_text()).success
        assert shell.run_cell(code).success
    return captured.stdout, captured.outputs


def test_live_glue_draws_a_figure_and_prints_a_number_it_would_not_display(monkeypatch):
    """In the live kernel, ``glue(..., display=False)`` shows its value: the figure as a PNG, a number printed."""
    stdout, outputs = run_live(
        monkeypatch,
        "import numpy as np\nfrom myst_nb import glue\nfrom selfattention.figures._style import new_figure\n"
        "glue('a-number', np.float64(2) / 3, display=False)\nglue('a-count', np.int64(12), display=False)\n"
        "glue('a-figure', new_figure(), display=False)\n")
    assert stdout == "a-number = 0.666667\na-count = 12\n"
    assert len(outputs) == 1 and outputs[0].data["image/png"].startswith(b"\x89PNG")
    assert "scrapbook" not in outputs[0].metadata  # shown as itself, not recorded for the build


def test_live_glue_displayed_is_glued_as_before(monkeypatch):
    """``display=True`` is myst_nb's own glue: the value displayed and recorded under its name."""
    stdout, outputs = run_live(monkeypatch, "from myst_nb import glue\nglue('shown', 7)\n")
    assert stdout == ""
    assert [(o.data, o.metadata) for o in outputs] == [({"text/plain": "7"},
                                                          {"scrapbook": {"name": "shown", "mime_prefix": ""}})]


def test_quiet_cells_are_the_left_out_cells_after_the_shown_cell_before_them(tmp_path):
    """What live-cells.js runs after a shown cell: the cells tagged remove-cell (or remove-input) after it."""
    (tmp_path / "conf.py").write_text("extensions = ['myst_nb', '_ext.live_code']\n")
    (tmp_path / "index.md").write_text(
        "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n# A page\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nfirst = 1\n```\n\n"
        "```{code-cell} ipython3\n:tags: [hide-input]\n\nshown = 2\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nglue('a', shown)\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-input]\n\nglue('b', shown)\n```\n\n"
        "```{code-cell} ipython3\nshown += 1\n```\n")
    app = Sphinx(tmp_path, tmp_path, tmp_path / "_build", tmp_path / "_doctrees", "html", status=None, warning=None)
    assert live_code.quiet_cells(app, "index") == ([{"after": -1, "source": "first = 1"},
                                                    {"after": 0, "source": "glue('a', shown)"},
                                                    {"after": 0, "source": "glue('b', shown)"}], 2)
