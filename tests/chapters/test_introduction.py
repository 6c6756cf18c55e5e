"""The introduction: its map of the book links every chapter."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_introduction_links_every_later_chapter_of_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    chapters = re.findall(r"file:\s*book/([\w-]+)", toc)
    intro = (ROOT / "book" / "introduction.md").read_text()
    linked = set(re.findall(r"\{doc\}`([\w-]+)`", intro))
    assert set(chapters) - {"introduction"} <= linked
