"""Numbers in the prose read as numbers: never in Python's e-notation ("6.4e-06"), never bold for being glued.

No number in the prose of the built pages is in Python's e-notation: it reads 6.4 × 10⁻⁶.

Chapters glue numbers and format them in the prose (``{glue:text}`name:.1e```);
``_ext/katex_math`` typesets each glued number that comes out in e-notation as
a power of ten. This scans the text of every page of the book as the reader
reads it, code, outputs and formulas aside (where ``1e-6`` is Python, or a
formula's own digits), for a number in e-notation.

And a glued number is set in the weight of the text around it: myst-nb's
stylesheet makes every glued text bold, and chapter 12's paragraph on
training showed over twenty bold numbers; bold is for what the source
bolds (``**...**``). The test reads the computed weights in chapter 12,
light and dark, at a phone's and a desktop's width.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tools import chromium

#: A number in e-notation, not inside a longer word ("x1e5", a hash).
E_NOTATION = re.compile(r"(?<![\w.])[-\u2212]?\d+(?:\.\d+)?[eE][-+\u2212]?\d+(?!\w)")
#: Elements whose text is not prose: code, outputs, formulas (KaTeX's HTML and MathML), scripts, navigation.
SKIP_TAGS = {"pre", "code", "script", "style", "math", "svg", "nav", "head", "noscript", "template"}
#: An answer box's hint lists what a reader may type ("0.25, -2.5e-3, 1/4"): input, not prose.
SKIP_CLASSES = {"katex", "cell_input", "cell_output", "highlight", "output", "answer-box"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Prose(HTMLParser):
    """The text of a page outside :data:`SKIP_TAGS` and :data:`SKIP_CLASSES`, one string per text node."""

    def __init__(self):
        super().__init__()
        self.stack: list[bool] = []  # for each open element: is its text skipped?
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = tag in SKIP_TAGS or bool(classes & SKIP_CLASSES)
        self.stack.append(skipped or bool(self.stack and self.stack[-1]))

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]) and data.strip():
            self.texts.append(data)


def e_notation(html: str) -> list[str]:
    parser = Prose()
    parser.feed(html)
    return [f"{m.group(0)!r} in {text.strip()[:80]!r}" for text in parser.texts for m in E_NOTATION.finditer(text)]


def test_the_scan_finds_e_notation_in_prose_and_not_in_code_or_math():
    assert e_notation("<p>off by <span class='pasted-text'>6.4e-06</span>, or 3E+10.</p>") == [
        "'6.4e-06' in '6.4e-06'", "'3E+10' in ', or 3E+10.'"]
    assert e_notation("<p><code>1e-6</code> <span class='katex'><span>1e5</span></span></p>"
                      "<div class='cell_output'><pre>8.1e-09</pre></div><p>10<sup>-6</sup> x1e5</p>") == []


def test_no_page_has_a_number_in_e_notation_in_its_prose(site_dir):
    pages = sorted((site_dir / "book").glob("*.html"))
    assert len(pages) >= 14
    found = {page.name: hits for page in pages if (hits := e_notation(page.read_text(encoding="utf-8")))}
    assert found == {}, "\n".join(f"{name}: {hits}" for name, hits in found.items())


#: (weight of the glued text, weight of the element around it, the text) of every glued text in the article.
GLUED_WEIGHTS = """() => [...document.querySelectorAll('article span.pasted-text')].map(span => [
  getComputedStyle(span).fontWeight, getComputedStyle(span.parentElement).fontWeight, span.textContent.trim()])"""
VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}}}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("view", VIEWS)
def test_a_glued_number_has_the_weight_of_its_text(browser, site_url, view, scheme):
    page = chromium.open_page(browser, {site_url}, **VIEWS[view], color_scheme=scheme)
    try:
        page.goto(f"{site_url}/book/heads-together.html", wait_until="load")
        found = page.evaluate(GLUED_WEIGHTS)
    finally:
        page.context.close()
    assert len(found) > 100, "the test saw no glued text"
    bolder = [f"{text!r}: weight {own} in text of weight {around}" for own, around, text in found if own != around]
    assert bolder == [], f"{len(bolder)} glued texts bolder or lighter than their text:\n" + "\n".join(bolder[:20])
