"""Every explorer of the book keeps its main picture in view while a slider is on screen.

An explorer's sliders move a picture; a reader who drags one should see it
move. The explorers share one layout (``stage()`` in
``_ext/attention_explorer/static/attention_explorer.js``, the classes
``.ae-stage``, ``.ae-main`` and ``.ae-side``; see the module docstring of
``_ext/attention_explorer``): the main picture beside the controls on a
desktop, above them on a phone, and sticky below the theme's sticky header.

For every page of the site, at a phone's 390 x 844 (device scale factor 2,
touch) and a desktop's 1440 x 900: every slider of the page must belong to
an explorer that uses the layout, and, for every explorer, the page is
scrolled through it in steps of 16 px; wherever a slider is wholly on screen
and not covered (the point at its centre is the slider), at least
:data:`MIN_IN_VIEW` of the explorer's main picture must be in view (below the
sticky header, within the window). Each slider must be so at least once.
The keyboard too: a slider focused from far above or far below the explorer
is scrolled into view uncovered, with the picture in view. Screenshots land
in /tmp/explorer-layout-*.png.
"""

from __future__ import annotations

import pytest

from tools import page_audit
from tools.chromium import open_page

MIN_IN_VIEW = 0.5
VIEWPORTS = {
    "phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
              "has_touch": True},
    "desktop": {"viewport": {"width": 1440, "height": 900}},
}
STEP_PX = 16
REDIRECT = '<meta http-equiv="refresh"'

#: What the reader sees of an element: its part within the window, below the theme's sticky header.
#: Every section is laid out at once (content-visibility: visible): sections laid out as they come near
#: the view (lean_pages) change height on the way, which made the page jump past a whole explorer in
#: one 16-px step on chapter 12; that jump is the lazy rendering's, not the explorer layout's this file tests.
GEOMETRY = """
if (!document.getElementById('layout-test-visible')) {
  const style = document.createElement('style');
  style.id = 'layout-test-visible';
  style.textContent = '* { content-visibility: visible !important; }';
  document.head.appendChild(style);
}
const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
const viewTop = () => {
  const header = document.querySelector('.bd-header-article');
  return header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
};
const inView = (el) => {
  const r = el.getBoundingClientRect();
  const w = Math.max(0, Math.min(r.right, innerWidth) - Math.max(r.left, 0));
  const h = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, viewTop()));
  return r.width * r.height > 0 ? (w * h) / (r.width * r.height) : 0;
};
const onScreen = (slider) => {
  const r = slider.getBoundingClientRect();
  if (r.top < viewTop() || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) return false;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit === slider || slider.contains(hit);
};
const label = (slider) => (slider.labels && slider.labels[0] ? slider.labels[0].textContent : slider.id);
"""

#: Sliders of the page, and those outside an explorer's stage or in a stage without a main picture.
SLIDERS = """() => {
  const sliders = [...document.querySelectorAll('input[type=range]')];
  const stray = sliders.filter((s) => !s.closest('.ae-stage') || !s.closest('.ae-stage').querySelector('.ae-main'))
    .map((s) => s.id || s.outerHTML.slice(0, 80));
  const explorers = [...document.querySelectorAll('[data-attention-explorer]')];
  const without = explorers.filter((e) => e.querySelectorAll('.ae-stage').length !== 1).map((e) => e.id);
  return {count: sliders.length, stages: document.querySelectorAll('.ae-stage').length, stray, without};
}"""

#: Scroll through stage ``index``: for each slider, the least fraction of the main picture in view
#: while the slider is on screen, where that was (the slider's top in the window), and how often.
SWEEP = GEOMETRY + """
return (async ([index, step]) => {
  const stage = document.querySelectorAll('.ae-stage')[index];
  const main = stage.querySelector('.ae-main');
  const sliders = [...stage.querySelectorAll('input[type=range]')];
  const found = sliders.map((s) => ({slider: label(s), least: 1, at: null, seen: 0}));
  // The sections above are laid out as they come near (content-visibility: auto), which moves the stage:
  // place its top at the window's bottom again until it stays there, so that the sweep starts above it.
  for (let k = 0; k < 10 && Math.abs(stage.getBoundingClientRect().top - innerHeight) > 1; k++) {
    window.scrollBy(0, stage.getBoundingClientRect().top - innerHeight);
    await frame();
  }
  for (let k = 0; k < 2000 && stage.getBoundingClientRect().bottom > viewTop(); k++) {
    sliders.forEach((s, i) => {
      if (!onScreen(s)) return;
      const fraction = inView(main);
      found[i].seen++;
      if (fraction < found[i].least) {
        found[i].least = fraction;
        found[i].at = Math.round(s.getBoundingClientRect().top);
      }
    });
    const before = scrollY;
    window.scrollBy(0, step);
    await frame();
    if (scrollY === before) break;  // the end of the page
  }
  return found;
})(arguments[0]);
"""

#: Focus each slider of stage ``index`` from far above and far below the stage, as Tab and Shift+Tab
#: reach it (the browser scrolls it into view): is it on screen, and how much of the picture is in view?
FOCUS = GEOMETRY + """
return (async ([index]) => {
  const stage = document.querySelectorAll('.ae-stage')[index];
  const main = stage.querySelector('.ae-main');
  const out = [];
  for (const slider of stage.querySelectorAll('input[type=range]')) {
    for (const from of ['above', 'below']) {
      const r = stage.getBoundingClientRect();
      window.scrollBy(0, from === 'above' ? r.top - 3 * innerHeight : r.bottom + 2 * innerHeight);
      await frame();
      slider.focus();
      await frame();
      // Sections laid out as they came near (content-visibility: auto) may have moved it: as a second
      // Tab would, focus it again, now that the page around it has its real size.
      slider.blur();
      slider.focus();
      await frame();
      out.push({slider: label(slider), from, onScreen: onScreen(slider), inView: inView(main)});
      slider.blur();
    }
  }
  return out;
})(arguments[0]);
"""


def run(page, script: str, args):
    """``script`` (a function body that returns a promise, reading ``arguments[0]``) called with ``args``."""
    return page.evaluate(f"(args) => (function () {{ {script} }}).call(null, args)", args)


@pytest.fixture(scope="module")
def pages_with_sliders(browser, pages_server, site_dir) -> dict[str, dict]:
    """{page: what :data:`SLIDERS` found} for every page of the site that has a slider, opened on a phone."""
    found = {}
    for path in page_audit.site_pages(site_dir):
        if REDIRECT in (site_dir / path).read_text():
            continue  # the root page only sends the browser to the book's first page
        page = open_page(browser, {pages_server.url}, **VIEWPORTS["phone"])
        try:
            page.goto(f"{pages_server.url}/{path}", wait_until="load")
            sliders = page.evaluate(SLIDERS)
        finally:
            page.context.close()
        if sliders["count"] or sliders["without"]:
            found[path] = sliders
    return found


def test_every_slider_is_in_an_explorer_with_the_layout(pages_with_sliders):
    assert {"book/smoothing.html", "book/many-heads.html", "book/in-context.html"} <= set(pages_with_sliders)
    problems = {path: found for path, found in pages_with_sliders.items() if found["stray"] or found["without"]}
    assert problems == {}, "sliders outside an .ae-stage with an .ae-main, or explorers without one stage"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_main_picture_is_in_view_while_a_slider_is_on_screen(browser, pages_server, pages_with_sliders, viewport):
    short, unseen, measured = [], [], 0
    for path, sliders in pages_with_sliders.items():
        page = open_page(browser, {pages_server.url}, **VIEWPORTS[viewport])
        try:
            page.goto(f"{pages_server.url}/{path}", wait_until="load")
            for index in range(sliders["stages"]):
                for found in run(page, SWEEP, [index, STEP_PX]):
                    measured += 1
                    where = f"{path} explorer {index}, {found['slider']!r}"
                    if not found["seen"]:
                        unseen.append(where)
                    elif found["least"] < MIN_IN_VIEW:
                        short.append(f"{where}: {found['least']:.0%} of the picture in view "
                                     f"with the slider at y = {found['at']} px")
                page.locator(".ae-stage").nth(index).screenshot(
                    path=f"/tmp/explorer-layout-{viewport}-{path.replace('/', '-')}-{index}.png")
        finally:
            page.context.close()
    assert measured >= 7, "the sweep saw fewer sliders than the smoothing explorer and the layer hold"
    assert unseen == [], f"sliders never wholly on screen and uncovered: {unseen}"
    assert short == [], "\n".join(short)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_slider_the_keyboard_reaches_is_on_screen_beside_its_picture(
        browser, pages_server, pages_with_sliders, viewport):
    problems, checked = [], 0
    for path, sliders in pages_with_sliders.items():
        page = open_page(browser, {pages_server.url}, **VIEWPORTS[viewport])
        try:
            page.goto(f"{pages_server.url}/{path}", wait_until="load")
            for index in range(sliders["stages"]):
                for found in run(page, FOCUS, [index]):
                    checked += 1
                    if not found["onScreen"] or found["inView"] < MIN_IN_VIEW:
                        problems.append(f"{path} explorer {index}, {found['slider']!r} focused from {found['from']}: "
                                        f"on screen {found['onScreen']}, {found['inView']:.0%} of the picture in view")
        finally:
            page.context.close()
    assert checked >= 14, "fewer sliders focused than the smoothing explorer and the layer hold, twice"
    assert problems == [], "\n".join(problems)
