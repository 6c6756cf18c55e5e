"""The book's figures in the theme's dark mode: dark boxes in a dark page, not bright grey ones (issue 40, item 10).

A chapter with a line figure and one with heat maps are loaded at 390 and
1440 px in the reader's dark scheme (``prefers-color-scheme: dark``, which
the theme follows) and, once, in the light one. Each of the article's
figures is scrolled into view and waited for; the screenshot of its box
(what the reader sees, whichever ``<img>`` the stylesheet shows) is read at
its frame, the outer rows and columns of pixels, which are the figure's
background: in dark mode their median luminance is under 0.05 (a white
figure's is 1.0, the dark page's 0.006), and the figure's text is light (its
lightest thousandth of pixels over 0.5); in light mode the frame is white
(over 0.9).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tools import page_audit

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}, "device_scale_factor": 1}}
PAGES = ("book/attention-cost.html", "book/heads-together.html")
#: Every part rendered, so that each figure has its box at once.
EVERYTHING_RENDERED = """() => { const style = document.createElement('style');
  style.textContent = '* { content-visibility: visible !important; }'; document.head.append(style); }"""
FIGURES = "figure img:not([alt='']), figure img.lean-dark"


def luminance(png: bytes) -> np.ndarray:
    """Relative luminance (WCAG) of every pixel of ``png``, (height, width)."""
    with Image.open(io.BytesIO(png)) as image:
        rgb = np.asarray(image.convert("RGB"), dtype=float) / 255.0  # (h, w, 3)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def frame(shown: np.ndarray, width: int = 3) -> np.ndarray:
    """The outer ``width`` rows and columns of pixels of ``shown``: the figure's background."""
    return np.concatenate([shown[:width].ravel(), shown[-width:].ravel(), shown[:, :width].ravel(),
                           shown[:, -width:].ravel()])


def figures_seen(browser, pages_server, path: str, view: str, scheme: str) -> list[np.ndarray]:
    """The luminance of each figure of ``path`` as shown, in ``view`` and ``scheme``."""
    page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **VIEWS[view])
    try:
        page.goto(f"{pages_server.url}/{path}", wait_until="load")
        page.evaluate(EVERYTHING_RENDERED)
        seen = []
        for figure in page.locator("figure").all():
            image = figure.locator("img:visible").first
            if not image.count():
                continue
            image.scroll_into_view_if_needed()
            image.evaluate("img => img.decode()")
            seen.append(luminance(image.screenshot()))
        return seen
    finally:
        page.context.close()


@pytest.mark.parametrize("view", list(VIEWS))
def test_figures_are_dark_in_dark_mode_and_light_in_light_mode(browser, pages_server, view):
    found, count = [], 0
    for path in PAGES:
        for scheme in ("dark", "light") if view == "phone" else ("dark",):
            for index, shown in enumerate(figures_seen(browser, pages_server, path, view, scheme)):
                count += 1
                median, light = float(np.median(frame(shown))), float(np.quantile(shown, 0.999))
                name = f"{path} figure {index + 1} ({view}, {scheme})"
                if scheme == "dark" and (median > 0.05 or light < 0.5):
                    found.append(f"{name}: its background's luminance {median:.2f}, "
                                 f"its lightest thousandth {light:.2f}")
                if scheme == "light" and median < 0.9:
                    found.append(f"{name}: its background's luminance {median:.2f} in light mode")
    assert count >= 10, f"only {count} figures seen: is the site built?"
    assert not found, "\n".join(found)
