"""Make what the build writes depend on the sources only: not on the day, nor on chance.

* ``SOURCE_DATE_EPOCH``: Sphinx takes the "last updated" date and the
  copyright year from it; :func:`default_source_date_epoch` sets it to the
  last commit's time unless it is set already. This is the one place that
  reads it from git: ``make build`` and a direct ``jupyter-book build``
  alike get it here.
* ``.buildinfo`` holds a hash of the HTML configuration, which Sphinx
  compares on the next build to decide whether every page must be rewritten.
  The themes append the absolute paths of their templates (inside ``.venv``)
  to ``templates_path``, so the hash, and the site, depended on the directory
  of the build; :func:`relative_template_paths` makes those entries relative
  to the configuration directory, which is how Sphinx reads them anyway.
* The notebooks readers download from ``_sources/`` (copied there by
  sphinx-book-theme from myst-nb's executed notebooks) carry the random
  cell ids that jupytext gives each cell when it reads a MyST file, and a
  cell's printed text split into stream outputs as the kernel happened to
  flush it; :func:`stable_notebooks` replaces the ids by ids derived from the
  cell's position and source, and joins each run of stream outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from .paths import PROJECT_ROOT


def source_date_epoch() -> str | None:
    """``SOURCE_DATE_EPOCH`` if it is set, else the last commit's time; None outside a git checkout."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    try:
        result = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=PROJECT_ROOT,
                                capture_output=True, text=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.stdout.strip().isdigit() else None


def default_source_date_epoch() -> None:
    """Use the last commit's time as ``SOURCE_DATE_EPOCH`` if it is unset."""
    epoch = source_date_epoch()
    if epoch is not None:
        os.environ["SOURCE_DATE_EPOCH"] = epoch


def relative_template_paths(app: Sphinx, config: Config) -> None:
    """Make every absolute ``templates_path`` entry relative to the configuration directory.

    Sphinx joins each entry with ``app.confdir`` when it loads templates, so a
    relative entry names the same directory, and the hash Sphinx writes to
    ``.buildinfo`` no longer holds the path of the build.
    """
    config.templates_path = [os.path.relpath(path, app.confdir) if os.path.isabs(path) else path
                             for path in config.templates_path]


def cell_id(index: int, source: str | list[str]) -> str:
    """A valid nbformat cell id (``[a-z0-9-]``, 1-64 chars) from position and source."""
    text = source if isinstance(source, str) else "".join(source)
    return f"cell-{index}-" + hashlib.sha256(text.encode()).hexdigest()[:8]


def merged_streams(outputs: list[dict]) -> list[dict]:
    """``outputs`` with each run of stream outputs of one name (stdout, stderr) joined into one.

    A kernel sends what a cell prints in one message or in several, as its
    output buffer happens to be flushed: two prints close in time arrive as
    one stream output, or as two on a busy machine. ``nb_merge_streams``
    renders both as one; the downloadable notebook is merged the same way.
    """
    merged: list[dict] = []
    for output in outputs:
        last = merged[-1] if merged else {}
        if output.get("output_type") == "stream" == last.get("output_type") and output.get("name") == last.get("name"):
            text = "".join(last["text"]) + "".join(output["text"])
            last["text"] = text.splitlines(keepends=True)  # nbformat's layout of a multi-line string
        else:
            merged.append(dict(output))  # a copy: the joined text goes into it, not into ``outputs``
    return merged


def stable_notebook(notebook_json: str) -> str:
    """The notebook text with every cell id replaced by :func:`cell_id` and its streams :func:`merged_streams`."""
    notebook = json.loads(notebook_json)
    for index, cell in enumerate(notebook.get("cells", [])):
        if "id" in cell:
            cell["id"] = cell_id(index, cell.get("source", ""))
        if "outputs" in cell:
            cell["outputs"] = merged_streams(cell["outputs"])
    # nbformat's own layout, so that only the ids and the split of the streams change.
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def stable_notebooks(app: Sphinx, exception: Exception | None) -> None:
    """Rewrite every downloadable notebook in ``_sources/`` with :func:`stable_notebook`."""
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted((Path(app.outdir) / "_sources").rglob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        stable = stable_notebook(text)
        if stable != text:
            path.write_text(stable, encoding="utf-8")
