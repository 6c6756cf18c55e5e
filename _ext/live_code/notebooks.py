"""Each chapter as a notebook served beside the pages, which the plain Binder link opens.

Binder's image holds the chapters of the commit its tag names, the last
change to ``binder/`` (``_ext/publish``); the page may be newer. So the
build writes each notebook page's source, read as myst-nb reads it, as an
``.ipynb`` into ``_static/live-code/notebooks/<docname>.ipynb``, and the
plain Binder link asks the session's ``live_book`` extension
(``binder/live_book.py``) to fetch that notebook, with the site's wheel
(:mod:`.package`), and open it. The notebooks carry no outputs (the reader
runs them) and numbered cell ids, so two builds of one commit write the same
bytes.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from myst_nb.core.read import read_myst_markdown_notebook, standard_nb_read

#: Under ``_static/live-code/``: ``notebooks/<docname>.ipynb``.
FOLDER = "notebooks"


def notebook_of(source: Path) -> nbformat.NotebookNode:
    """The notebook of a MyST markdown or ``.ipynb`` source, without outputs, its cells numbered ``cell-<i>``."""
    text = source.read_text(encoding="utf-8")
    notebook = standard_nb_read(text) if source.suffix == ".ipynb" else read_myst_markdown_notebook(text, path=source)
    for number, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{number}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return notebook


def write_notebooks(sources: dict[str, Path], target: Path) -> list[Path]:
    """Write ``{docname: source}`` as ``target/notebooks/<docname>.ipynb``; the files written."""
    written = []
    for docname, source in sorted(sources.items()):
        path = target / FOLDER / f"{docname}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(nbformat.writes(notebook_of(source)) + "\n", encoding="utf-8")
        written.append(path)
    return written
