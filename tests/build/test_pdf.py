"""The printed book (``make pdf``, which ``make test`` runs before these tests).

The PDF is checked with pypdf (:mod:`tools.pdf_checks`) against the HTML
site: the chapters of the table of contents in order, numbered, each
starting a page; every numbered figure and the explorer's static figure; no
raw TeX; no launch menu, sliders or web-only sentences. The print is
reproducible, and the site links the PDF it holds.
"""

from __future__ import annotations

import re

import pytest

from _ext.publish.pdf import PDF_NAME
from tools import pdf, pdf_checks, toc

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def printed():
    if not pdf.PDF.is_file():
        pytest.fail(f"no printed book in {pdf.PDF}: run `make pdf` first")
    return pdf.PDF


def test_the_pdf_has_every_chapter_and_figure_and_nothing_for_the_web_only(printed, site_dir):
    expected = pdf_checks.expected_from_site(site_dir)
    assert len(expected.chapters) == len(toc.documents()) - 1 and expected.figures and expected.explorers
    assert pdf_checks.check_pdf(printed, expected) == []


def test_the_pdf_is_the_print_of_the_current_single_page(printed, browser, tmp_path):
    """Printing the single-page build again gives the same bytes: the file depends on the book only
    (its date is the last commit's time; the tagged PDF's node ids are renumbered)."""
    again = tmp_path / PDF_NAME
    pdf.print_pdf(browser, pdf.SINGLE_PAGE_SITE, again)
    assert again.read_bytes() == printed.read_bytes()


def test_every_page_links_the_pdf_the_site_holds(printed, site_dir):
    assert (site_dir / PDF_NAME).read_bytes() == printed.read_bytes()
    for name in toc.pages():
        page = (site_dir / name).read_text(encoding="utf-8")
        links = re.findall(rf'href="([^"]*{re.escape(PDF_NAME)})"', page)
        assert links, f"{name} does not link the PDF"
        assert all((site_dir / name).parent.joinpath(link).resolve() == (site_dir / PDF_NAME).resolve()
                   for link in links), links
