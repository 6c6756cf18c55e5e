"""What one page load costs and shows, recorded in headless Chromium: for the budget tests and ``make bench``.

A page is loaded through :class:`tools.pages_server.PagesServer` (gzip, as
GitHub Pages serves it) in a page opened by :func:`tools.chromium.open_page`
(other hosts blocked and recorded), at a phone's viewport by default, and
:func:`visit` returns a :class:`Visit`: the bytes the server sent until the
network was idle (before any interaction), console errors, the layout shift,
the state of the page's math, the scripts requested, and how many elements the
browser rendered (those outside the ``content-visibility: auto`` parts it
skipped, and not hidden). :func:`axe` runs
axe-core (``node_modules/axe-core``, pinned in ``package.json``) on the page.

Nothing here times anything: durations belong to ``make bench`` (Lighthouse).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tools import ROOT, chromium

#: Lighthouse's mobile preset (a Moto G Power): the reader the budgets are for.
PHONE = {"viewport": {"width": 412, "height": 823}, "device_scale_factor": 1.75, "is_mobile": True,
         "has_touch": True}
DESKTOP = {"viewport": {"width": 1350, "height": 940}}
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: The article: what the book's sources and extensions write (the rest is the theme's).
CONTENT = "article.bd-article"
SETTLE_MS = 500  # after the network is idle: late layout (fonts, deferred scripts)

# Every layout shift not caused by input, buffered from the start of the navigation.
LAYOUT_SHIFTS = """
window.__shifts = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) if (!e.hadRecentInput) {
  window.__shifts.push({value: e.value, time: e.startTime, nodes: (e.sources || []).map(s =>
    s.node && s.node.outerHTML ? s.node.outerHTML.slice(0, 140) : String(s.node && s.node.nodeName))});
}}).observe({type: 'layout-shift', buffered: true});
"""
# The page's math: typeset by KaTeX at build time, nothing left to typeset, nothing focusable.
MATH_STATE = r"""() => {
  const article = document.querySelector('article') || document.body;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {acceptNode: n =>
    n.parentElement.closest('pre, code, script, style, .katex, .highlight') ? NodeFilter.FILTER_REJECT
                                                                           : NodeFilter.FILTER_ACCEPT});
  const raw = [];
  while (walker.nextNode()) {
    const text = walker.currentNode.textContent;
    if (/\\[a-zA-Z]{2,}|\$\$|\\\(|\\\[|\$[^$\s][^$]*\$/.test(text)) raw.push(text.trim().slice(0, 80));
  }
  const formulas = [...document.querySelectorAll('.math')];
  return {
    formulas: formulas.length,
    untypeset: formulas.filter(e => !e.querySelector('.katex')).map(e => e.textContent.slice(0, 80)),
    errors: [...document.querySelectorAll('.katex-error, mjx-merror, merror')].map(e => e.textContent.slice(0, 80)),
    without_mathml: formulas.filter(e => e.querySelector('.katex') && !e.querySelector('.katex-mathml math')).length,
    html_not_hidden: [...document.querySelectorAll('.katex-html')]
      .filter(e => e.getAttribute('aria-hidden') !== 'true').length,
    focusable: [...document.querySelectorAll('.math *')].filter(e => e.tabIndex >= 0).length,
    runtime: ['MathJax', 'katex', 'renderMathInElement'].filter(name => name in window),
    raw_tex: raw,
  };
}"""


# Elements of the body the browser renders: not display: none, not in a part that content-visibility skips.
RENDERED = ("() => [...document.body.querySelectorAll('*')]"
            ".filter(e => e.checkVisibility({contentVisibilityAuto: true})).length")


@dataclasses.dataclass
class Visit:
    """One page load, as the server and the browser saw it."""

    path: str
    sent: dict[str, int]  # URL path -> body bytes the server sent
    errors: list[str]  # console errors and uncaught exceptions
    external: list[str]  # requests to other hosts (blocked)
    failed: list[str]  # responses >= 400 from the site
    scripts: list[str]  # URLs of the scripts requested
    shifts: list[dict]  # layout shifts: value, time, nodes
    math: dict  # MATH_STATE
    rendered: int  # RENDERED, after the load, before any scroll

    @property
    def bytes(self) -> int:
        return sum(self.sent.values())

    @property
    def cls(self) -> float:
        return sum(s["value"] for s in self.shifts)


def open_page(browser, server, *, http_cache: bool = False, **context_kw):
    """A page at a phone's viewport (or ``context_kw``) that may reach only ``server``, recording shifts.

    Playwright's request routing, which blocks other hosts, turns the browser's HTTP cache off. With
    ``http_cache=True`` (a reader going on to a second page) nothing is routed: requests to other
    hosts are only recorded (``page.external_requests``), and fail in the resolver (``chromium.FLAGS``).
    """
    if not http_cache:
        page = chromium.open_page(browser, {server.url}, **(context_kw or PHONE))
    else:
        page = browser.new_context(**(context_kw or PHONE)).new_page()
        page.external_requests = []
        page.on("request", lambda r: r.url.startswith((server.url + "/", "data:", "blob:"))
                or page.external_requests.append(r.url))
    page.add_init_script(LAYOUT_SHIFTS)
    return page


def visit(page, server, path: str) -> Visit:
    """Load ``path`` (with its ``#fragment``, if any) in ``page`` and record what it cost and showed.

    The page's context keeps its cache: a second visit in the same page is a
    reader going on to the next chapter.
    """
    errors, failed, scripts = [], [], []
    listeners = {
        "console": lambda m: m.type == "error" and errors.append(f"{m.text} ({m.location.get('url', '')})"),
        "pageerror": lambda e: errors.append(f"uncaught: {e}"),
        "response": lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"),
        "request": lambda r: r.resource_type == "script" and scripts.append(r.url),
    }
    for event, listener in listeners.items():
        page.on(event, listener)
    external_before = len(page.external_requests)
    server.take_sent()
    page.goto(f"{server.url}/{path}", wait_until="load")
    page.wait_for_load_state("networkidle")
    page.evaluate("document.fonts.ready.then(() => 0)")
    page.wait_for_timeout(SETTLE_MS)
    result = Visit(path=path, sent=server.take_sent(), errors=errors,
                   external=page.external_requests[external_before:], failed=failed, scripts=scripts,
                   shifts=page.evaluate("window.__shifts"), math=page.evaluate(MATH_STATE),
                   rendered=page.evaluate(RENDERED))
    for event, listener in listeners.items():
        page.remove_listener(event, listener)
    return result


#: The class of ``<html>`` with which ``lean-pages.css`` renders every part (a page opened at an anchor has it).
EVERY_PART_RENDERED = "lean-at-anchor"


def axe(page, tags=WCAG_21_AA, rules: list[str] | None = None, include: list[str] | None = None) -> list[dict]:
    """axe-core's violations on the page, every part rendered: ``{id, help, nodes: [{html, target, in_content}]}``.

    ``tags`` selects the rules (WCAG 2.1 A and AA), or ``rules`` names them; ``include`` (CSS selectors)
    limits the audit to those elements (else the whole document).

    The parts far below the view are rendered as the reader nears them (``content-visibility: auto``); axe
    measures colours on what is rendered, so a link in a part not yet rendered gets a contrast it does not have.
    The audit renders every part first, as the reader sees each one when it is reached.
    """
    page.evaluate("cls => new Promise(done => { document.documentElement.classList.add(cls);"
                  " requestAnimationFrame(() => requestAnimationFrame(done)); })", EVERY_PART_RENDERED)
    page.add_script_tag(path=str(AXE))
    run_only = {"type": "rule", "values": rules} if rules else {"type": "tag", "values": list(tags)}
    result = page.evaluate("([context, runOnly]) => axe.run(context || document, {runOnly,"
                           " resultTypes: ['violations']})", [{"include": include} if include else None, run_only])
    found = []
    for violation in result["violations"]:
        nodes = [{"html": n["html"][:200], "target": n["target"],
                  "in_content": page.evaluate(
                      "([sel, content]) => { const el = document.querySelector(sel);"
                      " return !!(el && el.closest(content)); }", [str(n["target"][-1]), CONTENT])}
                 for n in violation["nodes"]]
        found.append({"id": violation["id"], "help": violation["help"], "nodes": nodes})
    return found


def site_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, relative to its root (static assets and sources excluded)."""
    pages = (p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    return sorted(p for p in pages if not p.startswith(("_static/", "_sources/", "_images/")))
