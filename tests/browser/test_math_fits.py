"""Every formula is seen whole, on a phone (390 px, device scale factor 2) and on a desktop (1440 px).

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
solution, a tinted box), in light and in dark mode.

An inline formula cannot scroll: one wider than its box is cut off. Every
part of every page of ``_toc.yml`` is laid out (``content-visibility``
forced to ``visible``) and every ``<details>`` opened (solutions, hidden
cells), so that no formula is skipped for being far below the view or
folded away. Formulas printed by code (sympy's ``Math``) are display
formulas like the others. A formula too wide for a phone is best broken
into aligned lines; scrolling with a cue is for one with no good break.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops

from tools import page_audit, toc

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}}}
#: Every part laid out; and scrolling instant (the theme scrolls smoothly: a screenshot taken while it
#: moves shows the page half-way).
EVERYTHING_LAID_OUT = ("* { content-visibility: visible !important; }"
                       " html { scroll-behavior: auto !important; }")
#: Sub-pixel rounding of the layout, not content.
EDGE_PX = 1
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


def open_laid_out(browser, pages_server, path: str, view: str, scheme: str = "light"):
    """``path`` opened at ``view``, every part laid out and every ``<details>`` open."""
    page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **VIEWS[view])
    page.goto(f"{pages_server.url}/{path}", wait_until="load")
    page.add_style_tag(content=EVERYTHING_LAID_OUT)
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.evaluate("document.fonts.ready.then(() => 0)")
    return page


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


def problems_of(page) -> list[str]:
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


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("view", VIEWS)
def test_every_formula_fits_or_scrolls_with_a_cue(browser, pages_server, site_dir, view, scheme):
    problems = {}
    for path in toc.pages():
        page = open_laid_out(browser, pages_server, path, view, scheme)
        try:
            if found := problems_of(page):
                problems[path] = found
        finally:
            page.context.close()
    assert problems == {}, "\n".join(f"{path}: {text}" for path, found in problems.items() for text in found)


WIDENED = """() => {  // the first display formula, alone, made wider than any column: its content four times over
  document.querySelectorAll('.katex-display').forEach((d, k) => { if (k) d.remove(); });
  document.querySelectorAll('span.math').forEach(s => s.remove());
  const html = document.querySelector('.katex-display .katex-html');
  const parts = [...html.children];
  for (let k = 0; k < 3; k++) parts.forEach(p => html.append(p.cloneNode(true)));
  return html.scrollWidth;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
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
            found[name] = problems_of(page)
        finally:
            page.context.close()
    assert found["as built"] == []
    assert len(found["no cue"]) == 1 and found["no cue"][0].startswith("scrolls without a cue"), found["no cue"]
    assert len(found["clipped"]) == 1 and found["clipped"][0].startswith("cut off"), found["clipped"]
