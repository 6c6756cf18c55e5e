"""Fixtures for browser tests: the built site, a local server, headless Chromium.

Every page these fixtures open blocks and records each request to a host
other than the local server, so a test can prove that a page is
self-contained: ``assert page.external_requests == []``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
# SITE_DIR points the tests at another build, e.g. one made with --path-output.
SITE = Path(os.environ.get("SITE_DIR", ROOT / "_build" / "html"))
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)


def chromium_executable() -> str | None:
    """Debian's Chromium if installed, else Playwright's own download (None)."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if Path(path).exists() else None


def load_live():
    """tools/live.py as a module (tools/ is a script directory, not a package)."""
    spec = importlib.util.spec_from_file_location("live", ROOT / "tools" / "live.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def site_dir() -> Path:
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site in {SITE}: run `make build` first")
    return SITE


@pytest.fixture(scope="session")
def site_url(site_dir):
    """Base URL (no trailing slash) of the built site, served as ``make live`` serves it."""
    server = load_live().StaticServer(site_dir)
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def open_page(browser, allowed_origins, **context_kw):
    """A new page that blocks and records requests outside ``allowed_origins``."""
    context = browser.new_context(**context_kw)
    page = context.new_page()
    page.external_requests = []

    def route(route):
        url = route.request.url
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if parts.scheme in ("data", "blob") or origin in allowed_origins:
            route.continue_()
        else:
            page.external_requests.append(url)
            route.abort()

    page.route("**/*", route)
    return page


@pytest.fixture
def page(browser, site_url):
    """A fresh page allowed to reach only the local site server."""
    page = open_page(browser, {site_url})
    yield page
    page.context.close()
