"""Fixtures of the chapter tests: each chapter's code runs once per session."""

from __future__ import annotations

import pytest
from chapters.book import Chapter, run_chapter


@pytest.fixture(scope="session")
def chapter_run():
    """``chapter_run(stem)``: the :class:`~chapters.book.Chapter` of ``book/<stem>.md``, run once."""
    runs: dict[str, Chapter] = {}

    def get(stem: str) -> Chapter:
        if stem not in runs:
            runs[stem] = run_chapter(stem)
        return runs[stem]

    return get
