"""Every page as a phone (390 px wide) and a desktop (1440 px) show it, in light and dark mode.

For each page of the built site and each of the four views, a screenshot of
the first screen is written under pytest's temporary directory (its path is
printed: look at them), and the page, with every part rendered (the parts
``content-visibility: auto`` leaves for later included), is checked for:

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

Then the first screen of a desktop page has one search field, and the search
dialog still opens with its keyboard shortcut and searches.
"""

from __future__ import annotations

import contextlib
import re

import pytest

from tools import page_audit

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}}}
#: How far past the viewport's edge a box may reach: sub-pixel rounding of the layout, not content.
EDGE_PX = 1
REDIRECT = re.compile(r'<meta http-equiv="refresh" content="0; url=([^"]+)">')
EVERYTHING_RENDERED = "* { content-visibility: visible !important; }"

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


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots: {folder}")
    return folder


def layout_problems(page, width: int) -> list[str]:
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


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("view", VIEWS)
def test_no_page_overflows_the_viewport(browser, pages_server, site_dir, screenshots, view, scheme):
    pages = page_audit.site_pages(site_dir)
    problems = {}
    for path in pages:
        page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **VIEWS[view])
        try:
            with contextlib.ExitStack() as stack:
                if redirect := REDIRECT.search((site_dir / path).read_text()):  # the root page sends the reader on
                    stack.enter_context(page.expect_navigation(url=f"{pages_server.url}/{redirect[1]}"))
                page.goto(f"{pages_server.url}/{path}", wait_until="load")
            page.evaluate("document.fonts.ready.then(() => 0)")
            page.screenshot(path=screenshots / f"{path.replace('/', '_')}-{view}-{scheme}.png")
            found = layout_problems(page, VIEWS[view]["viewport"]["width"])
        finally:
            page.context.close()
        if found:
            problems[path] = found
    assert len(list(screenshots.glob(f"*-{view}-{scheme}.png"))) == len(pages)
    assert problems == {}, "\n".join(f"{path}: {text}" for path, found in problems.items() for text in found)


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
        found = layout_problems(page, VIEWS["phone"]["viewport"]["width"])
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
