"""Read the pages in parallel (Sphinx's ``-j``): their notebooks then execute at once.

``make build`` runs Sphinx with one process per core (``tools/build.py``).
Sphinx reads, and myst-nb executes, the pages in parallel only when every
extension declares that it is safe to; three of the book's extensions (from
jupyter-book's stack) declare nothing, and Sphinx then warns ("does not
declare if it is safe for parallel reading, assuming it isn't"), a build
error here. :data:`CHECKED` records, for each, what was checked to make the
declaration true; :func:`declare_parallel_safety` makes it on their
``Extension`` records, which is where Sphinx reads it. An extension missing
from this table still gets Sphinx's warning.

jupyter-cache creates its database the first time a process opens the
cache, checking first whether the file exists: two readers that start on an
empty cache both find none and both create the tables, and the second fails
("table settings already exists"). :func:`create_execution_cache` creates
it in the main process before the readers fork.

Writing stays in the main process (:func:`write_serially`): it takes about
2 s for the whole book, and KaTeX, which typesets every formula while pages
are written, then runs as one server whose time ``katex_math`` reports.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_cache.cache.db import create_db
from sphinx.application import Sphinx
from sphinx.config import Config

#: Why reading in parallel is safe with each extension that does not say so itself.
CHECKED = {
    "sphinx_multitoc_numbering": "it replaces TocTreeCollector.assign_section_numbers, which Sphinx calls in "
                                 "the main process, after merging the readers' environments",
    "sphinx_jupyterbook_latex": "its transforms change only the document being read (they mark the root "
                                "page's toctree nodes); it keeps state in the environment for LaTeX builds only",
}


def declare_parallel_safety(app: Sphinx, config: Config) -> None:
    """Declare reading safe for the extensions of :data:`CHECKED` that made no declaration (``config-inited``)."""
    for name in CHECKED:
        extension = app.extensions.get(name)
        if extension is not None and extension.parallel_read_safe is None:
            extension.parallel_read_safe = True


def write_serially(app: Sphinx) -> None:
    """Write the pages in the main process even when reading is parallel (``builder-inited``).

    ``allow_parallel`` is the builder's own switch for parallel ``write_doc()``
    calls; Sphinx reads it when writing starts.
    """
    app.builder.allow_parallel = False


def create_execution_cache(app: Sphinx) -> None:
    """Create the execution cache's database before any page is read (``builder-inited``).

    After myst-nb (priority 500) has resolved the cache's path and after
    :mod:`.healing`, which may have removed an unreadable cache.
    """
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    path = Path(config.execution_cache_path)
    path.mkdir(parents=True, exist_ok=True)
    create_db(path).dispose()  # the readers open their own connections
