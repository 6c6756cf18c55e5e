"""Live code cells: the smoothing chapter on a local Jupyter server.

The server is started exactly as ``make live`` starts it
(:class:`tools.servers.JupyterServer`: fresh token, 127.0.0.1, CORS limited
to the site's origin), the page gets it
through the URL fragment, and Chromium presses the real launch button. The
pages may reach only the site and that server: nothing else, no CDN.
"""

from __future__ import annotations

import re
import socket

import pytest

from tools.chromium import open_page
from tools.live import live_url
from tools.servers import JupyterServer

PAGE = "book/smoothing.html"
LAUNCH_TIMEOUT = 120_000  # ms: a cold kernel on a busy 2-core machine
RUN_TIMEOUT = 60_000
KERNEL_STDOUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'
# Where thebe's bundle fetches require.js from before it renders a widget.
REQUIREJS_ON_CDN = re.compile(r"https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^'\"\s]+")


def origin(url: str) -> str:
    return url.rstrip("/")


@pytest.fixture(scope="module")
def jupyter(site_url):
    server = JupyterServer(origin=site_url)
    yield server
    server.stop()


def press_launch(page) -> None:
    """Open the rocket menu and press "Live Code", as a reader does."""
    page.locator(".dropdown-launch-buttons .dropdown-toggle").click()
    page.locator(".btn-launch-thebe").click()


def status(page):
    return page.locator(".live-code-status")


@pytest.fixture(scope="module")
def live_page(browser, site_url, jupyter):
    """The chapter, launched on the local server, with its thebe-init cell run."""
    page = open_page(browser, {site_url, origin(jupyter.url)})
    page.goto(live_url(site_url, PAGE, jupyter.url, jupyter.token))
    press_launch(page)
    page.locator(".live-code-status[data-state=ready]").wait_for(timeout=LAUNCH_TIMEOUT)
    yield page
    page.context.close()


def cell(page, tag=None):
    return page.locator(f"div.cell.tag_{tag}" if tag else "div.cell").first


def set_source(page, cell_locator, source: str) -> None:
    cell_locator.locator(".CodeMirror").evaluate("(el, src) => el.CodeMirror.setValue(src)", source)


def test_status_names_the_local_kernel(live_page, jupyter):
    text = status(live_page).inner_text()
    assert "Connected: live session (python3)" in text
    assert f"your Jupyter server at {jupyter.url}" in text


def test_token_leaves_the_address_bar(live_page, jupyter):
    assert jupyter.token not in live_page.url
    assert "#" not in live_page.url


def test_thebe_init_cell_runs_on_launch(live_page):
    # thebe re-wraps the static output as text/html: only the kernel's print is stdout.
    output = cell(live_page, "thebe-init").locator(KERNEL_STDOUT)
    output.wait_for(timeout=RUN_TIMEOUT)
    # Its text, not its rendered text: far below the view, the cell is not rendered (content-visibility).
    assert re.search(r"selfattention \d+\.\d+\.\d+\s+N = 100, sigma = 0\.3, tau = 0\.005", output.text_content())


def test_plain_cell_prints_its_output(live_page):
    target = cell(live_page, "thebe-init")
    set_source(live_page, target, "print(6 * 7, 'from the kernel')")
    target.locator(".thebe-run-button").click()
    output = target.locator(KERNEL_STDOUT, has_text="42 from the kernel")
    output.wait_for(timeout=RUN_TIMEOUT)


def test_latex_output_is_typeset_by_katex_from_the_site(live_page):
    """A kernel's LaTeX (sympy through IPython's Math) is typeset by KaTeX, which thebe loads
    from the site when Live Code starts (``live-math.js``); a page that was only read loads no
    math script (``test_page_budgets.py``)."""
    def math_scripts():
        urls = live_page.evaluate("performance.getEntriesByType('resource').map(entry => entry.name)")
        scripts = [u for u in urls if u.split("?")[0].endswith(".js")]
        return [u for u in scripts if "katex" in u or "live-math" in u or "mathjax" in u.lower()]

    target = cell(live_page, "thebe-init")
    set_source(live_page, target, "import sympy as sp\nfrom IPython.display import Math\n"
                                  "Math(sp.latex(sp.Matrix([[1, sp.sqrt(2)], [0, sp.Rational(1, 3)]])))")
    target.locator(".thebe-run-button").click()
    output = target.locator('[data-mime-type="text/latex"]')
    output.locator(".katex .katex-mathml math").wait_for(timeout=RUN_TIMEOUT)
    assert output.locator(".katex-error").count() == 0
    assert "sqrt" not in output.locator(".katex-html").inner_text()  # typeset, not TeX source
    site = live_page.url.split("/book/")[0]
    assert sorted(u.rsplit("/", 1)[-1].split("?")[0] for u in math_scripts()) == [
        "auto-render.min.js", "katex.min.js", "live-math.js"]
    assert all(u.startswith(site) for u in math_scripts())
    assert live_page.external_requests == []


def test_explore_slider_redraws_the_plot(live_page):
    target = cell(live_page, tag="skip-execution")  # the one cell the build does not run
    assert "explore()" in target.locator(".CodeMirror").inner_text()
    target.locator(".thebe-run-button").click()
    image = target.locator(".widget-image")
    image.wait_for(timeout=RUN_TIMEOUT)
    live_page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    sliders = target.locator(".widget-slider")
    assert sliders.count() == 3
    before = image.get_attribute("src")
    handle = sliders.nth(1).locator(".noUi-handle")  # tau
    handle.focus()
    handle.press("ArrowRight")
    live_page.wait_for_function("([img, old]) => img.src !== old", arg=[image.element_handle(), before],
                                timeout=RUN_TIMEOUT)
    assert target.locator(".widget-readout").nth(1).inner_text() != "0.005"


def test_thebe_gets_require_js_from_the_site(live_page, site_dir):
    """thebe fetches require.js from one fixed CDN address (it has no option for it):
    ``serveRequireJsLocally`` in live-code.js answers that fetch with the site's copy."""
    assets = site_dir / "_static" / "live-code"
    addresses = set(REQUIREJS_ON_CDN.findall((assets / "thebe" / "index.js").read_text()))
    assert len(addresses) == 1, addresses
    served = live_page.evaluate("url => fetch(url).then(response => response.text())", addresses.pop())
    assert served == (assets / "require.js").read_text()
    assert live_page.external_requests == []


def test_no_request_left_the_two_servers(live_page):
    assert live_page.external_requests == []


def free_port() -> int:
    """A port nothing listens on (bound, read, released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch_with_fragment(browser, site_url, fragment):
    page = open_page(browser, {site_url})
    page.goto(f"{site_url}/{PAGE}#{fragment}")
    press_launch(page)
    return page


def test_refused_connection_says_so(browser, site_url):
    server = f"http://127.0.0.1:{free_port()}/"
    page = launch_with_fragment(browser, site_url, f"jupyter={server}&token=abc")
    try:
        page.locator(".live-code-status[data-state=error]").wait_for(timeout=RUN_TIMEOUT)
        text = status(page).inner_text()
        assert f"Could not connect to your Jupyter server at {server}" in text
        assert "refused the connection" in text
    finally:
        page.context.close()


def test_malformed_server_url_says_so(browser, site_url):
    page = launch_with_fragment(browser, site_url, "jupyter=127.0.0.1:8888&token=abc")
    try:
        page.locator(".live-code-status[data-state=error]").wait_for(timeout=RUN_TIMEOUT)
        assert "is not usable" in status(page).inner_text() or "malformed" in status(page).inner_text()
        assert page.external_requests == []
    finally:
        page.context.close()


def test_static_page_has_the_explore_cell_and_no_widget_state_or_still(site_dir):
    """The cell is there for Live Code; the explorer above it shows, live, what a still of it would."""
    html = (site_dir / PAGE).read_text()
    assert "widget-state+json" not in html and "widget-view+json" not in html
    cell = re.search(r'<div class="cell[^"]*tag_skip-execution[^"]*">.*?</pre>', html, re.S)
    assert cell and re.sub(r"<[^>]+>", "", cell.group(0)).strip() == "explore()"
    assert 'id="fig-smoothing-explore"' not in html


def test_sphinx_thebe_loader_is_replaced(site_dir):
    """sphinx-thebe's loader (thebe 0.8.2 from unpkg, Binder only) is gone; ours is there."""
    html = (site_dir / PAGE).read_text()
    for marker in ("THEBE_JS_URL", "sphinx-thebe.js", "text/x-thebe-config", "unpkg.com"):
        assert marker not in html
    assert 'id="live-code-config"' in html and "_static/live-code.js" in html
    for asset in ("thebe/index.js", "thebe/thebe.css", "require.js"):
        assert (site_dir / "_static" / "live-code" / asset).is_file()


def launch_answering_dialogs(browser, site_url, server, accept: bool):
    """Launch on ``server`` (from the fragment); record each dialog's text in ``page.dialogs`` and answer it."""
    page = open_page(browser, {site_url})
    page.dialogs = []

    def answer(dialog):
        page.dialogs.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.on("dialog", answer)
    page.goto(f"{site_url}/{PAGE}#jupyter={server}&token=abc")
    press_launch(page)
    page.locator(".live-code-status[data-state=error]").wait_for(timeout=RUN_TIMEOUT)
    return page


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_a_server_on_this_computer_is_used_without_asking(browser, site_url, host):
    """No server listens (and page.route stops the request): the page tried it at once, without a dialog."""
    server = f"http://{host}:{free_port()}/"
    page = launch_answering_dialogs(browser, site_url, server, accept=False)
    try:
        assert page.dialogs == []
        assert any(url.startswith(server) for url in page.external_requests)
        assert f"Could not connect to your Jupyter server at {server}" in status(page).inner_text()
    finally:
        page.context.close()


FOREIGN = "http://attacker.example/"  # reserved: resolves nowhere, and page.route stops it first


def test_a_foreign_server_declined_gets_no_request(browser, site_url):
    page = launch_answering_dialogs(browser, site_url, FOREIGN, accept=False)
    try:
        assert len(page.dialogs) == 1 and "attacker.example" in page.dialogs[0]
        assert "declined the Jupyter server at attacker.example" in status(page).inner_text()
        assert page.external_requests == []
    finally:
        page.context.close()


def test_a_foreign_server_is_contacted_only_once_confirmed(browser, site_url):
    page = launch_answering_dialogs(browser, site_url, FOREIGN, accept=True)
    try:
        assert len(page.dialogs) == 1 and "attacker.example" in page.dialogs[0]
        assert page.external_requests and all(url.startswith(FOREIGN) for url in page.external_requests)
        text = status(page).inner_text()
        assert f"Could not connect to the Jupyter server at {FOREIGN}" in text and "your" not in text
    finally:
        page.context.close()
