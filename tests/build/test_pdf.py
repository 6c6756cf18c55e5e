"""The printed book (``make pdf``, which ``make test`` runs before these tests).

The PDF is checked with pypdf (:mod:`tools.pdf_checks`) against the HTML
site: the chapters of the table of contents in order, numbered, each
starting a page; every numbered figure and the explorer's static figure; no
raw TeX; no launch menu, sliders or web-only sentences; every code line
whole and no bookkeeping cell. A print depends on
the book only, and the site links the PDF it holds.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

import pytest

from tools import pdf, pdf_checks, toc

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def printed_file() -> Path:
    if not pdf.PDF.is_file():
        pytest.fail(f"no printed book in {pdf.PDF}: run `make pdf` first")
    return pdf.PDF


@pytest.fixture(scope="module")
def printed(printed_file) -> pdf_checks.Printed:
    """The printed book, read once (pypdf parses every page) for the tests that check it."""
    return pdf_checks.read_pdf(printed_file)


def test_the_pdf_has_every_chapter_and_figure_and_nothing_for_the_web_only(printed, site_dir):
    expected = pdf_checks.expected_from_site(site_dir)
    assert len(expected.chapters) == len(toc.documents()) - 1 and expected.figures and expected.explorers
    assert pdf_checks.check_pdf(printed, expected) == []


def test_a_solution_left_out_of_the_print_is_a_problem(printed, site_dir):
    expected = pdf_checks.expected_from_site(site_dir)
    assert len(expected.solutions) >= 3 * 10, "three to five exercises in each of the ten chapters"
    title, words = expected.solutions[0]
    unprinted = dataclasses.replace(expected, solutions=[(title, f"{words} that the book never printed")])
    assert pdf_checks.check_pdf(printed, unprinted) == [
        f"the solution {title!r} is not printed (or not its words {words + ' that the book never printed'!r})"]


def test_the_print_gathers_each_chapters_solutions_open_at_its_end():
    page = (pdf.SINGLE_PAGE_SITE / pdf.root_page()).read_text(encoding="utf-8")
    assert 'class="solution admonition"' in page and '<details class="solution' not in page, "open, not closed"
    chapters = [doc for doc in toc.documents() if f'id="solutions-{doc.replace("/", "-")}"' in page]
    assert len(chapters) >= 8
    for doc in chapters:
        stem = doc.removeprefix("book/")
        exercises = page.index(f'id="exercises-{stem}"')
        gathered = page.index(f'id="solutions-{doc.replace("/", "-")}"')
        following = page.find('<span id="document-', exercises)
        assert exercises < gathered < (following if following > 0 else len(page)), doc


def test_a_code_line_cut_at_the_edge_or_bookkeeping_printed_is_a_problem(printed, site_dir):
    """The check sees a code line that the print cut short, and a cell that glues a value."""
    expected = pdf_checks.expected_from_site(site_dir)
    printed_line = max(expected.code_lines, key=len)  # the longest code line the book prints
    assert len(printed_line) > 60
    assert pdf_checks.code_problems(printed.pages, [printed_line]) == []
    cut = pdf_checks.code_problems(printed.pages, [printed_line + " + tail_the_print_never_showed"])
    assert len(cut) == 1 and cut[0].startswith("1 code lines not printed whole")
    glued = [*printed.pages[:-1], [*printed.pages[-1], 'glue("some-number", 0.5, display=False)']]
    assert pdf_checks.code_problems(glued, []) == [f"bookkeeping ('glue(') printed on pages [{len(glued)}]"]


TINY_BOOK = """<!DOCTYPE html><html><head><title>A tiny book</title></head><body>
<h1>A tiny book</h1><p>One paragraph.</p>
<table><tr><th>x</th><th>y</th></tr><tr><td>1</td><td>2</td></tr></table></body></html>"""


def test_a_print_depends_on_the_book_only(browser, tmp_path):
    """Two prints of the same page, seconds apart, are the same bytes: the date is the last commit's
    time and the tagged PDF's node ids (Blink's, which shift between runs) are renumbered."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "book.html").write_text(TINY_BOOK)
    first, second = tmp_path / "first.pdf", tmp_path / "second.pdf"
    pdf.print_pdf(browser, site, first, page_name="book.html")
    time.sleep(1.1)  # Chromium dates a PDF to the second
    pdf.print_pdf(browser, site, second, page_name="book.html")
    assert first.read_bytes() == second.read_bytes()


def test_every_page_links_the_pdf_the_site_holds(printed_file, site_dir):
    assert (site_dir / pdf.PDF.name).read_bytes() == printed_file.read_bytes()
    for name in toc.pages():
        page = (site_dir / name).read_text(encoding="utf-8")
        links = re.findall(rf'href="([^"]*{re.escape(pdf.PDF.name)})"', page)
        assert links, f"{name} does not link the PDF"
        assert all((site_dir / name).parent.joinpath(link).resolve() == (site_dir / pdf.PDF.name).resolve()
                   for link in links), links
