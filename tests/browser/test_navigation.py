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

import collections
import re
import urllib.parse

import pytest

from tools import toc
from tools.chromium import open_page

#: The back matter: looked up, not read in order (tests/chapters/test_openings.py).
BACK_MATTER = ("notation", "checking", "references")

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


#: A result's chapter or appendix number: "5. ", "A. ".
NUMBER = re.compile(r"^(?:[A-Z]\.|[\d.]+)\s+")

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
    titles = [re.sub(NUMBER, "", r["title"]) for r in results]
    assert titles and titles[0] in FIRST[query], titles[:4]
    pages = [r["href"].split("#")[0] for r in results if "#" not in r["href"]]
    assert len(pages) == len(set(pages)), f"a page listed twice: {titles}"
    assert page.external_requests == []


def test_every_page_named_for_heads_comes_first(page, site_url):
    results = search(page, site_url, "heads")
    titles = [re.sub(NUMBER, "", r["title"]) for r in results]
    named = {"Many heads", "Learning the head", "Heads that work together",  # "head", the stem of "heads"
             "Heads that learn while they read"}
    assert set(titles[:len(named)]) == named, titles[:6]
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


# --- Results link to their sections; the book's index; hostile queries -----------------------------------------


def section_of(page, site_url, href: str) -> dict:
    """The page of ``href`` opened: whether its fragment names an element, and the id of the section holding it."""
    page.goto(f"{site_url}/{href}", wait_until="load")
    return page.evaluate("""(id) => {
        const el = document.getElementById(decodeURIComponent(id));
        const section = el && (el.matches('section[id]') ? el : el.closest('section[id]'));
        const top = document.querySelector('article section[id]');
        return {found: !!el, section: section ? section.id : null, top: section === top};
    }""", href.split("#", 1)[1])


def test_kv_cache_finds_decoding_with_a_cache_first(page, site_url):
    """"KV cache" is in no sentence of the book, only in its index: the first result is §13.2, not a citation."""
    results = search(page, site_url, "KV cache")
    first = results[0]
    assert first["href"].startswith("book/attention-cost.html#"), [r["href"] for r in results[:4]]
    assert section_of(page, site_url, first["href"])["section"] == "decoding-with-a-cache"
    assert "cache" in first["snippet"].lower()


@pytest.mark.parametrize(("query", "href"), [
    ("Bochner", "book/attention-cost.html#the-gaussian-kernel-is-an-average-of-cosines"),  # in the prose only
    ("induction head", None),  # in the index too
])
def test_a_result_links_to_the_section_of_its_match(page, site_url, query, href):
    results = search(page, site_url, query)
    if href:
        assert href in [r["href"] for r in results], [r["href"] for r in results]
    problems = []
    for result in results:
        if "#" not in result["href"]:
            continue
        target = section_of(page, site_url, result["href"])
        if not target["found"] or target["section"] is None:
            problems.append(f"{result['href']}: no such element, or not in a section")
    assert problems == [], "\n".join(problems)
    chapter = [r for r in results if not r["title"].endswith("References")]
    linked = [r for r in chapter if "#" in r["href"]]
    assert len(linked) >= len(chapter) - 1, f"results linked to the page's top: {[r['href'] for r in chapter]}"


#: Terms the book's index must hold, and the page each leads to.
INDEXED = {
    "key-value cache": "attention-cost", "KV cache": "attention-cost", "induction head": "heads-together",
    "RoPE": "positions-and-masks", "ALiBi": "positions-and-masks", "causal mask": "positions-and-masks",
    "Nadaraya\u2013Watson estimator": "kernel-regression", "softmax": "attention", "temperature": "knobs",
    "multi-head attention": "many-heads",
}


def index_entries(page, site_url) -> dict[str, list[str]]:
    """{term: the hrefs of its entry and sub-entries} of the site's genindex.html."""
    page.goto(f"{site_url}/genindex.html", wait_until="load")
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('table.indextable td > ul > li')]
        .map((li) => [(li.firstChild.nodeType === 3 && li.firstChild.textContent.trim().replace(/,$/, ''))
                      || li.querySelector('a').textContent.trim(),
                      [...li.querySelectorAll('a[href]')].map((a) => a.getAttribute('href'))]))""")


def test_the_book_has_an_index_of_its_terms(page, site_url):
    entries = index_entries(page, site_url)
    missing = [term for term in INDEXED if term not in entries]
    assert missing == [], f"not in genindex.html: {missing}; it holds {sorted(entries)[:20]}..."
    wrong = [f"{term}: {entries[term]}" for term, stem in INDEXED.items()
             if not any(href.startswith(f"book/{stem}.html#index-") for href in entries[term])]
    assert wrong == [], "\n".join(wrong)
    per_page = collections.Counter(href.split("#")[0] for hrefs in entries.values() for href in set(hrefs))
    chapters = [p for p in toc.pages()[1:] if p.removeprefix("book/").removesuffix(".html") not in BACK_MATTER]
    few = {p: per_page[p] for p in chapters if per_page[p] < 2}
    assert few == {}, f"chapters with fewer than two index entries: {few}"
    broken = [href for hrefs in entries.values() for href in hrefs if not section_of(page, site_url, href)["found"]]
    assert broken == []


def tamed(page, site_url, query: str) -> tuple[str, list[dict]]:
    """The query the search page ran for ``query`` (in the address), and its results."""
    results = search(page, site_url, urllib.parse.quote(query))
    return page.evaluate("Search.tamedQuery"), results


def test_a_hostile_query_is_searched_once_per_word_and_capped(page, site_url):
    """A link with one word 3,000 times searches the word once; a long query keeps its first words.

    (Before, one word repeated 3,000 times was one 25.6 s task: ``benchmarks/bench_search.py`` measures the
    longest task of such searches at 4x CPU.)
    """
    plain = search(page, site_url, "attention")
    query, results = tamed(page, site_url, " ".join(["attention"] * 3000))
    assert query == "attention" and results == plain
    assert page.locator('input[name="q"]').first.input_value() == "attention"
    assert tamed(page, site_url, "Kernel kernel KERNEL regression")[0] == "Kernel regression"
    words = [f"word{k}" for k in range(40)]
    query, _ = tamed(page, site_url, " ".join(words * 20))
    assert query.split() == words[:8] and len(query) <= 120
    query, _ = tamed(page, site_url, "a" * 20000)
    assert query == "a" * 120


def test_the_contents_group_the_chapters_into_parts_and_letter_the_appendices(site_dir):
    """The sidebar: one caption per part of ``_toc.yml``; chapters numbered on across parts, appendices A, B, C."""
    import yaml

    parts = yaml.safe_load(toc.TOC.read_text(encoding="utf-8"))["parts"]
    html = (site_dir / "genindex.html").read_text(encoding="utf-8")  # a page that is none of the entries
    nav = html[html.index('bd-docs-nav"'):]
    nav = nav[:nav.index("</nav>")]
    assert re.findall(r'<span class="caption-text">([^<]+)</span>', nav) == [p["caption"] for p in parts]
    assert parts[-1]["caption"] == "Appendices"
    entries = re.findall(r'class="[^"]*reference internal[^"]*" href="(?:book/)?([\w-]+)\.html">([^<]+)</a>', nav)
    chapters = [c["file"].removeprefix("book/") for p in parts[:-1] for c in p["chapters"]]
    appendices = [c["file"].removeprefix("book/") for c in parts[-1]["chapters"]]
    numbers = [f"{k}." for k in range(1, len(chapters) + 1)] + [f"{chr(65 + k)}." for k in range(len(appendices))]
    listed = [(stem, label.split()[0]) for stem, label in entries if stem != "index"]  # the home page: no number
    assert listed == list(zip(chapters + appendices, numbers, strict=True))
    notation = (site_dir / "book" / "notation.html").read_text(encoding="utf-8")
    assert re.search(r'<h1><span class="section-number">A\. </span>Notation', notation)
    assert re.search(r'<h2><span class="section-number">A\.1\. </span>', notation)


def test_prose_names_a_chapter_by_its_number_linked(site_dir):
    """``{chapter}`content-attention``` is "chapter N", N its place in the numbered contents, linked to its page
    (issue 40: titles used as nouns mid-sentence). Read from the built pages: every such reference of the book."""
    chapters = [doc for doc in toc.documents()[1:]
                if doc.removeprefix("book/") not in ("notation", "checking", "references")]
    number = {doc.removeprefix("book/"): k for k, doc in enumerate(chapters, start=1)}
    found = 0
    for path in toc.pages():
        html = (site_dir / path).read_text()
        for href, word, n in re.findall(r'<a class="reference internal" href="([\w-]+)\.html">'
                                        r'<span class="chapter-ref">(\w+) ([\w.]+)</span></a>', html):
            found += 1
            assert word.lower() == "chapter" and n == str(number[href]), f"{path}: {word} {n} links {href}"
    assert found >= 50, f"only {found} chapter references: is the site built with the {{chapter}} role?"
