"""A failing cell stops the build with one line: the chapter, the line in its ``.md`` file, the error.

``_config.yml`` lets myst-nb finish reading a chapter whose cell failed
(``nb_execution_raise_on_error: false``; myst-nb's own error would end the
build with three tracebacks and Sphinx's "report a bug" notice). Right after
that chapter is read (``doctree-read``), :func:`stop_at_failed_cell` finds
the failing cell in the notebook myst-nb wrote, maps it to its line in the
MyST file (the cell's position from jupytext's source map, plus the line
within the cell from IPython's traceback), and raises :class:`CellFailed`,
which Sphinx prints as two short lines::

    A cell failed:
    book/smoothing.md:42: ZeroDivisionError: division by zero (in: 1 / x)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx
from sphinx.errors import SphinxError

ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: IPython names a frame in a cell "Cell In[<execution count>], line <line in the cell>".
CELL_FRAME = re.compile(r"Cell In\[(\d+)\], line (\d+)")


class CellFailed(SphinxError):
    category = "A cell failed"


def failing_cell(notebook: Any) -> tuple[int, Any]:
    """``(index, cell)``: the cell with an error output, else the last executed code cell."""
    code = [(i, cell) for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    for index, cell in code:
        if any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            return index, cell
    executed = [(i, cell) for i, cell in code if cell.get("execution_count")]
    return (executed or code)[-1]


def first_code_line(lines: list[str], fence_line: int, source: str) -> int:
    """The 1-based line of the cell's first source line, at or after its opening fence."""
    first = source.splitlines()[0] if source.strip() else None
    for number in range(fence_line, len(lines) + 1):
        if first is not None and lines[number - 1] == first:
            return number
    return fence_line


def line_in_cell(cell: Any) -> tuple[int, str] | None:
    """The deepest line of this cell that the error's traceback names, with its error text."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            traceback = ANSI.sub("", "\n".join(output.get("traceback", [])))
            count = str(cell.get("execution_count"))
            lines = [int(line) for n, line in CELL_FRAME.findall(traceback) if n == count]
            return (lines[-1] if lines else 1), f"{output.get('ename')}: {output.get('evalue')}"
    return None


def describe(source_file: Path, relative: str, notebook: Any, error: str) -> str:
    """``<file>:<line>: <error> (in: <source line>)`` for the notebook's failing cell."""
    index, cell = failing_cell(notebook)
    lines = source_file.read_text(encoding="utf-8").splitlines()
    fence = notebook.metadata.get("source_map", [1] * len(notebook.cells))[index]
    start = first_code_line(lines, fence, cell.source)
    found = line_in_cell(cell)
    line, text = (start + found[0] - 1, found[1]) if found else (start, error)
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f"{relative}:{line}: {text}" + (f" (in: {code})" if code else "")


def stop_at_failed_cell(app: Sphinx, doctree: Any) -> None:
    """Raise :class:`CellFailed` if the chapter just read had a failing cell (``doctree-read``)."""
    env = app.env
    data = NbMetadataCollector.get_doc_data(env).get(env.docname, {}).get("exec_data")
    if not data or data.get("succeeded", True):
        return
    relative = env.doc2path(env.docname, base=False)
    written = Path(env.mystnb_config.output_folder, f"{env.docname}.ipynb")
    error = (ANSI.sub("", data.get("traceback") or "").strip().splitlines() or [data.get("error") or "?"])[-1]
    if not written.is_file():
        raise CellFailed(f"{relative}: {error}")
    notebook = nbformat.reads(written.read_text(encoding="utf-8"), as_version=4)
    raise CellFailed(describe(Path(env.doc2path(env.docname)), str(relative), notebook, error))
