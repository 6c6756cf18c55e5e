"""Live code cells against a local Jupyter server, in headless Chromium.

The server is started as ``make live`` starts it (:mod:`tools.servers`). Two times:

- launch: from the click on "Live Code" to the first cell output (the
  chapter's ``thebe-init`` cell printing, which needs thebe loaded from the
  site, a new kernel and one execution), over several fresh launches;
- slider: from a key press on the temperature slider of the ``explore()``
  widget to the new plot image decoded in the page (the kernel recomputes the
  head and renders the figure), at the book's N and at the largest N.

- Binder launch from a cached image: the same click to first output, the
  kernel on a server from the Binder environment (:mod:`tools.binder`,
  ``binder/`` installed as repo2docker installs it) through the simulated
  BinderHub, whose image for the page's ref is already built (no build
  phases): what a reader waits for after a push that changed no ``binder/``,
  less mybinder's scheduling; it includes the session's install of the
  page's package (``_ext/live_code/package.py``).

All are measured in the page with ``performance.now()``; medians reported.
The site is ``$SITE_DIR`` or ``_build/html`` if it has the live-code assets,
else a fresh build of a copy of the working tree.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import urllib.request
from pathlib import Path

from _ext.publish.binder_ref import environment_ref
from tools import ROOT, SITE, binder, chromium, workcopy
from tools.live import live_url
from tools.servers import JupyterServer, StaticServer

PAGE = "book/smoothing.html"
LAUNCHES = 3
CHANGES = 20

WATCH_LAUNCH = """() => {
  const b = window.__bench = {};
  const output = '.cell.tag_thebe-init [data-mime-type="application/vnd.jupyter.stdout"]';
  document.querySelector('.btn-launch-thebe')
    .addEventListener('click', () => { b.click = performance.now(); }, {capture: true});
  new MutationObserver((_, obs) => {
    if (!b.ready && document.querySelector('.live-code-status[data-state=ready]')) b.ready = performance.now();
    if (document.querySelector(output)) { b.output = performance.now(); obs.disconnect(); }
  }).observe(document.body, {childList: true, subtree: true, attributes: true});
}"""

WATCH_IMAGE = """(img) => {
  const b = window.__slider = {pressed: [], shown: []};
  document.addEventListener('keydown', () => b.pressed.push(performance.now()), {capture: true});
  new MutationObserver(async () => { await img.decode(); b.shown.push(performance.now()); })
    .observe(img, {attributes: true, attributeFilter: ['src']});
}"""


def built_site(tmp: Path) -> Path:
    """A built site with the live-code assets: $SITE_DIR, _build/html, or a fresh build."""
    for site in (os.environ.get("SITE_DIR"), ROOT / SITE):
        if site and (Path(site) / "_static" / "live-code" / "thebe" / "index.js").is_file():
            return Path(site)
    copy = workcopy.copy_tree(ROOT, tmp / "book")
    result = workcopy.build(copy)
    if not result.ok:
        raise RuntimeError(f"the book did not build:\n{result.log[-3000:]}")
    return copy / SITE


def launch_once(browser, url: str) -> dict:
    """Open the page, press "Live Code", return the in-page times (ms) and the page."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url)
    return press_live_code(page)


def press_live_code(page) -> dict:
    """Press "Live Code" on the open page; the in-page times (ms) to ready and to the first output, and the page."""
    page.evaluate(WATCH_LAUNCH)
    page.locator(".dropdown-launch-buttons .dropdown-toggle").click()
    page.locator(".btn-launch-thebe").click()
    page.wait_for_function("() => window.__bench.output", timeout=180_000)
    times = page.evaluate("() => window.__bench")
    return {"output": times["output"] - times["click"], "ready": times["ready"] - times["click"], "page": page}


#: A published build's page configuration (what BOOK_REPOSITORY=<repo> writes; tests/build/test_publish.py).
PUBLISHED = """([repo, ref]) => {
  const el = document.getElementById('live-code-config');
  el.textContent = JSON.stringify({...JSON.parse(el.textContent), repo, ref});
}"""


def binder_launch_once(browser, site_url: str, cache: binder.ImageCache) -> dict:
    """The page as published, launched on the simulated BinderHub from ``cache``; in-page times (ms), the page."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.hub = binder.SimulatedBinderHub(page, cache.stream)
    page.goto(f"{site_url}/{PAGE}")
    page.evaluate(PUBLISHED, ["reader/self-attention-fork", environment_ref(ROOT)])
    return press_live_code(page)


def binder_launches(browser, site_url: str) -> list[dict]:
    """:data:`LAUNCHES` launches on Binder from the image already built for the page's ref."""
    server = binder.binder_server(binder.environment())
    cache = binder.ImageCache(server)
    cache.builds.append(environment_ref(ROOT))  # built by an earlier launch
    launches = []
    try:
        for k in range(LAUNCHES):
            if k:
                launches[-1]["page"].context.close()
                shutdown_sessions(server)
            launches.append(binder_launch_once(browser, site_url, cache))
            print(f"Binder, cached: first output after {launches[-1]['output']:.0f} ms", flush=True)
        launches[-1]["page"].context.close()
        if cache.builds != [environment_ref(ROOT)]:
            raise RuntimeError(f"a launch built an image: {cache.builds}")
    finally:
        server.stop()
    return launches


def shutdown_sessions(jupyter) -> None:
    """Delete the server's sessions: the next launch gets a fresh kernel, not the last one's
    (Jupyter hands a new page the existing session for the same notebook path)."""
    def call(method, path):
        request = urllib.request.Request(f"{jupyter.url}{path}?token={jupyter.token}", method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read()
    for session in json.loads(call("GET", "api/sessions")):
        call("DELETE", f"api/sessions/{session['id']}")


def slider_times(page, changes: int) -> list[float]:
    """Press the tau slider's handle ``changes`` times: ms from key press to new image shown."""
    cell = page.locator("div.cell").last
    image, handle = cell.locator(".widget-image"), cell.locator(".widget-slider").nth(1).locator(".noUi-handle")
    page.evaluate(WATCH_IMAGE, image.element_handle())
    for k in range(changes):
        handle.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
        page.wait_for_function(f"() => window.__slider.shown.length >= {k + 1}", timeout=60_000)
    b = page.evaluate("() => window.__slider")
    # One image per key press; a press whose image never came would have timed out above.
    return [shown - pressed for pressed, shown in zip(b["pressed"], b["shown"], strict=False)]


def run_explore(page) -> None:
    cell = page.locator("div.cell").last
    cell.locator(".thebe-run-button").click()
    cell.locator(".widget-image").wait_for(timeout=120_000)


def largest_n(page) -> str:
    """Move the N slider to its end (the End key) and wait for the redraw; returns N."""
    cell = page.locator("div.cell").last
    image = cell.locator(".widget-image")
    before = image.get_attribute("src")
    cell.locator(".widget-slider").nth(2).locator(".noUi-handle").press("End")
    page.wait_for_function("([img, old]) => img.src !== old", arg=[image.element_handle(), before],
                           timeout=60_000)
    return cell.locator(".widget-readout").nth(2).inner_text()


def fmt(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ms"


def main() -> str:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-thebe-") as tmp, sync_playwright() as pw:
        site = StaticServer(built_site(Path(tmp)))
        jupyter = JupyterServer(origin=site.url)
        browser = chromium.launch(pw)
        try:
            url = live_url(site.url, PAGE, jupyter.url, jupyter.token)
            launches = []
            for k in range(LAUNCHES):
                if k:
                    launches[-1]["page"].context.close()
                    shutdown_sessions(jupyter)
                launches.append(launch_once(browser, url))
                print(f"launch: first output after {launches[-1]['output']:.0f} ms", flush=True)
            page = launches[-1]["page"]
            run_explore(page)
            small = slider_times(page, CHANGES)
            n_max = largest_n(page)
            large = slider_times(page, CHANGES)
            cached = binder_launches(browser, site.url)
        finally:
            browser.close()
            jupyter.stop()
            site.stop()
    outputs = [x["output"] for x in launches]
    return "\n".join([
        "Headless Chromium against a local Jupyter server started as `make live` starts it "
        f"(`tools.servers`), page `{PAGE}`; the Binder row against a server from the Binder environment "
        "behind the simulated BinderHub (`tools.binder`), its image for the page's ref already built.",
        "",
        "| measurement | median | all runs |",
        "| --- | ---: | --- |",
        f"| launch: click on Live Code to the first cell output ({LAUNCHES} fresh kernels) | {fmt(outputs)} | "
        + ", ".join(f"{x:.0f}" for x in outputs) + " ms |",
        f"| launch: click to \"Connected\" status | {fmt([x['ready'] for x in launches])} | |",
        f"| Binder, cached image: click on Live Code to the first cell output ({LAUNCHES} fresh kernels, "
        "simulated hub, the page's package installed) | "
        f"{fmt([x['output'] for x in cached])} | " + ", ".join(f"{x['output']:.0f}" for x in cached) + " ms |",
        f"| slider: τ key press to new plot image shown, N = 100 ({CHANGES} changes) | {fmt(small)} | "
        f"max {max(small):.0f} ms |",
        f"| slider: τ key press to new plot image shown, N = {n_max} ({CHANGES} changes) | {fmt(large)} | "
        f"max {max(large):.0f} ms |",
    ])


if __name__ == "__main__":
    print(main())
