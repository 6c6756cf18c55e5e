"""Headless Chromium for the browser tests and the benchmarks: one executable, one set of flags.

Every page opened with :func:`open_page` blocks, and records in
``page.external_requests``, each request to an origin it was not allowed,
so a test can prove that a page is self-contained:
``assert page.external_requests == []``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # No name resolves but loopback: a request that escaped the routes below still goes nowhere.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def executable() -> str | None:
    """``$CHROMIUM``, else Debian's Chromium if installed, else None (Playwright's own download)."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if Path(path).exists() else None


def launch(playwright):
    """A headless Chromium browser started with :data:`FLAGS`."""
    return playwright.chromium.launch(executable_path=executable(), args=FLAGS)


def open_page(browser, allowed_origins, **context_kw):
    """A page in a new context that blocks and records requests outside ``allowed_origins``.

    ``allowed_origins`` holds ``scheme://host:port`` strings; ``data:`` and
    ``blob:`` URLs are always allowed. ``context_kw`` go to ``browser.new_context``.
    """
    context = browser.new_context(**context_kw)
    page = context.new_page()
    page.external_requests = []

    def route(route):
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob") or f"{parts.scheme}://{parts.netloc}" in allowed_origins:
            route.continue_()
        else:
            page.external_requests.append(url)
            route.abort()

    page.route("**/*", route)
    return page


def show_explorer(page, url: str, selector: str, drawn: str):
    """``page`` at ``url``, once the explorer at ``selector`` has its API and ``drawn`` (JavaScript) is true.

    An explorer draws when it comes near the view, and the parts of the page
    above it are laid out as they come near (``content-visibility``), which
    moves it after a single scroll: so it is scrolled to the middle of the
    view, again at each poll, until it has drawn.
    """
    element = f"document.querySelector({json.dumps(selector)})"
    page.goto(url, wait_until="networkidle")
    page.wait_for_function(f"!!{element}.attentionExplorer")
    page.wait_for_function(f"(() => {{ {element}.scrollIntoView({{block: 'center'}}); return {drawn}; }})()",
                           polling=200)
    return page
