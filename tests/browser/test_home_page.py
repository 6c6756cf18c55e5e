"""The home page shows at first sight what the book does, and the three ways to use it, each link working.

Opened at 390x844 (device scale factor 2) and at 1440x900, light and dark,
without scrolling, the home page (the root of ``_toc.yml``) shows

* the book's result: the hand-built head's figure on the noisy sine, drawn
  by the package (a glued figure, ``fig-index-*``, loaded, with alt text),
  or an in-page explorer, wholly in view below the sticky header;
* the three ways to use the book, in this order: read, explore, go live
  (``:::{div} three-ways``, one list item each), every one wholly in view,
  each with a link whose page the site serves and whose ``#fragment``, if
  any, names an element of that page.

Below them, one line each says who the book is for, what it needs and how
long it takes to read (counted when the book is built), and one line per
chapter says what it does, instead of a copy of the sidebar's contents.

The page's budgets (elements rendered on a phone, layout shift, no other
host, axe-core) are ``test_page_budgets.py``'s, for every page.
"""

from __future__ import annotations

import posixpath
import re
import urllib.parse

import pytest

from tools import page_audit, toc

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}}}
WAYS = ("Read", "Explore", "Go live")
SHOWN = """() => {
  const top = Math.max(0, ...[...document.querySelectorAll('.bd-header, .bd-header-article')]
    .filter(e => getComputedStyle(e).position === 'sticky' || getComputedStyle(e).position === 'fixed')
    .map(e => e.getBoundingClientRect().bottom));
  const inView = el => { const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top >= top - 1 && r.bottom <= innerHeight + 1
      && r.left >= -1 && r.right <= innerWidth + 1; };
  const article = document.querySelector('article.bd-article');
  const shownImages = img => getComputedStyle(img).display !== 'none';  // the scheme's, of a figure and its dark twin
  const figures = [...article.querySelectorAll('figure[id^="fig-index-"] img')].filter(shownImages).map(img => ({
    in_view: inView(img), loaded: img.complete && img.naturalWidth > 0, alt: img.alt}));
  const explorers = [...article.querySelectorAll('.attention-explorer')].map(e => ({in_view: inView(e)}));
  const ways = [...article.querySelectorAll('div.three-ways > ul > li')].map(li => ({
    lead: (li.querySelector('strong') || {}).textContent || '', in_view: inView(li),
    links: [...li.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))}));
  return {figures, explorers, ways};
}"""


def root_page() -> str:
    return toc.pages()[0]


def target_exists(page, pages_server, base: str, href: str) -> str | None:
    """None if ``href`` (relative to the page ``base``) is served and its fragment is an element there."""
    parts = urllib.parse.urlsplit(href)
    if parts.scheme or parts.netloc:
        return f"{href} leaves the site"
    path = posixpath.normpath(posixpath.join(posixpath.dirname(base), parts.path)) if parts.path else base
    response = page.request.get(f"{pages_server.url}/{path}")
    if not response.ok:
        return f"{href}: {response.status}"
    if parts.fragment and f'id="{parts.fragment}"' not in response.text():
        return f"{href}: no element #{parts.fragment} in {path}"
    return None


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("view", VIEWS)
def test_the_home_page_shows_the_result_and_the_three_ways_at_first_sight(browser, pages_server, view, scheme):
    page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **VIEWS[view])
    try:
        page.goto(f"{pages_server.url}/{root_page()}", wait_until="load")
        page.evaluate("document.fonts.ready.then(() => 0)")
        page.wait_for_load_state("networkidle")
        shown = page.evaluate(SHOWN)
        broken = [problem for way in shown["ways"] for href in way["links"]
                  if (problem := target_exists(page, pages_server, root_page(), href))]
    finally:
        page.context.close()
    pictures = shown["figures"] + shown["explorers"]
    assert pictures, "the home page shows neither the head's figure nor an explorer"
    assert all(p["in_view"] for p in pictures), f"not wholly in the first screen: {pictures}"
    assert all(f["loaded"] and len(f["alt"]) > 40 for f in shown["figures"]), shown["figures"]
    assert [way["lead"] for way in shown["ways"]] == list(WAYS), shown["ways"]
    assert all(way["in_view"] for way in shown["ways"]), f"a way is below the first screen: {shown['ways']}"
    assert all(way["links"] for way in shown["ways"]), f"a way without a link: {shown['ways']}"
    assert broken == []


#: The lines that say who the book is for, in this order, each one list item of the home page.
FOR_WHOM = ("For", "You need", "Time")
#: The back matter, looked up rather than read: not in the home page's list of chapters.
BACK_MATTER = ("notation", "checking", "references")


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def test_the_home_page_says_who_the_book_is_for_and_gives_each_chapter_one_line(site_dir):
    """Audience, prerequisites and reading time, one line each; then one line per chapter, not the sidebar's copy."""
    html = (site_dir / root_page()).read_text(encoding="utf-8")
    article = html[html.index("<article"):html.index("</article>")]
    # sphinx-external-toc's toctrees stay in the page, hidden and empty (the sidebar is built from them)
    assert not re.search(r'class="toctree-wrapper[^"]*">\s*<ul', article), "the home page copies the sidebar"
    items = re.findall(r"<li><p><strong>([^<]+)</strong>(.*?)</p>\s*</li>", article, re.S)
    leads = [lead for lead, _ in items if lead in FOR_WHOM]
    assert leads == list(FOR_WHOM), leads
    time = text(next(rest for lead, rest in items if lead == "Time"))
    assert re.search(r"about (\d+(\.5)? hours|half an hour) at 150 words a minute", time), time
    chapters = html[html.index('id="the-chapters"'):]
    chapters = chapters[:chapters.index("</ul>")]
    links = [re.findall(r'<a class="reference internal" href="([^"#]+)"', li)
             for li in re.findall(r"<li>(.*?)</li>", chapters, re.S)]
    expected = [posixpath.relpath(p, posixpath.dirname(root_page())) for p in toc.pages()[1:]
                if posixpath.basename(p).removesuffix(".html") not in BACK_MATTER]
    assert [found[0] if len(found) == 1 else found for found in links] == expected
