"""An incremental build writes exactly what a clean build writes.

Sphinx rewrites only the pages whose sources (or noted dependencies)
changed, and myst-nb re-reads a notebook from the jupyter-cache when its code
is unchanged. Five things a clean build would write differently slip through;
each is fixed here with the API of the tool that owns it:

* myst-nb writes the notebook *it read* to ``jupyter_execute/`` (which
  sphinx-book-theme copies to ``_sources/`` for download), not the notebook
  it rendered: a notebook executed in this build carries its outputs, one
  served from the cache has none, no execution counts and no
  ``language_info``. :func:`restore_cached_outputs` merges the cached outputs
  in, with jupyter-cache's ``merge_match_into_notebook`` (what myst-nb
  renders the page from).
* myst-nb and sphinx-exercise copy their stylesheets into ``_static/`` when
  the build finishes, so the pages of a clean build link them without
  Sphinx's ``?v=<checksum>`` and pages rewritten later link them with one.
  :func:`copy_late_stylesheets_first` runs their own copies when the builder
  starts, before any page is written.
* Every page embeds what its own source does not hold: the navigation
  (every chapter's title in the sidebar, the previous and next pages'
  titles), numbers and references resolved across pages, the ``?v=``
  checksums of the static files, and the "last updated" date
  (``SOURCE_DATE_EPOCH``). Sphinx rewrites only the pages it re-read (and
  the pages whose toctree lists them), so a new title left the other pages'
  sidebars stale, and an edit to ``_ext/*/static`` or a new commit changed
  no page at all ("no targets are out of date").
  :func:`write_every_page_after_a_change` returns every page from
  ``env-updated`` (Sphinx then writes them all) when any page was read
  or removed, or when a digest of the static files and the date, kept in
  the environment, changed. Reading, and so executing, stays incremental.
* A page whose ``jupyter_execute/`` notebook is gone cannot be written again
  (its images and its download come from there): :func:`reread_notebooks_without_outputs`
  makes Sphinx re-read it (``env-get-outdated``), from the cache.
* Sphinx's search index keeps a word whose last page lost it, with an empty
  page list; :func:`drop_empty_search_terms` removes such words from
  ``searchindex.js``, with Sphinx's own reader and writer of that file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import nbformat
import sphinx_exercise
from jupyter_cache import get_cache
from myst_nb.sphinx_ext import add_global_html_resources
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.search import js_index
from sphinx.util import logging
from sphinx.util.i18n import format_date

from .paths import PROJECT_ROOT

logger = logging.getLogger(__name__)

#: What the site copies from ``node_modules`` (MathJax, thebe, ...) is fixed by the npm lock.
NPM_LOCK = PROJECT_ROOT / "package-lock.json"
ENV_KEY = "site_build_shared_inputs"


def _output_notebook(env: BuildEnvironment, docname: str) -> Path | None:
    config = getattr(env, "mystnb_config", None)
    return Path(config.output_folder, f"{docname}.ipynb") if config is not None else None


def _is_notebook(env: BuildEnvironment, docname: str) -> bool:
    """myst-nb records a kernelspec in the metadata of every page it read as a notebook."""
    return "kernelspec" in env.metadata.get(docname, {})


def restore_cached_outputs(app: Sphinx, doctree: Any) -> None:
    """Write the cached outputs into the notebook myst-nb wrote for a page served from the cache."""
    env = app.env
    config = getattr(env, "mystnb_config", None)
    path = _output_notebook(env, env.docname)
    if config is None or config.execution_mode != "cache" or path is None or not path.is_file():
        return
    notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=nbformat.NO_CONVERT)
    try:
        _, merged = get_cache(config.execution_cache_path).merge_match_into_notebook(notebook)
    except KeyError:  # not in the cache: not executed (e.g. no code), or its execution failed
        return
    text = nbformat.writes(merged)
    if text != path.read_text(encoding="utf-8"):
        path.write_text(text, encoding="utf-8")


def copy_late_stylesheets_first(app: Sphinx) -> None:
    """Copy myst-nb's and sphinx-exercise's stylesheets into ``_static/`` before pages are written
    (``builder-inited``), with each one's own copy function."""
    if app.builder.format == "html":
        Path(app.outdir, "_static").mkdir(parents=True, exist_ok=True)
        add_global_html_resources(app, None)
        if "sphinx_exercise" in app.extensions:
            sphinx_exercise.copy_asset_files(app, None)


def _files(root: Path) -> list[tuple[str, Path]]:
    """``(name relative to root, path)`` of the file ``root`` or of every file under it."""
    if root.is_file():
        return [(root.name, root)]
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    return [(p.relative_to(root).as_posix(), p) for p in files]


def static_sources(app: Sphinx) -> list[tuple[str, Path]]:
    """The files Sphinx copies into ``_static/`` (theme and ``html_static_path``), and the npm lock."""
    roots = [Path(theme_dir, "static") for theme_dir in app.builder.theme.get_theme_dirs()]
    roots += [Path(app.confdir, entry) for entry in app.config.html_static_path]
    return [file for root in [*roots, NPM_LOCK] for file in _files(root)]


def shared_inputs_digest(app: Sphinx) -> str:
    """SHA-256 of what every page embeds but no page's source holds: static files, the date."""
    digest = hashlib.sha256()
    if app.config.html_last_updated_fmt is not None:  # as StandaloneHTMLBuilder dates each page
        date = format_date(app.config.html_last_updated_fmt or "%b %d, %Y", language=app.config.language)
        digest.update(f"last updated: {date}\0".encode())
    for name, path in static_sources(app):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def note_removed_documents(app: Sphinx, env: BuildEnvironment, added: set[str],
                           changed: set[str], removed: set[str]) -> list[str]:
    """Start this build's record of changed pages: the removed ones (``env-get-outdated``)."""
    env.site_build_read_any = bool(removed)
    return []


def note_documents_read(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Add to the record whether this build reads any page (``env-before-read-docs``)."""
    env.site_build_read_any = getattr(env, "site_build_read_any", False) or bool(docnames)


def write_every_page_after_a_change(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Every page, if a page was read or removed or the static files or date changed (``env-updated``)."""
    if app.builder.format != "html":
        return []
    digest = shared_inputs_digest(app)
    previous = getattr(env, ENV_KEY, None)
    setattr(env, ENV_KEY, digest)
    if previous == digest and not getattr(env, "site_build_read_any", True):
        return []
    if previous not in (None, digest):
        logger.info("site_build: a static file or the date changed: writing every page again")
    return sorted(env.found_docs)


def reread_notebooks_without_outputs(app: Sphinx, env: BuildEnvironment, added: set[str],
                                     changed: set[str], removed: set[str]) -> list[str]:
    """Notebook pages whose ``jupyter_execute/`` notebook is missing (``env-get-outdated``)."""
    missing = []
    for docname in sorted(env.all_docs):
        path = _output_notebook(env, docname)
        if _is_notebook(env, docname) and path is not None and not path.is_file():
            missing.append(docname)
    if missing:
        logger.info("site_build: %d executed notebook(s) missing from jupyter_execute/: reading them again",
                    len(missing))
    return missing


def drop_empty_search_terms(app: Sphinx, exception: Exception | None) -> None:
    """Remove words that no page contains any more from ``searchindex.js`` (``build-finished``)."""
    path = Path(app.outdir, "searchindex.js")
    if exception is not None or app.builder.format != "html" or not path.is_file():
        return
    index = js_index.loads(path.read_text(encoding="utf-8"))
    emptied = False
    for key in ("terms", "titleterms"):
        terms = index.get(key, {})
        empty = [word for word, pages in terms.items() if pages == []]
        for word in empty:
            del terms[word]
        emptied = emptied or bool(empty)
    if emptied:
        path.write_text(js_index.dumps(index), encoding="utf-8")


def setup(app: Sphinx) -> None:
    """Connect the handlers (called by the package's ``setup``)."""
    app.connect("builder-inited", copy_late_stylesheets_first)
    app.connect("env-get-outdated", note_removed_documents)
    app.connect("env-get-outdated", reread_notebooks_without_outputs)
    app.connect("env-before-read-docs", note_documents_read)
    app.connect("doctree-read", restore_cached_outputs)
    app.connect("env-updated", write_every_page_after_a_change)
    app.connect("build-finished", drop_empty_search_terms)

