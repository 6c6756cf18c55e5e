"""What every page costs and shows when a phone opens it: the budgets that do not depend on speed.

Every HTML page of the built site (the chapters, the landing page, search,
the index and the root redirect; the list comes from the site itself) is
loaded once, cold, at a phone's viewport, from the site served as GitHub
Pages serves it (gzip; :mod:`tools.pages_server`), in headless Chromium with
other hosts blocked (:mod:`tools.page_audit`). Then, for each page:

* the bytes sent before any interaction stay under :data:`BUDGET_BYTES`;
* no console error, no failed request, no request to another host, and
  no request for an icon webfont;
* the browser renders at most :data:`MAX_RENDERED` elements before the reader
  scrolls (what is far below the view waits: ``content-visibility: auto``);
* the layout shifts by less than :data:`MAX_LAYOUT_SHIFT` (and so does a page
  opened at the in-page explorer, at a phone's and a desktop's width), and
  the colour theme is set before the first paint;
* no script typesets math: every formula arrived typeset by KaTeX (with
  MathML for screen readers, its visible HTML hidden from them), none is a
  KaTeX error, none is focusable, and no TeX source is left in the text;
* axe-core finds no WCAG 2.1 A or AA violation in the article (the markup
  the book and its extensions write); one in the theme's chrome fails too,
  unless :data:`THEME_ALLOWLIST` names it with its reason;
* it names a favicon the site serves, and has a meta description;
* it links one stylesheet for the screen, which holds every rule of the
  stylesheets it joins (parsed by tinycss2) but Font Awesome's glyph rules
  and the selectors that ask for a class no page or script of the site
  names (nor a prefix of it that a script completes, ``ae-key-${key}``),
  and whose every ``url()`` names a file the site serves;
* its markup carries only what it uses: the theme's icons inline (no Font
  Awesome script or webfont), the search scripts only on the search page,
  and every figure sized and loaded lazily; and the toggle of a collapsed
  first code cell says what the cell holds.

Nothing here times anything: Lighthouse's timings are ``make bench``'s.
"""

from __future__ import annotations

import json
import posixpath
import re
import urllib.request
from pathlib import Path

import pytest
import tinycss2

from tools import page_audit, toc

BUDGET_BYTES = 700 * 1024
#: Elements rendered (styled, laid out, painted) as a phone opens a page, before it scrolls. Every
#: element was, before the parts far below the view were left to content-visibility: up to 11,500
#: on the longest chapter (8.), whose layout blocked a phone's main thread (4x CPU) for 0.77 s. With
#: the sections after the first left to it, up to 2,703 (chapter 11, whose first section holds many
#: formulas; chapter 10's was split in two when it reached 3,087); with the first section's parts
#: from its fifth child on as well, at most 2,483 (the notation page, whose second section, near
#: the first screen, is one table: it reached 2,627 as that table grew, and 1,997 once its scores
#: became a section of their own). Counted, not timed.
MAX_RENDERED = 2600
MAX_LAYOUT_SHIFT = 0.05
MATH_SCRIPTS = ("mathjax", "katex", "auto-render", "live-math")
#: axe-core rule id -> why a violation of it in the theme's own chrome is accepted. None today.
THEME_ALLOWLIST: dict[str, str] = {}


@pytest.fixture(scope="module")
def pages(site_dir) -> list[str]:
    found = page_audit.site_pages(site_dir)
    assert set(toc.pages()) <= set(found), "a page of the table of contents was not built"
    return found


@pytest.fixture(scope="module")
def visits(browser, pages_server, pages) -> dict[str, tuple[page_audit.Visit, list[dict]]]:
    """Every page, loaded cold at a phone's viewport: {page: (visit, axe violations)}."""
    found = {}
    for path in pages:
        page = page_audit.open_page(browser, pages_server)
        try:
            found[path] = page_audit.visit(page, pages_server, path), page_audit.axe(page)
        finally:
            page.context.close()
    return found


def report(problems: dict[str, list]) -> str:
    return "\n".join(f"{page}: {problem}" for page, found in problems.items() for problem in found)


def test_every_page_transfers_less_than_the_budget(visits):
    over = {path: [f"{v.bytes / 1024:.0f} KB > {BUDGET_BYTES / 1024:.0f} KB; largest: "
                   + ", ".join(f"{url} {size / 1024:.0f} KB" for url, size in
                               sorted(v.sent.items(), key=lambda item: -item[1])[:5])]
            for path, (v, _) in visits.items() if v.bytes >= BUDGET_BYTES}
    assert over == {}, report(over)
    assert all(v.bytes > 10_000 for v, _ in visits.values()), "the byte count saw no page"


def test_a_phone_renders_only_what_is_near_the_view(visits):
    over = {path: [f"{v.rendered} elements rendered before any scroll > {MAX_RENDERED}"]
            for path, (v, _) in visits.items() if v.rendered > MAX_RENDERED}
    assert over == {}, report(over)
    assert max(v.rendered for v, _ in visits.values()) > 100, "the count saw no element"


def test_no_page_fetches_an_icon_webfont(visits):
    # The icons are inline SVG; a pseudo-element left in the theme's icon font (even an empty one,
    # as the solutions' chevron was) still makes the browser fetch Font Awesome's 150 KB webfont.
    fetched = {path: [url for url in v.sent if "/fontawesome/" in url] for path, (v, _) in visits.items()}
    fetched = {path: urls for path, urls in fetched.items() if urls}
    assert fetched == {}, report(fetched)


def test_no_console_error_failed_request_or_other_host(visits):
    problems = {path: v.errors + v.failed + [f"other host: {u}" for u in v.external]
                for path, (v, _) in visits.items()}
    problems = {path: found for path, found in problems.items() if found}
    assert problems == {}, report(problems)


def test_the_layout_does_not_shift(visits):
    shifted = {path: [f"CLS {v.cls:.3f}: {json.dumps(v.shifts)[:1500]}"]
               for path, (v, _) in visits.items() if v.cls >= MAX_LAYOUT_SHIFT}
    assert shifted == {}, report(shifted)


def explorer_links(site_dir, pages: list[str]) -> list[str]:
    """``page#id`` of every in-page explorer of the site."""
    pattern = re.compile(r'<div class="attention-explorer[^"]*" id="([^"]+)" data-attention-explorer')
    return [f"{path}#{ident}" for path in pages for ident in pattern.findall((site_dir / path).read_text())]


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_opening_a_page_at_the_explorer_does_not_shift_it(browser, pages_server, site_dir, pages, viewport):
    links = explorer_links(site_dir, pages)
    assert links, "no page has an explorer"
    shifted = {}
    for link in links:
        page = page_audit.open_page(browser, pages_server,
                                    **(page_audit.PHONE if viewport == "phone" else page_audit.DESKTOP))
        try:
            visit = page_audit.visit(page, pages_server, link)
        finally:
            page.context.close()
        if visit.cls >= MAX_LAYOUT_SHIFT:
            shifted[link] = [f"CLS {visit.cls:.3f}: {json.dumps(visit.shifts)[:1500]}"]
    assert shifted == {}, report(shifted)


THEME = "() => document.documentElement.dataset.theme"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_colour_theme_is_set_before_the_first_paint(browser, pages_server, pages, scheme):
    """The theme's script sets ``data-theme`` from ``auto`` only at DOMContentLoaded, maybe after a first paint.

    Rules keyed on it (Pygments' line height of code blocks) then move the page: on CI's slower
    runner, a page opened at the explorer shifted by 0.069 (here only with the CPU throttled 8x).
    Whether the first paint comes first depends on timing; this checks the cause instead. The page's
    head resolves the theme before any stylesheet: with the theme's script blocked, the page has the
    theme the script would have set.
    """
    found = {}
    for blocked in (True, False):
        page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **page_audit.PHONE)
        if blocked:
            page.route("**/pydata-sphinx-theme.js*", lambda route: route.abort())
        try:
            for path in ("book/index.html", "book/smoothing.html"):
                page.goto(f"{pages_server.url}/{path}", wait_until="load")
                found.setdefault(path, {})[blocked] = page.evaluate(THEME)
        finally:
            page.context.close()
    assert found == {path: {True: scheme, False: scheme} for path in found}


EXPLORER_HEIGHTS = """() => [...document.querySelectorAll('[data-attention-explorer]')]
  .map(e => e.getBoundingClientRect().height)"""
#: How far the box reserved for the explorer before its script runs may be from the built explorer's height.
RESERVED_SLACK_PX = 40


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_the_explorer_box_is_reserved_before_its_script_runs(browser, pages_server, site_dir, pages, viewport):
    """Whether the shift above is seen depends on when the first paint comes; this does not.

    The box the stylesheet reserves (the script blocked) has about the height of the explorer the
    script builds, so a page opened at the explorer does not jump when it appears.
    """
    context_kw = page_audit.PHONE if viewport == "phone" else page_audit.DESKTOP
    heights = {}
    for blocked in (True, False):
        page = page_audit.open_page(browser, pages_server, **context_kw)
        if blocked:
            page.route("**/attention_explorer.js*", lambda route: route.abort())
        try:
            for path in {link.split("#")[0] for link in explorer_links(site_dir, pages)}:
                page.goto(f"{pages_server.url}/{path}", wait_until="load")
                page.evaluate("document.fonts.ready.then(() => 0)")
                heights.setdefault(path, {})[blocked] = page.evaluate(EXPLORER_HEIGHTS)
        finally:
            page.context.close()
    assert heights, "no page has an explorer"
    off = {path: f"reserved {h[True]} px, built {h[False]} px" for path, h in heights.items()
           if len(h[True]) != len(h[False]) or not h[False]
           or any(abs(a - b) > RESERVED_SLACK_PX for a, b in zip(h[True], h[False], strict=True))}
    assert off == {}, report({path: [text] for path, text in off.items()})


def test_math_arrives_typeset_and_no_script_typesets_it(visits):
    problems = {}
    for path, (v, _) in visits.items():
        math = v.math
        found = [f"math script requested: {u}" for u in v.scripts if any(m in u.lower() for m in MATH_SCRIPTS)]
        found += [f"math runtime on the page: {name}" for name in math["runtime"]]
        found += [f"not typeset: {tex!r}" for tex in math["untypeset"]]
        found += [f"KaTeX error: {text!r}" for text in math["errors"]]
        found += [f"TeX source in the text: {text!r}" for text in math["raw_tex"]]
        found += [f"{math[key]} formulas {what}" for key, what in (
            ("without_mathml", "without MathML for screen readers"),
            ("html_not_hidden", "whose visible HTML screen readers would read too"),
            ("focusable", "elements focusable (in the Tab order)")) if math[key]]
        if found:
            problems[path] = found
    assert problems == {}, report(problems)
    assert sum(v.math["formulas"] for v, _ in visits.values()) > 100, "the math checks saw no formulas"


def test_no_accessibility_violation_in_our_markup_nor_unexplained_in_the_theme(visits):
    problems = {}
    for path, (_, violations) in visits.items():
        found = []
        for violation in violations:
            ours = [n["html"] for n in violation["nodes"] if n["in_content"]]
            theirs = [n["html"] for n in violation["nodes"] if not n["in_content"]]
            if ours:
                found.append(f"{violation['id']} ({violation['help']}) in the article: {ours[:3]}")
            if theirs and violation["id"] not in THEME_ALLOWLIST:
                found.append(f"{violation['id']} ({violation['help']}) in the theme: {theirs[:3]}")
        if found:
            problems[path] = found
    assert problems == {}, report(problems)


#: The tinted backgrounds of the book, on which a link must keep its contrast (an exercise's title, an answer box).
TINTED = ("div.exercise > p.admonition-title", ".answer-box", "div.chapter-goals")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_link_keeps_its_contrast_on_every_tinted_background(browser, pages_server, site_dir, pages, scheme):
    """A link added to each tinted box of a chapter that has them: axe-core's colour-contrast rule passes on it."""
    path = next(p for p in pages if all(box in (site_dir / p).read_text()
                                        for box in ('class="answer-box"', 'class="exercise admonition',
                                                                   'class="chapter-goals')))
    page = page_audit.open_page(browser, pages_server, color_scheme=scheme, **page_audit.PHONE)
    try:
        page_audit.visit(page, pages_server, path)
        added = page.evaluate("""selectors => selectors.map(sel => {
            const box = document.querySelector(sel);
            if (!box) return 0;
            const link = Object.assign(document.createElement("a"), {href: "#", className: "reference internal",
                                                                      textContent: "a link on a tint"});
            box.append(" ", link);
            link.id = "tinted-" + selectors.indexOf(sel);
            return 1; })""", list(TINTED))
        assert added == [1] * len(TINTED), f"{path} lacks one of {TINTED}"
        violations = page_audit.axe(page, rules=["color-contrast"],
                                    include=[f"#tinted-{i}" for i in range(len(TINTED))])
    finally:
        page.context.close()
    assert violations == [], violations


def test_every_page_names_a_favicon_the_site_serves_and_has_a_description(site_dir, pages, pages_server):
    problems = {}
    for path in pages:
        html = (site_dir / path).read_text()
        found = []
        icon = re.search(r'<link rel="icon" href="([^"]+)"', html)
        if icon is None:
            found.append("no <link rel=icon>")
        else:
            url = f"{pages_server.url}/{path.rsplit('/', 1)[0] + '/' if '/' in path else ''}{icon.group(1)}"
            with urllib.request.urlopen(url, timeout=10) as response:
                if response.status != 200 or not response.read():
                    found.append(f"favicon {url}: {response.status}")
        description = re.search(r'<meta (?:name="description" content="([^"]*)"|content="([^"]*)" name="description")',
                                html)
        if description is None or len(description.group(1) or description.group(2)) < 50:
            found.append("no meta description of 50 characters or more")
        if not re.search(r'<html[^>]* lang="[a-z]', html) or not re.search(r"<title>[^<]+</title>", html):
            found.append("no <html lang> or no <title>")
        if found:
            problems[path] = found
    assert problems == {}, report(problems)


#: The theme's icons every page of the book after the first shows (header, sidebars, previous link) ...
PAGE_ICONS = {"angle-left", "arrow-up", "bars", "circle-half-stroke", "moon", "sun", "download", "expand", "file-pdf",
              "magnifying-glass"}
#: ... and those of a page with code cells: source downloads, page contents, launch and Live Code, next link.
#: (The theme's header is gone: it held a second search field, lean_pages keeps the sidebar's, and a
#: page-contents toggle ("outdent") shown neither at a phone's width nor at a desktop's; the article
#: header has the one readers see, "list".)
NOTEBOOK_ICONS = {"angle-right", "code", "file", "list", "play", "rocket"}
#: What the toggle of a chapter's collapsed first cell says (``_ext/page_meta``): what that cell holds.
SET_UP_TOGGLES = {"Show the imports", "Show the imports and set-up"}
#: How the home page's first figure loads (``_ext/lean_pages/images.py``).
FIRST_SCREEN = 'loading="eager" fetchpriority="high"'
ICON = re.compile(r'<svg class="svg-inline--fa [^"]*?fa-([a-z-]+)(?: fa-lg)?"[^>]*>'
                  r'<path fill="currentColor" d="[^"]{20,}')


def test_pages_carry_only_what_they_use(site_dir, pages):
    problems, set_up_toggles = {}, 0
    for path in pages:
        html = (site_dir / path).read_text()
        found = [f"Font Awesome {what}" for what in ("fontawesome.js", "fa-solid-900") if what in html]
        found += [f"icon left to a script or font: {tag}" for tag in re.findall(r'<(?:i|span) class="[^"]*\bfa-[^>]*>',
                                                                                html)]
        if path != "search.html":
            found += [f"search script: {s}" for s in re.findall(r'<script[^>]*(?:searchtools|searchindex)[^>]*>', html)]
        wanted = set()
        if path in toc.pages()[1:]:
            wanted = PAGE_ICONS | (NOTEBOOK_ICONS if 'class="cell' in html else set())
        if wanted - set(ICON.findall(html)):
            found.append(f"icons missing: {sorted(wanted - set(ICON.findall(html)))}")
        toggle = re.search(r'<div class="cell tag_hide-input[^"]*">\s*<details[^>]*>\s*<summary>\s*'
                           r'<p class="collapsed admonition-title">([^<]*)</p>', html)
        first_cell = html.find('<div class="cell')
        if toggle and toggle.start() == first_cell:
            set_up_toggles += 1
            if toggle[1] not in SET_UP_TOGGLES:
                found.append(f"the collapsed first cell's toggle says {toggle[1]!r}")
        figures = re.findall(r'<img [^>]*src="[^"]*_images/[^"]*"[^>]*>', html)
        found += [f"figure without width/height: {tag[:120]}" for tag in figures
                  if not re.search(r'\bwidth="\d+"', tag) or not re.search(r'\bheight="\d+"', tag)]
        # Lazy, but the home page's first figure: its first screen's largest paint is fetched at once.
        for index, tag in enumerate(figures):
            wanted_loading = FIRST_SCREEN if (path, index) == (toc.pages()[0], 0) else 'loading="lazy"'
            if wanted_loading not in tag:
                found.append(f"figure not {wanted_loading}: {tag[:120]}")
        if found:
            problems[path] = found
    assert problems == {}, report(problems)
    assert any("_images/" in (site_dir / p).read_text() for p in pages), "no page has a figure"
    assert set_up_toggles, "no page has a collapsed first code cell"


#: A link to a stylesheet for the screen (not for print only).
SCREEN_STYLESHEET = re.compile(r'<link\b(?=[^>]*\brel="stylesheet")(?![^>]*\bmedia="print")[^>]*\bhref="([^"]*)"')
URL = re.compile(r"""url\(\s*["']?([^"')]+?)["']?\s*\)""")
GLYPH_SELECTORS = re.compile(r"(\.fa-[\w-]+:(before|after),?)+")


def rules(css: str) -> list:
    """The rules of ``css``, an at-rule's own rules after it (``@media``, ``@supports``), comments skipped."""
    found = []
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        found.append(rule)
        if rule.type == "at-rule" and rule.content is not None and rule.lower_at_keyword in ("media", "supports"):
            found += rules(tinycss2.serialize(rule.content))
    return [rule for rule in found if rule.type != "error"]


def is_glyph_rule(rule) -> bool:
    """A Font Awesome rule that only gives ``.fa-NAME`` icons their glyph (``.fa-x:before{content:"..."}``)."""
    if rule.type != "qualified-rule" or not GLYPH_SELECTORS.fullmatch(tinycss2.serialize(rule.prelude).strip()):
        return False
    declarations = tinycss2.parse_blocks_contents(rule.content, skip_comments=True, skip_whitespace=True)
    return [d.lower_name for d in declarations if d.type == "declaration"] == ["content"]


def selectors(rule_list: list) -> list[str]:
    return [tinycss2.serialize(r.prelude).strip() for r in rule_list if r.type == "qualified-rule"]


def selector_list(prelude: str) -> list[str]:
    """The selectors of a rule's prelude (split at the commas outside brackets), stripped."""
    parts, depth, start = [], 0, 0
    for k, char in enumerate(prelude):
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            parts.append(prelude[start:k].strip())
            start = k + 1
    return [*parts, prelude[start:].strip()]


def site_words(site_dir: Path) -> tuple[set[str], tuple[str, ...]]:
    """The words of the site's pages and scripts, and the prefixes its scripts complete (``"x-" + y``, ``x-${y}``)."""
    words, prefixes = set(), set()
    for path in [*site_dir.rglob("*.html"), *site_dir.rglob("*.js")]:
        text = path.read_text(errors="replace")
        words.update(re.findall(r"[_a-zA-Z][\w-]*", text))
        prefixes.update(re.findall(r"""[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?=\$\{|["']\s*\+)""", text))
    return words, tuple(prefixes)


def can_match(selector: str, words: set[str], prefixes: tuple[str, ...]) -> bool:
    """Whether every class ``selector`` asks for (outside brackets: ``:not(.x)``, ``[class~=x]``) is named."""
    bare = re.sub(r"\([^()]*\)|\[[^\]]*\]", "", re.sub(r"\([^()]*\([^()]*\)[^()]*\)", "", selector))
    return all(name in words or name.startswith(prefixes) for name in re.findall(r"\.(-?[_a-zA-Z][\w-]*)", bare))


def test_every_page_links_one_stylesheet_which_holds_every_rule_it_joins(site_dir, pages):
    links = {path: SCREEN_STYLESHEET.findall((site_dir / path).read_text()) for path in pages}
    bad = {path: found for path, found in links.items() if path != "index.html" and len(found) != 1}
    assert bad == {}, bad  # the root page only redirects
    static = site_dir / "_static"
    for name in sorted({Path(found[0].split("?")[0]).name for found in links.values() if found}):
        css = (static / name).read_text()
        joined = re.match(r'@charset "UTF-8";\n/\* lean_pages joins: ([^*]*) \*/', css)[1].split()
        assert len(joined) >= 10, joined  # the theme's, Sphinx's and the extensions' stylesheets
        sources = [rule for path in joined for rule in rules((static / path).read_text())]
        glyphs = [rule for rule in sources if is_glyph_rule(rule)]
        assert len(glyphs) > 1000  # Font Awesome's glyph rules are still in the theme: their removal is checked
        kept = [rule for rule in sources if not is_glyph_rule(rule) and not (rule.type == "at-rule"
                                                                            and rule.lower_at_keyword == "charset")]
        words, prefixes = site_words(site_dir)
        wanted = [[s for s in selector_list(prelude) if can_match(s, words, prefixes)] for prelude in selectors(kept)]
        assert [selector_list(prelude) for prelude in selectors(rules(css))] == [found for found in wanted if found]
        dropped = sum(len(selector_list(prelude)) for prelude in selectors(kept)) - sum(map(len, wanted))
        assert dropped > 1000  # most of Bootstrap's utilities and components in the theme's stylesheet
        grouping = ("media", "supports", "layer", "container")  # dropped when none of their rules is left
        assert [r.lower_at_keyword for r in rules(css) if r.type == "at-rule" and r.lower_at_keyword not in grouping] \
            == ["charset"] + [r.lower_at_keyword for r in kept if r.type == "at-rule"
                              and r.lower_at_keyword not in grouping]
        urls = {url for url in re.findall(r'url\("([^"]+)"\)', css) if not re.match(r"[a-z]+:|#", url)}
        assert urls <= {posixpath.normpath(posixpath.join(posixpath.dirname(path), url)) for path in joined
                        for url in URL.findall((static / path).read_text()) if not re.match(r"[a-z]+:|#", url)}
        # What a browser fetches: KaTeX's woff2 fonts (the site leaves out their woff and ttf fallbacks).
        assert [url for url in urls if not url.endswith((".woff", ".ttf")) and not (static / url).is_file()] == []
        assert len([url for url in urls if url.startswith("katex/fonts/") and url.endswith(".woff2")]) == 20
