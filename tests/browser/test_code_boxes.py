"""Code fits its box: on a desktop no code block runs past its box; on a phone it scrolls inside it.

Every page of the built site is opened at 1440 x 900 and at a phone's
390 x 844 (device scale factor 2), with every part rendered (the parts
``content-visibility: auto`` leaves for later included) and every
``<details>`` open: the hidden-input cells' code, the hidden cells and the
solutions, all that a reader can expand. Every code block (``pre`` in a
``div.highlight``: a cell's code, its printed output, a listing of the
package) is measured:

* at 1440 px its content is no wider than its box (``scrollWidth`` at most
  ``clientWidth``): the reader never scrolls sideways to read code. The
  chapters' sources keep their lines to 79 characters
  (``tests/chapters/test_code_cells.py``), which fit;
* at 390 px, where 79 characters do not fit, a block whose content is wider
  than its box scrolls it (``overflow-x`` is ``auto`` or ``scroll``) or
  wraps: nothing is cut off; one that scrolls shows it, with the wide
  formulas' edge cue (scrolling shadows: a ``radial-gradient`` background
  under covers attached ``local``, ``_ext/lean_pages``).
"""

from __future__ import annotations

import pytest

from tools import page_audit, toc

VIEWS = {"phone": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                   "has_touch": True},
         "desktop": {"viewport": {"width": 1440, "height": 900}}}
EVERYTHING_RENDERED = "* { content-visibility: visible !important; }"
#: Sub-pixel rounding of the layout, not content.
EDGE_PX = 1

CODE_BLOCKS = """edge => {
  for (const details of document.querySelectorAll('article details')) details.open = true;
  return [...document.querySelectorAll('article div.highlight pre')]
    .filter(pre => pre.checkVisibility({visibilityProperty: true}))
    .map(pre => {
      const style = getComputedStyle(pre);
      const line = pre.textContent.split('\\n').reduce((a, b) => (b.length > a.length ? b : a), '');
      return {overflow: pre.scrollWidth - pre.clientWidth, box: pre.clientWidth,
              scrolls: ['auto', 'scroll'].includes(style.overflowX), wraps: style.whiteSpace.startsWith('pre-wrap')
                || style.whiteSpace === 'normal' || style.whiteSpace === 'break-spaces',
              where: pre.closest('.cell_output') ? 'output' : pre.closest('.cell_input') ? 'code cell'
                : 'listing',
              line: line.trim().slice(0, 60), length: line.length,
              cue: style.backgroundImage.includes('radial-gradient') && style.backgroundAttachment.includes('local')};
    });
}"""


def code_blocks(browser, server, path: str, view: str) -> list[dict]:
    """Every code block of ``path`` at ``view``, every part rendered and every ``<details>`` open."""
    page = page_audit.open_page(browser, server, **VIEWS[view])
    try:
        page.goto(f"{server.url}/{path}", wait_until="load")
        page.add_style_tag(content=EVERYTHING_RENDERED)
        page.evaluate("document.fonts.ready.then(() => 0)")
        return page.evaluate(CODE_BLOCKS, EDGE_PX)
    finally:
        page.context.close()


def problems(blocks: list[dict], view: str) -> list[str]:
    """The blocks that run past their box on a desktop, or are cut off on a phone."""
    wide = [block for block in blocks if block["overflow"] > EDGE_PX]
    if view == "phone":
        cut = [block for block in wide if not (block["scrolls"] or block["wraps"])]
        hidden = [block for block in wide if block["scrolls"] and not block["cue"]]
        return [f"{block['where']}: {block['overflow']} px past its {block['box']} px box, its longest line "
                f"{block['length']} characters: {block['line']!r}" for block in cut] + \
            [f"{block['where']}: scrolls {block['overflow']} px with no edge cue: {block['line']!r}"
             for block in hidden]
    return [f"{block['where']}: {block['overflow']} px past its {block['box']} px box, its longest line "
            f"{block['length']} characters: {block['line']!r}" for block in wide]


@pytest.mark.parametrize("path", toc.pages())
@pytest.mark.parametrize("view", VIEWS)
def test_no_code_block_runs_past_its_box(browser, pages_server, view, path):
    blocks = code_blocks(browser, pages_server, path, view)
    assert not problems(blocks, view), f"{path}: " + "\n".join(problems(blocks, view))


def test_the_chapters_have_code_blocks_to_measure(browser, pages_server):
    blocks = code_blocks(browser, pages_server, "book/attention.html", "desktop")
    assert len(blocks) > 10 and {block["where"] for block in blocks} == {"code cell", "output", "listing"}


def test_the_check_sees_a_line_too_long_for_a_desktop(browser, pages_server):
    """The check fails on what it is for: a line of 120 characters in a chapter's code, at 1440 px."""
    page = page_audit.open_page(browser, pages_server, **VIEWS["desktop"])
    try:
        page.goto(f"{pages_server.url}/book/smoothing.html", wait_until="load")
        page.evaluate("() => { document.querySelector('.cell_input div.highlight pre').textContent = "
                      "'x = ' + '1 + '.repeat(29) + '1'; }")
        page.add_style_tag(content=EVERYTHING_RENDERED)
        blocks = page.evaluate(CODE_BLOCKS, EDGE_PX)
    finally:
        page.context.close()
    assert [text for text in problems(blocks, "desktop") if "121 characters" in text]


def test_the_check_sees_code_cut_off_on_a_phone(browser, pages_server):
    """On a phone a block that neither scrolls nor wraps cuts its lines: the check says so."""
    page = page_audit.open_page(browser, pages_server, **VIEWS["phone"])
    try:
        page.goto(f"{pages_server.url}/book/smoothing.html", wait_until="load")
        page.add_style_tag(content=EVERYTHING_RENDERED + " div.highlight pre { overflow: hidden !important; }")
        blocks = page.evaluate(CODE_BLOCKS, EDGE_PX)
    finally:
        page.context.close()
    assert problems(blocks, "phone")


def test_the_check_sees_code_that_scrolls_with_no_cue_on_a_phone(browser, pages_server):
    """On a phone a block that scrolls with a plain background hides that more of its lines lies beyond its edge."""
    page = page_audit.open_page(browser, pages_server, **VIEWS["phone"])
    try:
        page.goto(f"{pages_server.url}/book/heads-together.html", wait_until="load")
        page.add_style_tag(content=EVERYTHING_RENDERED + " div.highlight pre { background: #fefefe !important; }")
        blocks = page.evaluate(CODE_BLOCKS, EDGE_PX)
    finally:
        page.context.close()
    assert [text for text in problems(blocks, "phone") if "no edge cue" in text]
