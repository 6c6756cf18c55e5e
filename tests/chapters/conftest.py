"""Fixtures of the chapter tests: each chapter's code runs once per session.

A chapter's test module names its page in ``STEM``; its tests read what the
chapter computed (the ``chapter`` fixture: its variables and glued values)
and check the sentence of the text that describes it. Tests of other noise
draws call the package with the chapter's settings.
"""

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


@pytest.fixture(scope="module")
def chapter(chapter_run, request) -> Chapter:
    """The run of the page named by the test module's ``STEM``."""
    return chapter_run(request.module.STEM)
