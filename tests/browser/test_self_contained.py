"""Every page of the built site works with every other host blocked.

For each HTML page of the site (not only the chapters: also the landing
page, search and the index), headless Chromium loads it through the local
server with requests to other hosts blocked, then checks that

* no request to another host was attempted (MathJax, fonts, scripts, ...);
* no request to the site itself failed (a missing font or script is a 404);
* every image loaded (``complete`` and a non-zero natural width);
* on pages with math, MathJax typeset every formula (one ``mjx-container``
  per formula); and on every page no raw TeX delimiter (``$$``, ``\\(``,
  ``\\[``) is left in the text outside code (math that was never parsed or
  never typeset).

The launch button is never pressed here: Binder, the one allowed other host,
is only contacted after a reader presses it (see ``test_thebe.py``).
"""

from __future__ import annotations

from pathlib import Path

from tools import toc

MATH_SELECTOR = "div.math, span.math"
# Text outside code and MathJax output, where TeX delimiters must not survive.
TEXT_OUTSIDE_CODE = """() => {
    const main = document.querySelector('main') || document.body;
    const copy = main.cloneNode(true);
    copy.querySelectorAll('pre, code, script, style, mjx-container, mjx-assistive-mml, .MathJax')
        .forEach(el => el.remove());
    return copy.textContent;
}"""
# How many formulas MathJax typeset, once it has finished (0 if it never started).
MATHJAX_RENDERED = """async () => {
    for (let waited = 0; !(window.MathJax && MathJax.startup && MathJax.startup.promise); waited += 100) {
        if (waited > 10000) return 0;
        await new Promise(resolve => setTimeout(resolve, 100));
    }
    await MathJax.startup.promise;
    return document.querySelectorAll('mjx-container').length;
}"""
LOAD_ALL_IMAGES = """async () => {
    const images = [...document.images];
    images.forEach(img => { img.loading = 'eager'; });
    await Promise.all(images.map(img => img.decode().catch(() => null)));
    return images.map(img => ({src: img.getAttribute('src'),
                               ok: img.complete && img.naturalWidth > 0}));
}"""


def site_pages(site_dir: Path) -> list[str]:
    """Every HTML page of the site, relative to its root, static assets excluded."""
    pages = (p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html"))
    return sorted(p for p in pages if not p.startswith(("_static/", "_sources/")))


def check_page(page, url: str) -> list[str]:
    """Problems found on one page (empty when it is self-contained and complete)."""
    failed = []

    def on_response(response):
        if response.status >= 400:
            failed.append(f"{response.status} {response.url}")

    page.on("response", on_response)
    external_before = len(page.external_requests)
    page.goto(url, wait_until="networkidle")
    problems = [f"tried another host: {u}" for u in page.external_requests[external_before:]]
    problems += [f"image did not load: {i['src']}" for i in page.evaluate(LOAD_ALL_IMAGES) if not i["ok"]]
    formulas = page.locator(MATH_SELECTOR).count()
    if formulas:
        rendered = page.evaluate(MATHJAX_RENDERED)
        if rendered < formulas:
            problems.append(f"MathJax rendered {rendered} of {formulas} formulas")
    text = page.evaluate(TEXT_OUTSIDE_CODE)
    problems += [f"raw TeX delimiter {d!r} left in the text" for d in ("$$", "\\(", "\\[") if d in text]
    page.goto("about:blank")  # deliver this page's late events before moving on
    page.remove_listener("response", on_response)
    return problems + [f"failed request: {f}" for f in failed]


def test_every_toc_page_was_built(site_dir):
    missing = [p for p in toc.pages() if not (site_dir / p).is_file()]
    assert toc.pages() and missing == []


def test_every_page_is_self_contained(page, site_dir, site_url):
    pages = site_pages(site_dir)
    assert set(toc.pages()) <= set(pages)
    problems = {p: check_page(page, f"{site_url}/{p}") for p in pages}
    problems = {p: found for p, found in problems.items() if found}
    assert problems == {}, "\n".join(f"{p}: {f}" for p, found in problems.items() for f in found)


def test_math_pages_are_checked(page, site_dir, site_url):
    """The math check above is not vacuous: some page has math, and MathJax ran on it."""
    with_math = [p for p in toc.pages() if 'class="math' in (site_dir / p).read_text()]
    assert with_math, "no page has math: the MathJax check would never run"
    page.goto(f"{site_url}/{with_math[0]}", wait_until="networkidle")
    assert page.evaluate(MATHJAX_RENDERED) > 0
    assert page.external_requests == []
