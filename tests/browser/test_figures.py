"""Every figure of the built book, as a 390-px phone and a 1440-px desktop show it: text big enough, pixels enough.

For each page of the table of contents, at 390 x 844 and at 1440 x 900, both
at a device pixel ratio of 2, with every part rendered
(``content-visibility`` off), each ``<img>`` of the article that shows a PNG
of the site is measured as laid out: the CSS px it is shown at. Its PNG
(read from the built site) says the figure's size in inches and the size in
points of the smallest text drawn in it (``selfattention.figures._style``'s
text chunks). Text of ``f`` points in a figure ``w`` inches wide shown ``s``
CSS px wide is ``f / 72 * s / w`` CSS px tall; the test fails when that is
below :data:`MIN_TEXT_PX` (9 on the phone, 11 on the desktop), when a PNG
does not say its size and smallest text (it was not rendered by the book's
style, so nothing is known of its text), and when it holds fewer than two
pixels per CSS px shown (blurred at a device pixel ratio of 2). The
explorers' static pictures are inside ``<noscript>``: they are measured on
pages loaded with JavaScript off.

The sizes the package records are checked against the figures in
``tests/unit/test_figure_style.py`` (what the renderer draws) and
``tests/unit/test_figure_layouts.py`` (every figure function).
"""

from __future__ import annotations

import io
import posixpath
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image

from tools import page_audit, toc

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}, "device_scale_factor": 2}}
#: The least height of a figure's text, in CSS px, on each screen (issue 34).
MIN_TEXT_PX = {"phone": 9.0, "desktop": 11.0}
#: Device pixels per CSS px shown that a figure's PNG must hold: sharp at a device pixel ratio of 2.
PIXEL_RATIO = 2
#: Every part rendered (content-visibility off); added by evaluate, which works with the page's JavaScript off too.
EVERYTHING_RENDERED = """() => { const style = document.createElement('style');
  style.textContent = '* { content-visibility: visible !important; }'; document.head.append(style); }"""
#: Every PNG shown in the article, as laid out: its URL and its box in CSS px.
SHOWN = """() => [...document.querySelectorAll('article img')].map(img => {
  const r = img.getBoundingClientRect();
  return {src: img.currentSrc || img.src, width: r.width, height: r.height,
          alt: (img.alt || '').slice(0, 60)};
}).filter(img => new URL(img.src).pathname.endsWith('.png'))"""


def png_facts(path) -> dict:
    """Pixels, and the text chunks the book's figures carry (size in inches, smallest text in points)."""
    with Image.open(io.BytesIO(path.read_bytes())) as image:
        chunks = dict(getattr(image, "text", {}))
        facts = {"pixels": image.size}
    if "Figure size (in)" in chunks and chunks.get("Smallest text (pt)", "none") != "none":
        facts["inches"] = tuple(float(v) for v in chunks["Figure size (in)"].split(" x "))
        facts["smallest_pt"] = float(chunks["Smallest text (pt)"])
        facts["smallest_text"] = chunks.get("Smallest text", "")
    return facts


def shown_figures(browser, pages_server, path: str, view: str, javascript: bool = True) -> list[dict]:
    """Every PNG of the page's article, shown in ``view``: its URL path and box."""
    page = page_audit.open_page(browser, pages_server, **VIEWS[view], java_script_enabled=javascript)
    try:
        page.goto(f"{pages_server.url}/{path}", wait_until="load")
        page.evaluate(EVERYTHING_RENDERED)
        found = page.evaluate(SHOWN)
    finally:
        page.context.close()
    if not javascript:  # only what <noscript> shows: the rest is measured with JavaScript on
        found = [img for img in found if "attention-explorer-" in img["src"]]
    return found


def problems(site_dir, path: str, view: str, shown: list[dict]) -> tuple[list[str], list[str]]:
    """What is wrong with each figure shown, and one line per figure of what was measured."""
    found, measured = [], []
    for img in shown:
        file = site_dir / unquote(urlsplit(img["src"]).path).lstrip("/")
        name = f"{path} {posixpath.basename(file.name)[:16]} ({img['alt']!r})"
        facts = png_facts(file)
        if img["width"] < 1:
            continue  # not shown (a closed <details>, a hidden output)
        ratio = min(facts["pixels"][0] / img["width"], facts["pixels"][1] / img["height"])
        if ratio < PIXEL_RATIO - 0.01:
            found.append(f"{name}: {facts['pixels'][0]} px shown {img['width']:.0f} CSS px wide, "
                         f"{ratio:.2f} pixels per CSS px (blurred at a device pixel ratio of {PIXEL_RATIO})")
        if "smallest_pt" not in facts:
            found.append(f"{name}: its PNG does not say its size and smallest text: not drawn in the book's style")
            continue
        px = facts["smallest_pt"] / 72 * img["width"] / facts["inches"][0]
        measured.append(f"{view} {name}: smallest text {px:.1f} CSS px ({facts['smallest_pt']} pt, "
                        f"{facts['smallest_text']!r}), shown {img['width']:.0f} px, {ratio:.2f} px per CSS px")
        if px < MIN_TEXT_PX[view] - 0.005:
            found.append(f"{name}: smallest text {px:.1f} CSS px ({facts['smallest_pt']} pt "
                         f"{facts['smallest_text']!r} in {facts['inches'][0]} in shown {img['width']:.0f} px), "
                         f"under {MIN_TEXT_PX[view]:g}")
    return found, measured


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_figure_is_legible_and_sharp(browser, pages_server, site_dir, view):
    found, measured, count = [], [], 0
    for path in toc.pages():
        # With JavaScript off only the explorers' pictures are measured: pages without one are not loaded twice.
        explorer = "attention-explorer-" in (site_dir / path).read_text()
        for javascript in (True, False) if explorer else (True,):
            shown = shown_figures(browser, pages_server, path, view, javascript)
            count += len(shown)
            wrong, seen = problems(site_dir, path, view, shown)
            found += wrong
            measured += seen
    print("\n".join(measured))
    assert count >= 30, f"only {count} figures found: is the site built?"
    assert not found, f"{len(found)} problems in {count} figures shown:\n" + "\n".join(found)


def test_the_check_fails_on_small_text_and_a_png_of_too_few_pixels(site_dir, tmp_path):
    """The measure itself: a 10-pt label of a 7-in figure shown 342 px wide is 6.8 px; a 1x PNG is blurred."""
    from selfattention.figures._style import new_figure, render_png

    fig = new_figure(7.0, 3.0)
    fig.add_subplot().set_xlabel("position", fontsize=10)
    (tmp_path / "f.png").write_bytes(render_png(fig))
    shown = [{"src": "http://x/f.png", "width": 342.0, "height": 146.6, "alt": "f"}]
    found, _ = problems(tmp_path, "p.html", "phone", shown)
    assert len(found) == 1 and "6.8 CSS px" in found[0] and "under 9" in found[0]
    shown = [{"src": "http://x/f.png", "width": 1000.0, "height": 428.6, "alt": "f"}]
    found, _ = problems(tmp_path, "p.html", "desktop", shown)
    assert len(found) == 1 and "1.40 pixels per CSS px" in found[0]
    buf = io.BytesIO()
    Image.new("RGB", (800, 400), "white").save(buf, "PNG")
    (tmp_path / "plain.png").write_bytes(buf.getvalue())
    found, _ = problems(tmp_path, "p.html", "phone", [{**shown[0], "src": "http://x/plain.png", "width": 342.0,
                                                        "height": 171.0}])
    assert found == ["p.html plain.png ('f'): its PNG does not say its size and smallest text: not drawn in the "
                     "book's style"]
