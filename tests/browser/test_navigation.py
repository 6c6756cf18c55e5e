"""Finding one's way (``_ext/navigation``): the phone's Contents panel, and search.

On a 390 x 844 phone (device scale factor 2, touch), the "Contents" panel
(pydata-sphinx-theme's dialog of the page's table of contents) closes when a
section is chosen in it, and the page shows that section; on a 1440 x 900
desktop the same table stays in its sidebar. On the search page, a page whose
title holds the query comes first ("kernel": "Attention is kernel
regression"), each page once, and each snippet is a sentence around a match
in the page's prose, never lines of its table of contents. Screenshots land
in /tmp/navigation-*.png.
"""

from __future__ import annotations

import re

import pytest

from tools.chromium import open_page

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1440, "height": 900}}
PAGE = "book/smoothing.html"
DIALOG = "#pst-secondary-sidebar-modal"


def in_view_below_header(page, selector: str) -> bool:
    """Is the top of ``selector`` on screen, below the theme's sticky header?"""
    return page.evaluate("""(selector) => {
        const header = document.querySelector('.bd-header-article').getBoundingClientRect().bottom;
        const top = document.querySelector(selector).getBoundingClientRect().top;
        return top >= header - 1 && top < innerHeight / 2;
    }""", selector)


def test_the_phones_contents_panel_closes_when_a_section_is_chosen(browser, site_url):
    page = open_page(browser, {site_url}, **PHONE)
    try:
        page.goto(f"{site_url}/{PAGE}", wait_until="networkidle")
        page.locator(".secondary-toggle").tap()
        dialog = page.locator(DIALOG)
        assert dialog.evaluate("d => d.open")
        assert dialog.bounding_box()["width"] > 0.7 * 390  # it covers most of the screen
        links = dialog.locator("a.nav-link")
        count = links.count()
        assert count >= 3
        link = links.nth(2)
        target = link.get_attribute("href")
        page.screenshot(path="/tmp/navigation-contents-open.png")
        link.tap()
        page.wait_for_function(f"!document.querySelector('{DIALOG}').open")
        page.wait_for_function(f"location.hash === '{target}'")
        page.wait_for_timeout(300)  # the scroll to the section
        assert in_view_below_header(page, target), "the chosen section is not at the top of the screen"
        # The page itself is on screen, and its table of contents is back in the sidebar, for the next time.
        assert page.evaluate("!document.elementFromPoint(195, 600).closest('dialog')")
        assert page.locator("#pst-secondary-sidebar a.nav-link").count() == count
        page.screenshot(path="/tmp/navigation-contents-chosen.png")
        page.locator(".secondary-toggle").tap()  # it opens again, and Escape still closes it
        assert dialog.evaluate("d => d.open")
        page.keyboard.press("Escape")
        assert not dialog.evaluate("d => d.open")
        assert page.external_requests == []
    finally:
        page.context.close()


def test_the_desktops_contents_stay_in_their_sidebar(browser, site_url):
    page = open_page(browser, {site_url}, **DESKTOP)
    try:
        page.goto(f"{site_url}/{PAGE}", wait_until="networkidle")
        links = page.locator("#pst-secondary-sidebar a.nav-link")
        assert links.first.is_visible()
        target = links.nth(2).get_attribute("href")
        links.nth(2).click()
        page.wait_for_function(f"location.hash === '{target}'")
        page.wait_for_timeout(300)
        assert in_view_below_header(page, target)
        assert links.first.is_visible() and not page.locator(DIALOG).evaluate("d => d.open")
    finally:
        page.context.close()


def search(page, site_url, query: str) -> list[dict]:
    """The results of ``query`` on the search page, once every snippet has arrived: [{title, href, snippet}]."""
    page.goto(f"{site_url}/search.html?q={query}", wait_until="load")
    page.wait_for_function("""() => {
        const items = [...document.querySelectorAll('#search-results li')];
        const done = /found|did not match/.test(document.querySelector('.search-summary')?.textContent || '');
        return done && items.every(li => li.querySelector('p.context'));
    }""")
    return page.evaluate("""[...document.querySelectorAll('#search-results li')].map(li => ({
        title: li.querySelector('a').textContent, href: li.querySelector('a').getAttribute('href'),
        snippet: li.querySelector('p.context').textContent}))""")


def toc_lines(page, site_url, href: str) -> list[str]:
    """The entries of the in-page table of contents of the result ``href``."""
    page.goto(f"{site_url}/{href.split('#')[0]}", wait_until="load")
    return [t.strip() for t in page.locator("#pst-secondary-sidebar a.nav-link").all_text_contents() if t.strip()]


#: query -> the titles (after the section number) of which one must come first.
FIRST = {
    "kernel": {"Attention is kernel regression"},
    "noise": {"A noisy signal"},
    "smoothing": {"Smoothing with attention"},
    "learning": {"Learning the head"},
    "notation": {"Notation"},
    "knobs": {"Turning the knobs"},
}


@pytest.mark.parametrize("query", FIRST)
def test_a_page_whose_title_holds_the_query_comes_first(page, site_url, query):
    results = search(page, site_url, query)
    titles = [re.sub(r"^[\d.]+\s+", "", r["title"]) for r in results]
    assert titles and titles[0] in FIRST[query], titles[:4]
    pages = [r["href"].split("#")[0] for r in results if "#" not in r["href"]]
    assert len(pages) == len(set(pages)), f"a page listed twice: {titles}"
    assert page.external_requests == []


def test_every_page_named_for_heads_comes_first(page, site_url):
    results = search(page, site_url, "heads")
    titles = [re.sub(r"^[\d.]+\s+", "", r["title"]) for r in results]
    named = {"Many heads", "Learning the head", "Heads that work together"}  # "head", the stem of "heads"
    assert set(titles[:3]) == named, titles[:5]
    hrefs = [r["href"] for r in results]
    assert len(hrefs) == len(set(hrefs)), f"a page listed twice: {titles}"  # "10. Many heads > Many heads"


#: Where one sentence ends and another begins, inside a snippet.
SENTENCE_END = re.compile(r"[a-z)\]][.!?]\s+[A-Z]")


@pytest.mark.parametrize("query", ["kernel", "softmax", "temperature"])
def test_a_snippet_is_a_sentence_around_the_match_not_the_table_of_contents(page, site_url, query):
    results = search(page, site_url, query)
    page.screenshot(path=f"/tmp/navigation-search-{query}.png", full_page=True)
    assert len(results) >= 4
    problems = []
    stem = query[:6]
    for result in results:
        snippet = result["snippet"]
        # An entry of the bibliography is shown whole: its title is a sentence of its own.
        one = result["title"].endswith("References") or not SENTENCE_END.search(snippet.strip("."))
        if not snippet or "\n" in snippet or len(snippet) > 250 or not one:
            problems.append(f"{result['title']}: {snippet!r} is not one sentence of at most 250 characters")
        if not re.search(rf"\b{stem}", snippet, re.I):
            problems.append(f"{result['title']}: {snippet!r} does not hold {query!r}")
        for line in toc_lines(page, site_url, result["href"]):
            if len(line) > 12 and line in snippet:
                problems.append(f"{result['title']}: {snippet!r} holds the contents line {line!r}")
    assert problems == [], "\n".join(problems)
