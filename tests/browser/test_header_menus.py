"""The article header's menus, and the theme's tooltips, with Bootstrap fetched only on demand.

``_ext/lean_pages/bootstrap_on_demand.py`` leaves Bootstrap's script (the
theme's, 80 KB) out of every page's load; ``bootstrap-on-demand.js`` stands in
for it and fetches it when a reader first reaches for what uses it. Here, on a
chapter opened cold: nothing fetches Bootstrap before the reader does anything;
the first click (or tap, or Enter) on a menu's button opens its menu, and the
next closes it; a tooltip made as the theme's script makes one shows and
hides; and a Bootstrap that cannot be fetched is reported, by URL, on the
console, and fetched again at the next click.
"""

from __future__ import annotations

import pytest

from tools.chromium import open_page

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1440, "height": 900}}
PAGE = "book/attention.html"
MENU = ".dropdown-download-buttons"
BOOTSTRAP = "/_static/scripts/bootstrap.js"


def opened(browser, site_url, viewport: dict):
    """A chapter opened cold at ``viewport``, with the URLs it requested (a list that grows) and console errors."""
    page = open_page(browser, {site_url}, **viewport)
    requested, errors = [], []
    page.on("request", lambda request: requested.append(request.url))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(f"{site_url}/{PAGE}", wait_until="networkidle")
    return page, requested, errors


def menu_shown(page) -> bool:
    return page.locator(f"{MENU} .dropdown-menu").evaluate("m => m.classList.contains('show') && m.offsetHeight > 0")


def wait_for_menu(page, shown: bool = True) -> None:
    """Wait until the download menu is marked shown (or, ``shown=False``, no longer)."""
    marked = f"document.querySelector('{MENU} .dropdown-menu').classList.contains('show')"
    page.wait_for_function(marked if shown else f"!{marked}")


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_nothing_fetches_bootstrap_before_the_reader_reaches_for_it(browser, site_url, viewport):
    page, requested, _ = opened(browser, site_url, PHONE if viewport == "phone" else DESKTOP)
    try:
        page.wait_for_timeout(500)
        assert not [url for url in requested if BOOTSTRAP in url]
        assert page.evaluate("typeof window.bootstrap.Dropdown") == "undefined", "Bootstrap ran at load"
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_the_first_click_on_a_menu_button_opens_its_menu_and_the_next_closes_it(browser, site_url, viewport):
    page, requested, errors = opened(browser, site_url, PHONE if viewport == "phone" else DESKTOP)
    try:
        button = page.locator(f"{MENU} .dropdown-toggle")
        if viewport == "phone":
            button.tap()
        else:
            button.click()
        wait_for_menu(page)
        assert menu_shown(page)
        assert button.get_attribute("aria-expanded") == "true"
        assert [url for url in requested if BOOTSTRAP in url], "the menu opened without Bootstrap"
        page.screenshot(path=f"/tmp/header-menu-{viewport}.png")
        button.click()
        wait_for_menu(page, shown=False)
        assert not menu_shown(page)
        assert errors == []
    finally:
        page.context.close()


def test_enter_on_a_focused_menu_button_opens_its_menu(browser, site_url):
    page, _, errors = opened(browser, site_url, DESKTOP)
    try:
        page.locator(f"{MENU} .dropdown-toggle").focus()
        page.keyboard.press("Enter")
        wait_for_menu(page)
        assert menu_shown(page)
        assert errors == []
    finally:
        page.context.close()


def test_a_tooltip_made_as_the_themes_script_makes_one_shows_and_hides(browser, site_url):
    """The theme's script makes one tooltip, for a collapse-sidebar button the book's pages do not have."""
    page, requested, errors = opened(browser, site_url, DESKTOP)
    try:
        page.evaluate("""() => {
            const button = Object.assign(document.createElement('button'), {textContent: 'a button'});
            document.querySelector('.bd-header-article').append(button);
            window.made = new bootstrap.Tooltip(button, {title: 'a tooltip', trigger: 'manual', placement: 'left'});
            window.made.show();
        }""")
        tooltip = page.locator(".tooltip.show")
        tooltip.wait_for(state="visible")
        assert tooltip.text_content().strip() == "a tooltip"
        assert [url for url in requested if BOOTSTRAP in url]
        page.evaluate("window.made.hide()")
        tooltip.wait_for(state="detached")
        page.evaluate("window.made.hide(); window.made.show(); window.made.hide()")  # the last call wins
        page.wait_for_timeout(300)
        assert page.locator(".tooltip.show").count() == 0
        assert errors == []
    finally:
        page.context.close()


def test_a_bootstrap_that_cannot_be_fetched_is_reported_by_url_and_tried_again(browser, site_url):
    page = open_page(browser, {site_url}, **DESKTOP)
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.route(f"**{BOOTSTRAP}*", lambda route: route.abort())
    try:
        page.goto(f"{site_url}/{PAGE}", wait_until="networkidle")
        page.locator(f"{MENU} .dropdown-toggle").click()
        page.wait_for_timeout(300)
        reported = [text for text in errors if "bootstrap-on-demand" in text]
        assert len(reported) == 1 and "_static/scripts/bootstrap.js" in reported[0], errors
        assert not [text for text in errors if text.startswith("uncaught") or "Uncaught" in text], errors
        assert not menu_shown(page)
        page.unroute(f"**{BOOTSTRAP}*")
        page.locator(f"{MENU} .dropdown-toggle").click()  # the next reach tries again
        wait_for_menu(page)
    finally:
        page.context.close()
