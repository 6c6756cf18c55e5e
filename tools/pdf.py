"""``make pdf``: the whole book as one PDF, printed by Chromium from the single-page build, then checked.

``make pdf`` runs ``jupyter-book build --builder singlehtml`` (the HTML
build's execution cache and doctrees: no notebook runs again) and then this
module, which

1. serves ``_build/singlehtml`` on 127.0.0.1, the root page at ``/``;
2. opens it in the Chromium of the browser tests (:mod:`tools.chromium`:
   every request to another host is blocked and fails the print), with the
   explorer's script answered by an empty one, so the explorer keeps its
   static figure (taken out of its ``<noscript>``), and every image loaded
   at once;
3. waits until the math is typeset (MathJax's ``startup.promise`` if the page
   has MathJax; math prerendered at build time needs no wait), the fonts are
   loaded and every image is decoded; a ``.math`` element still untypeset
   stops the print;
4. prints A4 with the site's own print stylesheet (``_ext/publish``,
   ``media="print"``), the book's title above and page numbers below each
   page, and the headings as the PDF's outline;
5. makes the file depend on the sources only (:func:`reproducible`);
6. checks it (:mod:`tools.pdf_checks`) and exits 1 on any problem.

Usage, from the repository root::

    python -m tools.pdf [--site _build/singlehtml] [--out _build/pdf/self-attention-by-hand.pdf]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from _ext.publish.pdf import PDF_NAME
from _ext.site_build.reproducible import default_source_date_epoch
from tools import ROOT, chromium, pdf_checks, toc
from tools.servers import StaticServer

#: Where ``make pdf`` builds the single page and writes the PDF (the Makefile's PDF).
SINGLE_PAGE_SITE = ROOT / "_build" / "singlehtml"
PDF = ROOT / "_build" / "pdf" / PDF_NAME

#: Scripts the print must not run: the explorer would replace its static figure by sliders.
BLOCKED_SCRIPTS = ("attention_explorer.js",)
TIMEOUT = 180_000  # ms: the whole book on a busy 2-core machine
HEADER = ('<div style="font-size:8pt;width:100%;text-align:right;padding-right:16mm;color:#555;">'
          '<span class="title"></span></div>')
FOOTER = ('<div style="font-size:8pt;width:100%;text-align:center;color:#555;">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')

#: The explorer's static figure sits in <noscript> (for readers without JavaScript), which a page
#: that runs scripts does not render: the print puts it in the page, and loads every image now.
PREPARE_PRINT = """() => {
  for (const box of document.querySelectorAll('.attention-explorer noscript')) box.outerHTML = box.textContent;
  for (const img of document.querySelectorAll('img[loading="lazy"]')) img.loading = 'eager';
}"""

WAIT_FOR_PAGE = """async () => {
  if (window.MathJax && window.MathJax.startup) await window.MathJax.startup.promise;
  await document.fonts.ready;
  await Promise.all([...document.images].map(img => img.decode().catch(() => null)));
  return {
    mathjax: !!window.MathJax,
    images: document.images.length,
    untypeset: document.querySelectorAll('.math:not(:has(mjx-container)):not(:has(.katex))').length,
  };
}"""


def root_page(toc_file: Path = toc.TOC) -> str:
    """The single-page build's one page: the root document's HTML file (``book/index.html``)."""
    return f"{toc.documents(toc_file)[0]}.html"


def fix_links_script(page: str) -> str:
    """Sphinx's singlehtml links within the page as ``<page>#id``; served at ``/``, that must be ``#id``."""
    return f"""() => {{
  for (const a of document.querySelectorAll('a[href^="{page}#"]'))
    a.setAttribute('href', a.getAttribute('href').slice({len(page)}));
}}"""


def print_pdf(browser, site: Path, out: Path, page_name: str | None = None) -> dict:
    """Print the single-page book in ``site`` to ``out`` with ``browser``; what the page reported.

    Raises
    ------
    RuntimeError
        When math is left untypeset or the page asked for another host.
    """
    page_name = page_name or root_page()
    if not (site / page_name).is_file():
        raise FileNotFoundError(f"no single-page build in {site} (missing {page_name}): run make pdf")
    # singlehtml writes book/index.html with links computed as if it were at the site's root.
    server = StaticServer(site, home=page_name)
    page = chromium.open_page(browser, {server.url})
    try:
        page.route(lambda url: urlsplit(url).path.endswith(BLOCKED_SCRIPTS),  # the URL ends in ?v=<digest>
                   lambda route: route.fulfill(status=200, content_type="text/javascript", body=""))
        page.emulate_media(media="print")
        page.goto(f"{server.url}/", wait_until="load", timeout=TIMEOUT)
        page.evaluate(fix_links_script(page_name))
        page.evaluate(PREPARE_PRINT)
        state = page.evaluate(WAIT_FOR_PAGE)
        if state["untypeset"]:
            raise RuntimeError(f"{state['untypeset']} math elements were not typeset: not printing")
        out.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(out), format="A4", print_background=True, prefer_css_page_size=True,
                 display_header_footer=True, header_template=HEADER, footer_template=FOOTER,
                 outline=True, tagged=True)
        if page.external_requests:
            raise RuntimeError(f"the book asked for other hosts while printing: {page.external_requests}")
    finally:
        page.context.close()
        server.stop()
    reproducible(out)
    return state


#: Skia's PDF dates: ``D:YYYYMMDDHHmmSS+HH'mm'``.
_PDF_DATE = re.compile(rb"D:\d{14}[+-]\d{2}'\d{2}'")
_NODE_ID = re.compile(rb"node\d{8}")


def reproducible(pdf: Path) -> None:
    """Make the printed bytes depend on the book only, by same-length substitutions (offsets stay valid).

    Chromium dates the file now: the date becomes ``SOURCE_DATE_EPOCH`` (the last
    commit's time, as for the pages). Its tagged PDF names structure elements by
    Blink's DOM node ids (``node00007010``), which shift from run to run: they
    are renumbered in order of appearance.
    """
    default_source_date_epoch()
    data = pdf.read_bytes()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    data = _PDF_DATE.sub(time.strftime("D:%Y%m%d%H%M%S+00'00'", time.gmtime(epoch)).encode(), data)
    mapping: dict[bytes, bytes] = {}
    for found in _NODE_ID.findall(data):
        mapping.setdefault(found, b"node%08d" % len(mapping))
    pdf.write_bytes(_NODE_ID.sub(lambda m: mapping[m.group(0)], data))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.pdf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SINGLE_PAGE_SITE, help="the single-page build")
    parser.add_argument("--out", type=Path, default=PDF, help="the PDF to write")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = chromium.launch(pw)
        try:
            state = print_pdf(browser, args.site, args.out)
        finally:
            browser.close()
    expected = pdf_checks.expected_from_single_page((args.site / root_page()).read_text(encoding="utf-8"))
    problems = pdf_checks.check_pdf(pdf_checks.read_pdf(args.out), expected)
    print(f"{args.out}: {len(expected.chapters)} chapters, {len(expected.figures)} figures, {state}")
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
