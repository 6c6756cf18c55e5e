"""Benchmarks: `python -m benchmarks` (see __main__.py for the contract).

Shared by the benchmark modules: the static server of ``make live`` and the
Chromium launch settings of the browser tests, so that benchmarks measure
exactly what the tests check.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(name: str, path: Path):
    """A module from a file that is not on ``sys.path`` (tools/, tests/browser/)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def live():
    """``tools/live.py``: :class:`StaticServer`, :class:`JupyterServer`, ``live_url``."""
    return load("live", ROOT / "tools" / "live.py")


def launch_chromium(playwright):
    """Chromium as the browser tests launch it (same executable and flags)."""
    conftest = load("browser_conftest", ROOT / "tests" / "browser" / "conftest.py")
    return playwright.chromium.launch(executable_path=conftest.chromium_executable(), args=conftest.CHROMIUM_FLAGS)
