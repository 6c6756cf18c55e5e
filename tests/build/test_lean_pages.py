"""``_ext/lean_pages``: what it changes in the theme's head and script, and that a changed theme fails the build.

The colour theme is resolved right after the theme's own mode script; the
head's scripts are deferred in their order; ``basic.css`` is linked without
the stylesheet that only imports it; the theme's script loses its tab-stop
pass over every code block; Bootstrap's script is replaced by the stand-in that
fetches it on demand (tests/browser/test_header_menus.py: the menus). In the browser, tests/browser/test_page_budgets.py
and tests/browser/test_layout.py check what this changes (the theme set
before the first paint, no shift, what a phone renders, no console error,
search).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from sphinx.errors import ExtensionError

from _ext.lean_pages import (
    RESOLVE_THEME,
    bootstrap_on_demand,
    check_theme_css,
    deferring_scripts,
    resolving_theme_early,
    tab_stops,
    without_import_chain,
)

MODE_SCRIPT = """<script data-cfasync="false">
    document.documentElement.dataset.mode = localStorage.getItem("mode") || "auto";
    document.documentElement.dataset.theme = localStorage.getItem("theme") || "auto";
  </script>"""
STYLESHEET = '<link href="_static/styles/theme.css" rel="stylesheet" />'


def test_the_theme_is_resolved_after_the_mode_script_and_before_the_stylesheets():
    html = resolving_theme_early(f"\n  {MODE_SCRIPT}\n  {STYLESHEET}\n")
    assert html.index(MODE_SCRIPT) < html.index(RESOLVE_THEME) < html.index(STYLESHEET)
    assert html.count(RESOLVE_THEME) == 1


def test_a_head_without_the_mode_script_fails_the_build():
    with pytest.raises(ExtensionError, match="colour-mode script was not found"):
        resolving_theme_early(f"\n  {STYLESHEET}\n")


# The head's scripts, deferred in their order (lean_pages.deferring_scripts).
HEAD_SCRIPTS = """<script src="_static/documentation_options.js?v=1"></script>
<script>let toggleHintShow = 'Click to show';</script>
<script src="_static/togglebutton.js?v=2"></script>
<script defer="defer" src="_static/live-code.js"></script>
<script type="application/json" id="config">{"a": 1}</script>
<script>DOCUMENTATION_OPTIONS.pagename = 'book/attention';</script>"""


def test_every_script_is_deferred_in_order_and_a_literal_declaration_stays_inline():
    html = deferring_scripts(HEAD_SCRIPTS)
    assert html.splitlines() == [
        '<script defer src="_static/documentation_options.js?v=1"></script>',
        "<script>let toggleHintShow = 'Click to show';</script>",
        '<script defer src="_static/togglebutton.js?v=2"></script>',
        '<script defer="defer" src="_static/live-code.js"></script>',
        '<script type="application/json" id="config">{"a": 1}</script>',
        '<script defer src="data:text/javascript,DOCUMENTATION_OPTIONS.pagename%20%3D%20%27book/attention%27%3B">'
        "</script>"]
    data = re.search(r'data:text/javascript,([^"]+)', html)[1]
    assert unquote(data) == "DOCUMENTATION_OPTIONS.pagename = 'book/attention';"


def test_the_theme_stylesheet_that_only_imports_is_replaced_by_what_it_imports(tmp_path):
    link = '<link href="../_static/styles/theme.css?digest=abc" rel="stylesheet" />'
    assert without_import_chain(link) == '<link href="../_static/basic.css?digest=abc" rel="stylesheet" />'
    (tmp_path / "styles").mkdir()
    (tmp_path / "styles" / "theme.css").write_text('/* from basic */\n@import "../basic.css";\n')
    check_theme_css(tmp_path)
    (tmp_path / "styles" / "theme.css").write_text('@import "../basic.css";\nbody { color: red; }\n')
    with pytest.raises(ExtensionError, match="holds more than"):
        check_theme_css(tmp_path)


def test_the_installed_themes_script_loses_exactly_its_tab_stop_pass():
    import pydata_sphinx_theme

    script = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"
              / tab_stops.THEME_SCRIPT).read_text()
    call = tab_stops.TAB_STOP_CALL.search(script)
    lean = tab_stops.without_tab_stop_pass(script)
    assert lean.startswith(script[:call.start()] + "void 0" + script[call.end():call.end() + 5])
    assert tab_stops.TAB_STOP_CALL.search(lean) is None and "sourceMappingURL" not in lean


def test_a_theme_script_without_the_tab_stop_pass_fails_the_build():
    with pytest.raises(ExtensionError, match="tab-stop pass"):
        tab_stops.without_tab_stop_pass('(()=>{function I(){}window.addEventListener("load",I)})();')


def _contrast(a, b) -> float:
    """WCAG contrast ratio of two sRGB colours (0-255)."""
    import numpy as np

    def lum(c):
        c = np.asarray(c, dtype=float) / 255
        c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return float(c @ [0.2126, 0.7152, 0.0722])

    high, low = sorted((lum(a), lum(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_a_dark_twin_turns_white_to_the_page_and_black_to_its_text_and_keeps_colours_legible():
    """dark_figures re-inks a figure: white -> the dark page's background, black -> its text colour, a grey stays
    between them; the book's colours hold 4.5:1 on the dark page; viridis keeps its order of lightness."""
    import numpy as np
    from matplotlib import colormaps

    from _ext.lean_pages import dark_figures as df
    from selfattention.figures._style import COLORS, MORE_COLORS

    white, black, grey = df.dark_pixels(np.array([[255, 255, 255], [0, 0, 0], [128, 128, 128]]))
    assert tuple(white) == tuple(df.BACKGROUND) and tuple(black) == tuple(df.TEXT)
    assert df.BACKGROUND[0] < grey[0] < df.TEXT[0]
    inks = [c for name, c in {**COLORS, **MORE_COLORS}.items() if name not in ("clean", "muted")]
    for ink in inks:
        rgb = np.array([int(ink[i:i + 2], 16) for i in (1, 3, 5)])
        assert _contrast(df.dark_pixels(rgb[None])[0], df.BACKGROUND) >= 4.5, ink
    viridis = np.rint(colormaps["viridis"](np.linspace(0, 1, 12))[:, :3] * 255)  # (12, 3)
    lightness = [_contrast(c, [0, 0, 0]) for c in df.dark_pixels(viridis)]
    assert lightness == sorted(lightness), "the heat maps' colours keep their order"


def test_a_figure_tag_gets_its_dark_twin_lazy_with_the_same_alt_text():
    from _ext.lean_pages.dark_figures import twin_tag

    tag = '<img width="560" height="330" loading="eager" fetchpriority="high" alt="A plot" src="../_images/f.png" />'
    light, dark = twin_tag(tag).split("/><img")
    assert 'class="lean-light dark-light"' in light and 'fetchpriority="high"' in light and 'alt="A plot"' in light
    assert 'class="lean-dark dark-light" loading="lazy"' in dark
    assert 'alt="A plot"' in dark  # the scheme hides the other image from assistive technology too
    assert 'src="../_images/f-dark.png"' in dark and "eager" not in dark


BOOTSTRAP = '<script defer src="../_static/scripts/bootstrap.js?digest=55c26ed414f5f8a31ebb"></script>'
THEME_SCRIPT = '<script defer src="../_static/scripts/pydata-sphinx-theme.js?digest=66bbd4feafb519b5e5ad"></script>'


def test_bootstraps_script_is_replaced_by_the_stand_in_that_is_handed_its_url():
    html = bootstrap_on_demand.bootstrap_on_demand(f"<p>x</p>\n  {BOOTSTRAP}\n{THEME_SCRIPT}\n", version="abc")
    assert BOOTSTRAP not in html and THEME_SCRIPT in html
    stand_in = ('<script defer src="../_static/bootstrap-on-demand.js?v=abc" '
                'data-bootstrap="../_static/scripts/bootstrap.js?digest=55c26ed414f5f8a31ebb"></script>')
    assert html.index(stand_in) < html.index(THEME_SCRIPT)  # it stands in before the theme's script runs


@pytest.mark.parametrize("scripts", ["", BOOTSTRAP * 2])
def test_a_page_without_exactly_one_bootstrap_script_fails_the_build(scripts):
    with pytest.raises(ExtensionError, match="script elements for Bootstrap"):
        bootstrap_on_demand.bootstrap_on_demand(f"<p>x</p>{scripts}{THEME_SCRIPT}", version="abc")


def test_the_stand_in_is_named_by_a_digest_of_its_text(tmp_path):
    (tmp_path / bootstrap_on_demand.SCRIPT).write_text("one")
    first = bootstrap_on_demand.digest(tmp_path)
    (tmp_path / bootstrap_on_demand.SCRIPT).write_text("two")
    assert bootstrap_on_demand.digest(tmp_path) != first and len(first) == 12
