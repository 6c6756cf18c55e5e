"""Hypothesis's profile, and the fixtures shared by the tests: the built site, served as ``make live`` and as
GitHub Pages serve it, and Chromium.

The helpers come from the repository's ``tools`` package (importable because
``pyproject.toml`` puts the repository root on pytest's ``pythonpath``).
Every test under ``tests/browser/`` is marked ``browser``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tools import ROOT, SITE, chromium
from tools.pages_server import PagesServer
from tools.servers import StaticServer

BROWSER_TESTS = Path(__file__).parent / "browser"

# The property tests' hypothesis settings, the same on every machine. The per-example deadline is off: the
# tests check correctness, not speed, and on a busy shared machine one slow example (a lazy import, a descheduled
# process) fails a correct test; speed is measured by the benchmarks (`make bench`). The parent is hypothesis's
# "default" profile named explicitly, not whichever profile is loaded: where the variable CI is set, hypothesis
# loads its "ci" profile (derandomize, database=None), and with database=None hypothesis 6.170's pytest plugin
# looks the database up through one more settings object per case of a parametrized test, so the audit's 1315
# cases in one test function exceeded Python's recursion limit on a CI machine and passed everywhere else.
settings.register_profile("book", settings.get_profile("default"), deadline=None)
settings.load_profile("book")


@pytest.fixture(autouse=True)
def _package_limits_restored():
    """Each test ends with the package's memory and work limits as it found them.

    Both are settings of the thread (context variables): a test that sets one outside a ``with`` block
    (the input audit calls ``set_limit`` and ``set_work_limit`` with its corner values) would otherwise
    hand it to every later test of its worker, and a limit of 2**62 lets a test that expects a refusal
    compute for hours instead (CI ran ``decode_cached`` on a million tokens).
    """
    from selfattention import memory, work

    before = memory.get_limit(), work.get_work_limit()
    yield
    memory.set_limit(before[0])
    work.set_work_limit(before[1])


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(BROWSER_TESTS):
            item.add_marker(pytest.mark.browser)


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
