"""Fixtures shared by the tests: the built site, served as ``make live`` and as GitHub Pages serve it, and Chromium.

The helpers come from the repository's ``tools`` package (importable because
``pyproject.toml`` puts the repository root on pytest's ``pythonpath``).
Every test under ``tests/browser/`` is marked ``browser``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import ROOT, SITE, chromium
from tools.pages_server import PagesServer
from tools.servers import StaticServer

TESTS = Path(__file__).parent
BROWSER_TESTS = TESTS / "browser"
#: The test files that take longest, longest first (worker-seconds in `make test` on 2026-12-05: the browser and
#: slow tests' 150 s of test_math_fits down to test_code_boxes' 50 s; the fast tests' 32 s of test_input_audit down
#: to test_heads_together's 12 s). The workers take whole files in collection order (`--dist loadfile
#: --no-loadscope-reorder`, Makefile), so the long files start first and the short ones fill in after them;
#: xdist's own order, most tests first, left the long files with few tests to the end, one worker idle for the
#: last minute. Only the order depends on this list: an unlisted file runs after these, in collection order.
LONGEST_FIRST = [
    "browser/test_math_fits.py", "browser/test_page_budgets.py", "browser/test_viewports.py",
    "browser/test_explorer.py", "browser/test_explorer_layout.py", "build/test_reproducible.py",
    "build/test_incremental.py", "browser/test_answer_boxes.py", "browser/test_figures.py",
    "browser/test_code_boxes.py", "unit/test_input_audit.py", "unit/test_figure_layouts.py", "unit/test_figures.py",
    "chapters/test_notation.py", "chapters/test_heads_together.py",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(BROWSER_TESTS):
            item.add_marker(pytest.mark.browser)
    if gone := [name for name in LONGEST_FIRST if not (TESTS / name).is_file()]:
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_FIRST names test files that are gone: {gone}")
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(TESTS).as_posix(), len(rank)))  # stable: files whole


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built site: ``$SITE_DIR`` (e.g. a build made with --path-output), else ``_build/html``."""
    site = Path(os.environ.get("SITE_DIR", ROOT / SITE))
    if not (site / "index.html").exists():
        pytest.fail(f"no built site in {site}: run `make build` first")
    return site


@pytest.fixture(scope="session")
def site_url(site_dir):
    """Base URL (no trailing slash) of the built site, served as ``make live`` serves it."""
    server = StaticServer(site_dir)
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def pages_server(site_dir):
    """The built site served as GitHub Pages serves it (gzip), counting the bytes it sends."""
    server = PagesServer(site_dir)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = chromium.launch(pw)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, site_url):
    """A fresh page allowed to reach only the local site server."""
    page = chromium.open_page(browser, {site_url})
    yield page
    page.context.close()
