"""What the printed book must have, checked with pypdf: ``make pdf`` and the tests use these checks.

* every chapter of the table of contents, numbered, in order, each starting a
  new page (Chromium writes the headings as the PDF's outline; each chapter's
  title must also be the topmost line of its page);
* every numbered figure ("Fig. 5.1") with its image, and the explorer's
  static figure;
* every solution of the exercises, by its title ("Solution to Exercise 4.2")
  and a run of its words (the single-page build gathers them, open, at the
  end of each chapter: ``_ext/exercises``), so that none is lost closed;
* no untypeset TeX (``\\(``, ``$$``, ``$\\sigma$`` ...): math is typeset;
* nothing that only works on the web page: no launch menu, no sliders, no
  buttons, no sentence about them (chapters mark such prose ``screen-only``);
* every line of code the page prints (a cell's code and output, a listing),
  whole: wrapped or not, all its characters are in the PDF's text, in order
  (Chromium leaves out the glyphs that a box cuts off, so a cut line is a
  line that is not there whole);
* no bookkeeping: the cells that glue values into the prose are not on the
  page (``remove-cell``), so ``glue(`` is never printed (a figure's glue sits
  in its hidden-input cell, whose code is not printed).

The expected chapters come from the table of contents (:mod:`tools.toc`), their
titles and figures from the built pages, never from a list written here.
"""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

from tools import toc

#: Words that only the web page's controls or its web-only prose carry (case-sensitive:
#: "samples" and "launch" occur in the book's prose).
WEB_ONLY = ("Noise σ", "Temperature τ (log scale)", "Samples N", "Best τ (leave-one-out)", "Copy to clipboard",
            "Show code cell", "Hide code cell", "Toggle hidden content", "Live Code", "Binder", "rocket",
            "Turn on JavaScript", "Drag the sliders", "make live", "Check your answer")
#: TeX left as text: delimiters, or a ``$...$`` holding a command.
RAW_TEX = (r"\\\(", r"\\\)", r"\\\[", r"\\\]", r"\$\$", r"\$[^$\n]{0,60}\\[A-Za-z]+[^$\n]{0,60}\$")
RUNNING_HEADER = "Self-Attention, by Hand"
PAGE_NUMBER = re.compile(r"\d+ / \d+")


@dataclasses.dataclass
class Expected:
    chapters: list[str]  # "1. Introduction", in reading order
    figures: list[str]  # the figures' numbers, "5.1"
    explorers: list[str]  # the captions of the explorers' static figures (one image each, no number)
    solutions: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (title, words of its prose)
    code_lines: list[str] = dataclasses.field(default_factory=list)  # every line of code the pages print


def _text(fragment: str) -> str:
    """The text of an HTML fragment, whitespace collapsed, the heading's "#" link dropped."""
    fragment = re.sub(r'<a class="headerlink".*?</a>', "", fragment, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def _figures(page: str) -> list[str]:
    return re.findall(r'<span class="caption-number">Fig\. ([\d.]+) </span>', page)


def _explorers(page: str) -> list[str]:
    """The printed caption of each explorer's static figure (its screen-only words left out)."""
    captions = re.findall(r'<figure class="attention-explorer-fallback">.*?<figcaption>(.*?)</figcaption>', page, re.S)
    return [_text(re.sub(r'<span class="screen-only">.*?</span>', "", c, flags=re.S)) for c in captions]


#: A solution (``_ext/exercises``): ``<details>`` on the web pages, an open ``<div>`` in the single page.
SOLUTION = re.compile(r'<(?:details|div) class="solution admonition" id="([^"]+)">\s*'
                      r'<(?:summary|p) class="admonition-title">(.*?)</(?:summary|p)>', re.S)
#: The words compared with the PDF's text: enough to be one solution's, few enough to stay on one page.
SOLUTION_WORDS = 6


class _ProseRuns(HTMLParser):
    """The text runs of an HTML fragment between its formulas (KaTeX) and code cells, which are skipped."""

    SKIPPED = ("katex", "cell")

    def __init__(self):
        super().__init__()
        self.runs, self._depth = [""], 0

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if self._depth or any(name in classes for name in self.SKIPPED):
            self._depth += 1
            if self._depth == 1:
                self.runs.append("")

    def handle_endtag(self, tag):
        if self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if not self._depth:
            self.runs[-1] += data


def _prose_words(fragment: str) -> str:
    """The first :data:`SOLUTION_WORDS` words of the longest run of a solution's prose between formulas."""
    parser = _ProseRuns()
    parser.feed(fragment)
    runs = [re.sub(r"\s+", " ", html.unescape(run)).strip(" ,.;:)") for run in parser.runs]
    return " ".join(max(runs, key=lambda run: len(run.split())).split()[:SOLUTION_WORDS])


def _solutions(page: str) -> list[tuple[str, str]]:
    """(title, words) of every solution of a page: "Solution to Exercise 4.2", and words of its prose."""
    found = []
    for match in SOLUTION.finditer(page):
        title = _text(match.group(2))
        numbered = re.match(r"Solution to Exercise [\d.]+", title)
        content = re.search(rf'<section id="{re.escape(match.group(1))}-content">(.*?)</section>', page[match.end():],
                            re.S)
        found.append((numbered.group(0) if numbered else title, _prose_words(content.group(1) if content else "")))
    return found


class _PrintedCode(HTMLParser):
    """The lines of every code block a page prints: each ``pre`` in a ``div.highlight``, but those the
    print stylesheet hides (``_ext/publish``: a hidden cell's code, in ``<details class="hide">``, and
    ``screen-only`` parts)."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                      "wbr"})

    def __init__(self):
        super().__init__()
        self.lines: list[str] = []
        self._open: list[tuple[str, bool, bool]] = []  # (tag, hidden, in a code block), outermost first
        self._block: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        hidden, code = self._open[-1][1:] if self._open else (False, False)
        hidden = hidden or "screen-only" in classes or (tag == "details" and "hide" in classes)
        code = code or (tag == "div" and "highlight" in classes)
        if tag == "pre" and code and not hidden and self._block is None:
            self._block = []
        self._open.append((tag, hidden, code))

    def handle_endtag(self, tag):
        while self._open:
            opened, *_ = self._open.pop()
            if opened == "pre" and self._block is not None:
                self.lines += "".join(self._block).splitlines()
                self._block = None
            if opened == tag:
                break

    def handle_data(self, data):
        if self._block is not None:
            self._block.append(data)


def _code_lines(page: str) -> list[str]:
    """Every line of code that ``page`` prints, blank lines left out."""
    parser = _PrintedCode()
    parser.feed(page)
    return [line for line in parser.lines if line.strip()]


def expected_from_single_page(page: str, documents: list[str] | None = None) -> Expected:
    """The chapters (the toc's documents after the root) and figures of the single-page build's page."""
    chapters = []
    for doc in (documents or toc.documents())[1:]:
        found = re.search(rf'<span id="document-{re.escape(doc)}"></span>.*?<h[1-6][^>]*>(.*?)</h[1-6]>', page, re.S)
        chapters.append(_text(found.group(1)) if found else f"<{doc} is not in the single page>")
    return Expected(chapters, _figures(page), _explorers(page), _solutions(page), _code_lines(page))


def expected_from_site(site: Path, pages: list[str] | None = None) -> Expected:
    """The chapters and figures of the HTML site: each page of the toc but the root, its ``<h1>``."""
    chapters, figures, explorers, solutions, code = [], [], [], [], []
    for name in (pages or toc.pages())[1:]:
        page = (site / name).read_text(encoding="utf-8")
        # The article's title (the header repeats it without its number or "#" link).
        chapters.append(_text(next(h for h in re.findall(r"<h1[^>]*>(.*?)</h1>", page, re.S) if "headerlink" in h)))
        figures += _figures(page)
        explorers += _explorers(page)
        solutions += _solutions(page)
        code += _code_lines(page)
    return Expected(chapters, figures, explorers, solutions, code)


def _lines(text: str) -> list[str]:
    lines = (re.sub(r"\s+", " ", line).strip() for line in text.splitlines())
    return [ln for ln in lines if ln and ln != RUNNING_HEADER and not PAGE_NUMBER.fullmatch(ln)]


def top_line(page) -> str:
    """The highest line of body text on a pypdf ``page`` (the running header left out)."""
    rows: dict[float, str] = {}

    def visit(text, cm, tm, font, size):
        if text.strip():
            y = round(cm[5] + tm[5] * cm[3])
            rows[y] = rows.get(y, "") + text

    page.extract_text(visitor_text=visit)
    body = [(y, re.sub(r"\s+", " ", t).strip()) for y, t in rows.items()]
    body = [(y, t) for y, t in body if t and t != RUNNING_HEADER]
    return max(body)[1] if body else ""


def _outline(reader, entries=None) -> list[tuple[str, int]]:
    """Every (title, 0-based page) of the PDF's outline, depth first."""
    found = []
    for entry in reader.outline if entries is None else entries:
        if isinstance(entry, list):
            found += _outline(reader, entry)
        else:
            found.append((re.sub(r"\s+", " ", entry.title).strip(), reader.get_destination_page_number(entry)))
    return found


def chapter_problems(reader, expected: Expected, pages: list[list[str]]) -> list[str]:
    """Chapters missing, out of order, sharing a page, or not at the top of their first page."""
    chapters = [(title, n) for title, n in _outline(reader) if title in expected.chapters]
    problems = []
    if [t for t, _ in chapters] != expected.chapters:
        problems.append(f"chapters in the PDF's outline {[t for t, _ in chapters]} != {expected.chapters}")
    starts = [n for _, n in chapters]
    if len(set(starts)) != len(starts) or starts != sorted(starts):
        problems.append(f"chapters do not each start a new page: pages {[n + 1 for n in starts]}")
    for title, n in chapters:
        if title not in pages[n]:
            problems.append(f"chapter title {title!r} is not printed on page {n + 1}")
        elif top_line(reader.pages[n]) != title:
            problems.append(f"chapter {title!r} does not start page {n + 1}: {top_line(reader.pages[n])!r} is above it")
    return problems


@dataclasses.dataclass(frozen=True)
class Printed:
    """A PDF as the checks read it (the slow part: pypdf parses every page's content)."""

    reader: object  # pypdf.PdfReader, for the outline and the chapters' first pages
    pages: list[list[str]]  # each page's lines of text, running header and page number left out
    images: int  # images placed on the pages


def read_pdf(pdf: Path) -> Printed:
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    return Printed(reader, [_lines(page.extract_text() or "") for page in reader.pages],
                   sum(len(page.images) for page in reader.pages))


#: What a cell that glues a value into the prose shows: it must not be printed.
BOOKKEEPING = "glue("


def _compact(text: str) -> str:
    """``text`` without whitespace, its ligatures unfolded: what a printed line keeps, wrapped or not."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def code_problems(pages: list[list[str]], code_lines: list[str]) -> list[str]:
    """Code lines not printed whole (cut at the edge of their box or page), and bookkeeping printed."""
    printed = _compact("".join(line for page in pages for line in page))
    cut = [line.strip() for line in code_lines if _compact(line) not in printed]
    problems = [f"{len(cut)} code lines not printed whole (cut at the edge?), e.g. {cut[:3]}"] if cut else []
    where = [i + 1 for i, lines in enumerate(pages) if BOOKKEEPING in " ".join(lines)]
    if where:
        problems.append(f"bookkeeping ({BOOKKEEPING!r}) printed on pages {where}")
    return problems


def check_pdf(printed: Printed, expected: Expected) -> list[str]:
    """Everything wrong with the printed book (:func:`read_pdf`); an empty list means it passes."""
    reader, pages, images = printed.reader, printed.pages, printed.images
    text = "\n".join(line for page in pages for line in page)
    problems = chapter_problems(reader, expected, pages)
    if images < len(expected.figures) + len(expected.explorers):
        problems.append(f"{images} images for {len(expected.figures)} figures and {len(expected.explorers)} explorers")
    flat = re.sub(r"\s+", " ", text)
    problems += [f"the explorer's static figure is not printed (no caption {caption!r})"
                 for caption in expected.explorers if caption not in flat]
    problems += [f"figure {n} is not printed (no caption 'Fig. {n}')" for n in expected.figures
                 if not re.search(rf"Fig\. {re.escape(n)}\b", text)]
    readable = unicodedata.normalize("NFKC", flat)  # the PDF's text holds ligatures: "ﬁxed" for "fixed"
    for title, words in expected.solutions:
        if title not in readable or unicodedata.normalize("NFKC", words) not in readable:
            problems.append(f"the solution {title!r} is not printed (or not its words {words!r})")
    problems += code_problems(pages, expected.code_lines)
    for pattern in RAW_TEX:
        problems += [f"raw TeX printed: {m.group(0)!r}" for m in re.finditer(pattern, text)][:3]
    for word in WEB_ONLY:
        where = [i + 1 for i, lines in enumerate(pages) if word in " ".join(lines)]
        if where:
            problems.append(f"web-only {word!r} printed on pages {where}")
    return problems
