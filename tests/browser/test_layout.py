"""Every page as a phone (390 px wide) and a desktop (1440 px) lay it out, light and dark: nothing past the
viewport, and every formula seen whole.

Each page of the built site is loaded once per view (phone or desktop, light
or dark mode), a screenshot of its first screen is written under pytest's
temporary directory (its path is printed: look at them), and, with every part
rendered (the parts ``content-visibility: auto`` leaves for later included),
two checks read the same laid-out page.

**Nothing past the viewport** (:func:`layout_problems`):

* horizontal overflow: the page is wider than the viewport
  (``scrollWidth > clientWidth`` of the root), so that it scrolls sideways;
* text or a control outside the viewport: a rendered text node, or a rendered
  link, button, field or ``summary``, whose box reaches more than
  :data:`EDGE_PX` past the left or right edge of the viewport, unless it is
  inside a scroll container (an ancestor below ``<body>`` with ``overflow-x``
  ``auto`` or ``scroll``) that is itself inside the viewport: a code block or
  a wide table in its own scroll box is fine, its text is reached by
  scrolling that box. Text cut off by an ancestor that hides its overflow is
  outside all the same (it cannot be reached). Boxes of 1 px or less, and
  what is inside a box of 1 px or less that hides its overflow (text for
  screen readers only, such as KaTeX's MathML), are not looked at;
* parts that clip their content: ``content-visibility: auto`` also clips
  what overflows the part's box (paint containment), so each such part must
  be as wide as its content.

**Every formula seen whole** (:func:`formula_problems`, on the pages of
``_toc.yml``, with every ``<details>`` opened too: solutions, hidden cells).
A display formula (KaTeX's ``.katex-display``) whose typeset content is wider
than the box it is seen through (the column, or any ancestor that hides its
overflow) is either

* cut off: no box between the formula and the one that clips it scrolls, so
  the end of the formula cannot be seen at all; a failure; or
* in a box that scrolls sideways (``overflow-x: auto``), which must show that
  it does: with the formula's glyphs hidden, the edge of the box beyond which
  more of the formula lies must look different from the same edge once the
  box is scrolled to that end (an edge shadow or a fade drawn by the box,
  whatever it is); a box that looks the same either way hides the rest of the
  formula without a cue, and fails.

A display formula seen whole has nothing drawn at its edges (glyphs hidden,
each edge is its background's colour): no cue where nothing is hidden, and
no cover of another colour than the box it sits in (an exercise, a
solution, a tinted box). An inline formula cannot scroll: one wider than its
box is cut off. Formulas printed by code (sympy's ``Math``) are display
formulas like the others. A formula too wide for a phone is best broken into
aligned lines; scrolling with a cue is for one with no good break.

Then the first screen of a desktop page has one search field, and the search
dialog still opens with its keyboard shortcut and searches.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from PIL import Image, ImageChops

from tools import page_audit, toc

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}}}
SCHEMES = ("light", "dark")
#: How far past the viewport's (or a box's) edge content may reach: sub-pixel rounding of the layout, not content.
EDGE_PX = 1
REDIRECT = re.compile(r'<meta http-equiv="refresh" content="0; url=([^"]+)">')
#: Every part rendered; and scrolling instant (the theme scrolls smoothly: a screenshot taken while it
#: moves shows the page half-way).
EVERYTHING_RENDERED = "* { content-visibility: visible !important; } html { scroll-behavior: auto !important; }"
OPEN_DETAILS = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"

OUT_OF_VIEW = """edge => {
  const width = document.documentElement.clientWidth;
  // The nearest ancestor (below the body) that scrolls horizontally: its content is reached there.
  const scroller = el => { for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX)) return e; } return null; };
  const describe = (el, rect) => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}`
    + `${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : ''}`
    + ` [${Math.round(rect.left)}, ${Math.round(rect.right)}]`
    + ` "${(el.innerText || el.value || '').trim().slice(0, 50)}"`;
  // Out of sight for a reason: inside a box of 1 px or less that hides its overflow (text for screen
  // readers only, such as KaTeX's MathML).
  const unseen = el => { for (let e = el; e && e !== document.body; e = e.parentElement) {
      const r = e.getBoundingClientRect();
      if (getComputedStyle(e).overflowX !== 'visible' && (r.width <= 1 || r.height <= 1)) return true; }
    return false; };
  const found = [];
  const check = (el, rect) => {
    if (rect.width <= 1 || rect.height <= 1) return;
    if (rect.left >= -edge && rect.right <= width + edge) return;
    if (unseen(el)) return;
    const box = scroller(el), outer = box && box.getBoundingClientRect();
    if (!box || outer.left < -edge || outer.right > width + edge) found.push(describe(el, rect));
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (walker.nextNode()) {
    const node = walker.currentNode, el = node.parentElement;
    if (!node.textContent.trim() || !el.checkVisibility({visibilityProperty: true})) continue;
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) check(el, rect);
  }
  for (const el of document.querySelectorAll('a[href], button, input, select, textarea, summary')) {
    if (el.checkVisibility({visibilityProperty: true})) check(el, el.getBoundingClientRect());
  }
  const clipping = [...document.querySelectorAll('article *')]
    .filter(el => getComputedStyle(el).contentVisibility === 'auto' || el.dataset.leanContentVisibility)
    .filter(el => el.scrollWidth > el.clientWidth + edge)
    .map(el => describe(el, el.getBoundingClientRect()) + ` content ${el.scrollWidth} px wide`);
  return {page_width: document.documentElement.scrollWidth, viewport: width, outside: found.slice(0, 10),
          outside_count: found.length, clipping: clipping.slice(0, 10)};
}"""
# The parts content-visibility: auto applies to, marked before the style above turns it off.
MARK_PARTS = """() => { for (const el of document.querySelectorAll('article *')) {
  if (getComputedStyle(el).contentVisibility === 'auto') el.dataset.leanContentVisibility = '1'; } }"""

#: The strip at a scroll box's edge that is compared, in CSS px: within its shadow.
STRIP_PX = 8
#: The strip at the edge of a formula seen whole that must be plain, in CSS px: as wide as a cover.
QUIET_STRIP_PX = 32
#: Least difference of one colour channel (of 255) between the two looks of an edge that counts as a cue.
CUE_CONTRAST = 24
#: Most spread of one colour channel (of 255) over the edge of a formula seen whole: its background only.
QUIET_SPREAD = 6
GLYPHS_HIDDEN = ".katex-html * { visibility: hidden !important; }"

#: Each formula: its TeX, how far its content reaches past what is seen, and the box that scrolls, if any.
FORMULAS = """([edge, article_selector]) => {
  const viewport = document.documentElement.clientWidth;
  const seen = el => {  // [left, right] of what clipping ancestors (and the viewport) let through
    let left = 0, right = viewport;
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      if (getComputedStyle(e).overflowX === 'visible') continue;
      const r = e.getBoundingClientRect();
      left = Math.max(left, r.left); right = Math.min(right, r.right);
    }
    return [left, right];
  };
  const extent = html => {
    let left = Infinity, right = -Infinity;
    for (const e of html.querySelectorAll(':scope > .base, :scope > .tag')) {
      const r = e.getBoundingClientRect();
      if (r.width > 0) { left = Math.min(left, r.left); right = Math.max(right, r.right); }
    }
    return [left, right];
  };
  const scroller = (el, stop) => {
    for (let e = el; e && e !== stop.parentElement; e = e.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + edge)
        return e;
    }
    return null;
  };
  const tex = el => (el.querySelector('annotation') || el).textContent.trim().replace(/\\s+/g, ' ').slice(0, 70);
  const found = [], whole = [];
  const look = (el, display) => {
    const html = el.querySelector('.katex-html');
    if (!html || !html.getClientRects().length) return;
    const [left, right] = extent(html);
    if (!(right > left)) return;
    // An inline formula is seen through its own box (span.math, at most as wide as its line, hides its
    // overflow): the table or cell around it may scroll, the formula cannot.
    const own = el.parentElement.getBoundingClientRect();
    const [seenLeft, seenRight] = display ? seen(html) : [own.left, own.right];
    const past = Math.max(seenLeft - left, right - seenRight);
    if (past <= edge) {
      if (display) { html.dataset.mathFitsWhole = String(whole.length); whole.push(tex(el)); }
      return;
    }
    // The box that scrolls: from the formula up to the outermost ancestor that clips it.
    let clipper = html;
    for (let e = html; e && e !== document.documentElement; e = e.parentElement)
      if (getComputedStyle(e).overflowX !== 'visible') clipper = e;
    const box = display ? scroller(html, clipper) : null;
    let id = null;
    if (box) { id = String(found.length); box.dataset.mathFitsBox = id; }
    found.push({tex: tex(el), display, width: Math.round(right - left), seen: Math.round(seenRight - seenLeft),
                box: id});
  };
  const article = document.querySelector(article_selector);
  article.querySelectorAll('.katex-display').forEach(el => look(el, true));
  article.querySelectorAll('span.math > .katex').forEach(el => look(el, false));
  return {found, whole};
}"""
SCROLL = """([id, where]) => new Promise(done => {
  const box = document.querySelector(`[data-math-fits-box="${id}"]`);
  box.scrollIntoView({block: 'center', inline: 'nearest'});
  box.scrollLeft = where === 'start' ? 0 : box.scrollWidth;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const r = box.getBoundingClientRect();
    done({x: r.left, y: r.top, width: r.width, height: r.height});
  }));
})"""

SEEN_WHOLE = """id => new Promise(done => {
  const box = document.querySelector(`[data-math-fits-whole="${id}"]`);
  box.scrollIntoView({block: 'center'});
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const r = box.getBoundingClientRect();
    done({x: r.left, y: r.top, width: r.width, height: r.height});
  }));
})"""


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots: {folder}")
    return folder


def open_laid_out(browser, pages_server, path: str, view: str, scheme: str = "light"):
    """``path`` opened at ``view``, every part rendered and every ``<details>`` open."""
    page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **VIEWS[view])
    page.goto(f"{pages_server.url}/{path}", wait_until="load")
    page.add_style_tag(content=EVERYTHING_RENDERED)
    page.evaluate(OPEN_DETAILS)
    page.evaluate("document.fonts.ready.then(() => 0)")
    return page


def layout_problems(page) -> list[str]:
    """What :data:`OUT_OF_VIEW` finds on the loaded ``page``, every part rendered, as sentences."""
    page.evaluate(MARK_PARTS)
    page.add_style_tag(content=EVERYTHING_RENDERED)
    page.evaluate("document.fonts.ready.then(() => 0)")
    found = page.evaluate(OUT_OF_VIEW, EDGE_PX)
    problems = []
    if found["page_width"] > found["viewport"]:
        problems.append(f"the page is {found['page_width']} px wide in a {found['viewport']} px viewport")
    if found["outside_count"]:
        problems.append(f"{found['outside_count']} boxes outside the viewport, e.g. {found['outside']}")
    problems += [f"a part clips its content: {text}" for text in found["clipping"]]
    return problems


def strip(page, rect: dict, side: str, width: float = STRIP_PX) -> Image.Image:
    """A screenshot of the ``width`` CSS px at the ``side`` edge of ``rect``."""
    width = min(width, rect["width"])
    x = rect["x"] if side == "left" else rect["x"] + rect["width"] - width
    clip = {"x": x, "y": rect["y"], "width": width, "height": rect["height"]}
    return Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")


def shows_more(page, box: str) -> bool:
    """Whether the scroll box ``box`` looks different at each edge while more of its formula lies beyond.

    The formula's glyphs are hidden (:data:`GLYPHS_HIDDEN`): what is left is what the box draws. At the
    start, the right edge (more lies to the right) is compared with the right edge at the end; at the
    end, the left edge with the left edge at the start.
    """
    start = page.evaluate(SCROLL, [box, "start"])
    right_open, left_closed = strip(page, start, "right"), strip(page, start, "left")
    end = page.evaluate(SCROLL, [box, "end"])
    right_closed, left_open = strip(page, end, "right"), strip(page, end, "left")
    contrast = [max(hi for _, hi in ImageChops.difference(a, b).getextrema())
                for a, b in ((right_open, right_closed), (left_open, left_closed))]
    return min(contrast) >= CUE_CONTRAST


def draws_at_its_edges(page, whole: str) -> bool:
    """Whether the box of a formula seen whole draws anything at its edges (glyphs hidden): a cue with
    nothing beyond it, or a cover whose colour is not the background's."""
    rect = page.evaluate(SEEN_WHOLE, whole)
    clip = {key: rect[key] for key in ("x", "y", "width", "height")}
    shot = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")
    edge = min(shot.width, round(QUIET_STRIP_PX * shot.width / rect["width"]))
    strips = (shot.crop((0, 0, edge, shot.height)), shot.crop((shot.width - edge, 0, shot.width, shot.height)))
    return max(hi - lo for part in strips for lo, hi in part.getextrema()) > QUIET_SPREAD


def formula_problems(page) -> list[str]:
    """The formulas of the loaded ``page`` cut off, scrolling without a cue, or with a cue but nothing hidden."""
    formulas = page.evaluate(FORMULAS, [EDGE_PX, page_audit.CONTENT])
    found, whole = formulas["found"], formulas["whole"]
    problems = [f"cut off ({f['width']} px in {f['seen']} px): {f['tex']}" for f in found if f["box"] is None]
    page.add_style_tag(content=GLYPHS_HIDDEN)
    problems += [f"scrolls without a cue ({f['width']} px in {f['seen']} px): {f['tex']}"
                 for f in found if f["box"] is not None and not shows_more(page, f["box"])]
    problems += [f"seen whole but drawn on at an edge: {tex}"
                 for k, tex in enumerate(whole) if draws_at_its_edges(page, str(k))]
    return problems


@pytest.fixture(scope="module", params=[(view, scheme) for view in VIEWS for scheme in SCHEMES],
                ids=lambda p: "-".join(p))
def laid_out(request, browser, pages_server, site_dir, screenshots) -> dict:
    """Every page loaded once in one view: ``{"layout": {page: problems}, "formulas": {page: problems}, ...}``.

    The layout is checked first, as the page opens; then, on the pages of the table of contents, every
    ``<details>`` is opened and the formulas are checked.
    """
    view, scheme = request.param
    pages, chapters = page_audit.site_pages(site_dir), set(toc.pages())
    found = {"view": view, "scheme": scheme, "pages": pages, "layout": {}, "formulas": {}, "formula_pages": 0}
    for path in pages:
        page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **VIEWS[view])
        try:
            with contextlib.ExitStack() as stack:
                if redirect := REDIRECT.search((site_dir / path).read_text()):  # the root page sends the reader on
                    stack.enter_context(page.expect_navigation(url=f"{pages_server.url}/{redirect[1]}"))
                page.goto(f"{pages_server.url}/{path}", wait_until="load")
            page.evaluate("document.fonts.ready.then(() => 0)")
            page.screenshot(path=screenshots / f"{path.replace('/', '_')}-{view}-{scheme}.png")
            if layout := layout_problems(page):
                found["layout"][path] = layout
            if path in chapters:
                page.evaluate(OPEN_DETAILS)
                page.evaluate("document.fonts.ready.then(() => 0)")
                found["formula_pages"] += 1
                if formulas := formula_problems(page):
                    found["formulas"][path] = formulas
        finally:
            page.context.close()
    assert chapters <= set(pages), "a page of the table of contents was not built"
    return found


def report(problems: dict[str, list]) -> str:
    return "\n".join(f"{path}: {text}" for path, found in problems.items() for text in found)


def test_no_page_overflows_the_viewport(laid_out, screenshots):
    view, scheme = laid_out["view"], laid_out["scheme"]
    assert len(list(screenshots.glob(f"*-{view}-{scheme}.png"))) == len(laid_out["pages"])
    assert laid_out["layout"] == {}, report(laid_out["layout"])


def test_every_formula_fits_or_scrolls_with_a_cue(laid_out):
    assert laid_out["formula_pages"] == len(toc.pages())
    assert laid_out["formulas"] == {}, report(laid_out["formulas"])


def test_the_check_sees_a_line_that_runs_off_the_page(browser, pages_server):
    """The check above fails on what it is for: a code block made wider than a phone, unclipped."""
    page = page_audit.open_page(browser, pages_server, **VIEWS["phone"])
    try:
        page.goto(f"{pages_server.url}/book/attention.html", wait_until="load")
        page.add_style_tag(content="div.highlight pre { overflow: visible !important; white-space: pre; }"
                                   " .bd-article * { overflow: visible !important; max-width: none !important; }")
        page.evaluate("""() => { const pre = document.querySelector('div.highlight pre');
          pre.closest('details')?.setAttribute('open', '');
          pre.textContent = 'x'.repeat(200); }""")
        found = layout_problems(page)
    finally:
        page.context.close()
    assert any("outside the viewport" in text for text in found), found


SEARCH_FIELDS = "() => [...document.querySelectorAll('.search-button-field')].filter(e => e.checkVisibility()).length"


def test_a_desktop_page_has_one_search_field_and_search_still_works(browser, pages_server):
    page = page_audit.open_page(browser, pages_server, **VIEWS["desktop"])
    try:
        page.goto(f"{pages_server.url}/book/attention.html", wait_until="load")
        fields = page.evaluate(SEARCH_FIELDS)
        page.keyboard.press("Control+k")
        dialog = page.locator("#pst-search-dialog")
        dialog.wait_for(state="visible", timeout=5000)
        page.keyboard.type("softmax")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.locator("#search-results li").first.wait_for(timeout=15000)
        results = page.locator("#search-results li").count()
    finally:
        page.context.close()
    assert fields == 1
    assert results > 0


WIDENED = """() => {  // the first display formula, alone, made wider than any column: its content four times over
  document.querySelectorAll('.katex-display').forEach((d, k) => { if (k) d.remove(); });
  document.querySelectorAll('span.math').forEach(s => s.remove());
  const html = document.querySelector('.katex-display .katex-html');
  const parts = [...html.children];
  for (let k = 0; k < 3; k++) parts.forEach(p => html.append(p.cloneNode(true)));
  return html.scrollWidth;
}"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_wide_formula_scrolls_with_a_cue_that_the_check_sees(browser, pages_server, scheme):
    """The check fails on what it is for: a formula cut off, and one that scrolls without a cue.

    The first formula of chapter 2, alone on the page, is made four times as wide as it is: the book's
    stylesheets let it scroll with a cue (passes, in light and dark mode); without the cue (no background drawn) it
    scrolls unannounced, and with the box's overflow hidden it is cut off.
    """
    variants = {"as built": "", "no cue": ".katex-html { background: none !important; }",
                "clipped": ".katex-html { overflow: hidden !important; }"}
    found = {}
    for name, style in variants.items():
        page = open_laid_out(browser, pages_server, "book/attention.html", "phone", scheme)
        try:
            assert page.evaluate(WIDENED) > VIEWS["phone"]["viewport"]["width"]
            if style:
                page.add_style_tag(content=style)
            found[name] = formula_problems(page)
        finally:
            page.context.close()
    assert found["as built"] == []
    assert len(found["no cue"]) == 1 and found["no cue"][0].startswith("scrolls without a cue"), found["no cue"]
    assert len(found["clipped"]) == 1 and found["clipped"][0].startswith("cut off"), found["clipped"]
