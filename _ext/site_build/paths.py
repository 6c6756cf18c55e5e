"""Where the project's files are, seen from a Sphinx application."""

from __future__ import annotations

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
