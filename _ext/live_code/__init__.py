"""Live code cells: thebe 0.9.3 served by the site itself, on Binder or a local server.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``) that
replaces sphinx-thebe's loader, which fetches thebe 0.8.2 from a CDN and can
only talk to Binder. It

* copies thebe 0.9.3 (``lib/``, including ``thebe.css``), require.js and
  KaTeX's two scripts from ``node_modules/`` (``make assets``) into
  ``_static/live-code/`` when the build finishes, so the page never fetches
  them from another host;
* keeps sphinx-thebe (which jupyter-book loads for the launch button) from
  adding its loader and page configuration (:func:`disconnect_sphinx_thebe`), and writes its own
  per-page configuration (kernel, notebook path, Binder repository) as JSON;
* adds ``live-code.js``, which bootstraps thebe with explicit options for
  Binder (the default) or for a Jupyter server named in the page URL's
  fragment (``#jupyter=<url>&token=<token>``; ``make live`` prints such a URL);
  LaTeX that a kernel prints is typeset by KaTeX through ``live-math.js``
  (thebe's ``mathjaxUrl``), which loads KaTeX (copied with thebe) only then.
  thebe fetches require.js from a fixed CDN address (no option changes it):
  the script's ``serveRequireJsLocally`` answers that one fetch with the
  site's copy;
* writes the book's package as a wheel into ``_static/live-code/``, which a
  Binder session installs when it starts (:mod:`.package`): Binder's image
  is made from ``binder/`` alone, the session runs the site's own package;
  and each chapter as a notebook, ``_static/live-code/notebooks/<docname>.ipynb``
  (:mod:`.notebooks`), which the plain Binder link opens: ``live-code.js``
  points it at ``binder/live_book.py``'s handler, which fetches both.
* once the session connects, ``live-code.js`` loads ``live-cells.js`` and
  ``live-cells.css`` (a page that is only read fetches neither): each cell's
  Run button and state, running the cells above it first, one toolbar (Run
  all, Restart), errors shown last line first; the kernel first runs
  ``live_preamble.py`` (``glue`` shows what it would only record). The page's
  configuration carries the sources of the cells the page leaves out
  (:func:`quiet_cells`), which run after the shown cell before them.

Nothing secret is written into the built pages: the token only ever travels
in the URL fragment, which the browser does not send to the static server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sphinx_thebe
from docutils import nodes
from myst_nb.core.read import read_myst_markdown_notebook, standard_nb_read
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.fileutil import copy_asset

from .notebooks import write_notebooks
from .package import write_wheel

HERE = Path(__file__).resolve().parent
#: ``node_modules`` beside ``_ext/`` (installed by ``make assets``).
NODE_MODULES = HERE.parents[1] / "node_modules"
#: Where the copied assets live in the built site, under ``_static/``.
ASSET_DIR = "live-code"
#: npm files copied into ``_static/live-code/``: (package, file or directory, target).
NPM_ASSETS = (("thebe", "lib", "thebe"), ("requirejs", "require.js", "require.js"),
              ("katex", "dist/katex.min.js", "katex/katex.min.js"),
              ("katex", "dist/contrib/auto-render.min.js", "katex/auto-render.min.js"))
#: sphinx-thebe's listeners that this extension replaces: the one that adds its
#: loader (thebe 0.8.2 from a CDN, Binder only) and the one that adds its page configuration.
SPHINX_THEBE_LISTENERS = {
    "env-before-read-docs": sphinx_thebe.init_thebe_core,
    "doctree-resolved": sphinx_thebe.update_thebe_context,
}


def _unwanted(relative: str) -> bool:
    """Ship the browser code and its licence notices, not source maps or type stubs."""
    return relative.endswith(".map") or "types" in relative.split("/")


def copy_assets(app: Sphinx, exception: Exception | None) -> None:
    """Copy :data:`NPM_ASSETS` (thebe's ``lib/``, require.js, KaTeX's scripts) into ``_static/live-code/``.

    Files that are already up to date are skipped."""
    if exception is not None or app.builder.format != "html":
        return
    if not (NODE_MODULES / "thebe" / "lib" / "index.js").is_file():
        raise ExtensionError(f"live_code: no {NODE_MODULES}/thebe: run `make assets`")
    target = Path(app.outdir) / "_static" / ASSET_DIR
    for package, name, dest in NPM_ASSETS:
        source = NODE_MODULES / package / name
        # copy_asset copies a directory onto a directory, a file into one.
        copy_asset(source, target / (dest if source.is_dir() else Path(dest).parent), excluded=_unwanted)


def write_package(app: Sphinx, exception: Exception | None) -> None:
    """Write the book's package, as a wheel and ``package.json``, into ``_static/live-code/`` (:mod:`.package`),
    and each notebook page as an ``.ipynb`` under ``_static/live-code/notebooks/`` (:mod:`.notebooks`)."""
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / ASSET_DIR
        write_wheel(HERE.parents[1], target)
        write_notebooks({docname: Path(app.env.doc2path(docname)) for docname in sorted(app.env.found_docs)
                         if _kernel_name(app, docname) is not None}, target)


def disconnect_sphinx_thebe(app: Sphinx) -> None:
    """Keep sphinx-thebe from adding its loader and page configuration, which this extension replaces.

    A workaround: sphinx-thebe has no option to leave them out, and
    jupyter-book loads it whenever the launch button is on. So its two
    listeners (:data:`SPHINX_THEBE_LISTENERS`) are disconnected before they
    run; its stylesheet and static files stay.
    """
    for event, handler in SPHINX_THEBE_LISTENERS.items():
        ids = [listener.id for listener in app.events.listeners[event] if listener.handler == handler]
        if not ids:
            raise ExtensionError(f"live_code: sphinx-thebe's {handler.__name__} is not connected to "
                                 f"{event}; update disconnect_sphinx_thebe for this sphinx-thebe")
        for listener_id in ids:
            app.disconnect(listener_id)


def _kernel_name(app: Sphinx, docname: str) -> str | None:
    """The page's Jupyter kernel, or None for a page that is not a notebook."""
    spec = app.env.metadata.get(docname, {}).get("kernelspec")
    if isinstance(spec, str):
        spec = json.loads(spec)
    return spec.get("name", "python3") if spec else None


def _repository(app: Sphinx) -> str:
    """``org/repo`` of the book's GitHub repository, for Binder."""
    url = app.config.html_theme_options.get("repository_url", "") or ""
    parts = url.rstrip("/").split("github.com/")[-1].split("/")
    return "/".join(parts[:2]) if "github.com/" in url and len(parts) >= 2 else ""


#: Tags of a code cell whose source the page does not show: thebe makes no live cell of it.
QUIET_TAGS = {"remove-cell", "remove-input"}


def quiet_cells(app: Sphinx, docname: str) -> tuple[list[dict[str, Any]], int]:
    """The page's code cells that it leaves out, and how many code cells it shows.

    Each left-out cell (the glue bookkeeping after a shown cell) comes with ``after``,
    the index of the shown code cell before it (-1: none), so that ``live-cells.js``
    runs it right after that cell and shows what it computes for the text.
    """
    path = Path(app.env.doc2path(docname))
    text = path.read_text(encoding="utf-8")
    notebook = standard_nb_read(text) if path.suffix == ".ipynb" else read_myst_markdown_notebook(text, path=path)
    found, shown = [], 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if QUIET_TAGS & set(cell.metadata.get("tags", [])):
            found.append({"after": shown - 1, "source": cell.source})
        else:
            shown += 1
    return found, shown


def page_config(app: Sphinx, docname: str) -> dict[str, Any]:
    """What ``live-code.js`` needs to start a kernel for ``docname``."""
    options = app.config.html_theme_options
    launch = options.get("launch_buttons", {}) or {}
    path_to_book = (options.get("path_to_docs") or "").strip("/")
    folder = str(Path(path_to_book, docname).parent)
    quiet, shown = quiet_cells(app, docname)
    return {
        "quietCells": quiet,
        "shownCells": shown,
        # The plain Binder link opens _static/live-code/notebooks/<this> (.notebooks, binder/live_book.py).
        "notebook": f"{docname}.ipynb",
        "kernelName": _kernel_name(app, docname),
        "path": "" if folder == "." else folder,
        "binderUrl": (launch.get("binderhub_url") or "https://mybinder.org").rstrip("/"),
        "repo": _repository(app),
        "ref": options.get("repository_branch") or "main",
    }


def add_page_config(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Write the page's configuration for ``live-code.js`` as JSON (notebook pages only)."""
    if _kernel_name(app, docname) is None:
        return
    text = json.dumps(page_config(app, docname), sort_keys=True).replace("</", "<\\/")
    html = f'<script type="application/json" id="live-code-config">{text}</script>\n'
    doctree.append(nodes.raw("", html, format="html"))


def add_static_path(app: Sphinx) -> None:
    app.config.html_static_path.append(str(HERE / "static"))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", add_static_path)
    app.setup_extension("sphinx_thebe")
    # Every extension is set up by now, and sphinx-thebe's listeners have not run yet.
    app.connect("builder-inited", disconnect_sphinx_thebe)
    app.add_js_file("live-code.js", loading_method="defer")
    app.add_css_file("live-code.css")
    app.connect("doctree-resolved", add_page_config)
    app.connect("build-finished", copy_assets)
    app.connect("build-finished", write_package)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
