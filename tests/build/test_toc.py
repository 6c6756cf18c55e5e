"""tools.toc reads ``_toc.yml`` in the order sphinx-external-toc (jupyter-book's reader) gives.

The reference is sphinx-external-toc's own parser, walked depth first: a
document, then the documents of its subtrees, in order.
"""

from __future__ import annotations

from sphinx_external_toc.api import GlobItem
from sphinx_external_toc.parsing import parse_toc_yaml

from tools import toc

NESTED = """\
format: jb-book
root: intro
parts:
  - caption: One
    chapters:
      - file: a
        sections:
          - file: a1
          - file: a2
            sections:
              - file: a2x
      - file: b
  - caption: Two
    chapters:
      - file: c
      - url: https://example.com
        title: a link, not a document
"""


def reading_order(site_map, docname: str) -> list[str]:
    """``docname``, then its subtrees' documents, depth first, from sphinx-external-toc's site map."""
    found = [docname]
    for subtree in site_map[docname].subtrees:
        for item in subtree.items:
            if isinstance(item, str) and not isinstance(item, GlobItem):
                found += reading_order(site_map, item)
    return found


def test_the_books_toc_reads_as_sphinx_external_toc_reads_it():
    site_map = parse_toc_yaml(toc.TOC)
    assert toc.documents() == reading_order(site_map, site_map.root.docname)
    assert toc.pages() == [f"{name}.html" for name in toc.documents()]


def test_parts_and_nested_sections_come_in_reading_order(tmp_path):
    path = tmp_path / "_toc.yml"
    path.write_text(NESTED)
    expected = ["intro", "a", "a1", "a2", "a2x", "b", "c"]
    assert toc.documents(path) == expected
    site_map = parse_toc_yaml(path)
    assert reading_order(site_map, site_map.root.docname) == expected


def test_a_written_toc_reads_back(tmp_path):
    path = toc.write(tmp_path / "_toc.yml", "book/index", ["book/one", "book/two"])
    assert toc.documents(path) == ["book/index", "book/one", "book/two"]
    assert list(parse_toc_yaml(path)) == ["book/index", "book/one", "book/two"]
