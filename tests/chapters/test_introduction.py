"""The introduction: its map of the book links every chapter."""

from __future__ import annotations

import re
from pathlib import Path

from tools import toc

ROOT = Path(__file__).resolve().parents[2]


def test_introduction_links_every_later_chapter_of_the_toc():
    chapters = [name.removeprefix("book/") for name in toc.documents()[1:]]
    intro = (ROOT / "book" / "introduction.md").read_text()
    linked = set(re.findall(r"\{doc\}`([\w-]+)`", intro))
    assert set(chapters) - {"introduction"} <= linked
