"""Where the project is: the directory that holds ``_ext/`` (and ``node_modules/``, ``src/``)."""

from __future__ import annotations

from pathlib import Path

#: ``_ext/site_build/paths.py`` -> the project's root, for a whole-book or a one-page build alike.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
