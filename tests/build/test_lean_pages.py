"""``_ext/lean_pages``: the colour theme is resolved in the head, right after the theme's own mode script.

In the browser, tests/browser/test_page_budgets.py checks what this changes (the
theme set before the first paint, no shift); here, where the script goes and
that a theme without the script it follows fails the build.
"""

from __future__ import annotations

import pytest
from sphinx.errors import ExtensionError

from _ext.lean_pages import RESOLVE_THEME, resolving_theme_early

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
