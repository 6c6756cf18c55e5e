"""Every page of the built site works with every other host blocked.

For each HTML page of the site (not only the chapters: also the landing
page, search and the index), headless Chromium loads it through the local
server with requests to other hosts blocked, then checks that

* no request to another host was attempted (fonts, scripts, ...);
* no request to the site itself failed (a missing font or script is a 404);
* every image loaded (``complete`` and a non-zero natural width);
* every formula arrived typeset (KaTeX's HTML and MathML, written when the
  book was built: ``_ext/katex_math``), none is a KaTeX error, and no script
  typesets math in the page; and on every page no raw TeX delimiter (``$$``,
  ``\\(``, ``\\[``) is left in the text outside code (math that was never
  parsed or never typeset).

The launch button is never pressed here: Binder, the one allowed other host,
is only contacted after a reader presses it (see ``test_thebe.py``).
"""

from __future__ import annotations

from pathlib import Path

from tools import toc

MATH_SELECTOR = "div.math, span.math"
# Text outside code and typeset math, where TeX delimiters must not survive.
TEXT_OUTSIDE_CODE = """() => {
    const main = document.querySelector('main') || document.body;
    const copy = main.cloneNode(true);
    copy.querySelectorAll('pre, code, script, style, .katex')
        .forEach(el => el.remove());
    return copy.textContent;
}"""
# Formulas that did not arrive typeset (no KaTeX HTML with MathML, or a KaTeX error), and math scripts.
UNTYPESET = """() => ({
    untypeset: [...document.querySelectorAll('div.math, span.math')]
        .filter(el => !el.querySelector('.katex .katex-mathml math') || el.querySelector('.katex-error'))
        .map(el => el.textContent.slice(0, 80)),
    typesetters: ['MathJax', 'katex', 'renderMathInElement'].filter(name => name in window),
})"""
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
    math = page.evaluate(UNTYPESET)
    problems += [f"formula not typeset at build time: {tex!r}" for tex in math["untypeset"]]
    problems += [f"a math typesetting script ran: {name}" for name in math["typesetters"]]
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
    """The math check above is not vacuous: pages have formulas, and they arrive typeset."""
    with_math = [p for p in toc.pages() if 'class="math' in (site_dir / p).read_text()]
    assert with_math, "no page has math: the math check would never run"
    page.goto(f"{site_url}/{with_math[0]}", wait_until="networkidle")
    assert page.locator(MATH_SELECTOR).count() > 0
    assert page.locator(f"{MATH_SELECTOR} .katex .katex-mathml math").count() == page.locator(MATH_SELECTOR).count()
    assert page.external_requests == []
