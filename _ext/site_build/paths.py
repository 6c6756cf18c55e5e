"""Where the project's files are, seen from a Sphinx application."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from sphinx.application import Sphinx


def project_root(app: Sphinx) -> Path:
    """The nearest directory at or above the source directory with a ``pyproject.toml``.

    A whole-book build has the repository root as its source directory; a
    one-page build (``jupyter-book build book/<chapter>.md``) has ``book/``.
    """
    start = Path(app.srcdir).resolve()
    for directory in (start, *start.parents):
        if (directory / "pyproject.toml").is_file():
            return directory
    return start


def copy_if_changed(source: Path, target: Path) -> int:
    """Copy one file unless ``target`` already has the same bytes: 1 if copied."""
    if target.is_file() and filecmp.cmp(source, target, shallow=False):
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return 1
