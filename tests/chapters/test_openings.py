"""Every chapter opens with what the reader will be able to do after it, and what it builds on.

Right after a chapter's title, before any other text (and so before any
citation), comes its opening, in the markup every chapter shares::

    :::{div} chapter-goals
    After this chapter you will be able to:

    - <a goal>;
    - <two to four of them>.

    It builds on {doc}`<an earlier chapter>` (<what it takes from it>).

    The symbols are listed in {doc}`notation`.
    :::

The "builds on" line names earlier chapters only, in the order of
``_toc.yml``, and at least one (the first chapter names none: it says it
builds on no earlier chapter). Its last line links the notation page (an
appendix), where every symbol the chapter uses is defined. The chapters are found from ``_toc.yml``: every
document but the root page, the home page, and the back matter, pages that
are looked up rather than read in order (:data:`BACK_MATTER`).
"""

from __future__ import annotations

import re

import pytest
from chapters.book import source

from tools import toc

#: Pages of the table of contents read by looking something up, not in order: no goals, nothing built on.
BACK_MATTER = ("notation", "checking", "references")
OPENING = re.compile(r"\A(?:\s*\([\w-]+\)=\n)*\s*# [^\n]+\n\s*:::\{div\} chapter-goals\n(.*?)^:::[ \t]*$",
                     re.S | re.M)
GOALS_LEAD = "After this chapter you will be able to:"
NOTATION_LINE = "The symbols are listed in {doc}`notation`."
BUILDS_ON = "It builds on "
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([\w-]+)>?`")
CITE = re.compile(r"\{cite(?::\w+)?\}`")


def documents() -> list[str]:
    return [name.removeprefix("book/") for name in toc.documents()]


def chapters() -> list[str]:
    return [stem for stem in documents()[1:] if stem not in BACK_MATTER]


def paragraphs(stem: str) -> list[str]:
    """The paragraphs of the chapter's opening box."""
    match = OPENING.match(source(stem))
    assert match, (f"{stem}: the title is not followed by ':::{{div}} chapter-goals' "
                   "(the goals and the chapters it builds on, before any other text)")
    return [p.strip() for p in re.split(r"\n\s*\n", match.group(1).strip())]


def opening(stem: str) -> tuple[str, list[str], str]:
    """The chapter's opening: its lead line, its goals and its "builds on" paragraph."""
    found = paragraphs(stem)
    assert len(found) == 4, (f"{stem}: the opening is a lead line, a list of goals, a 'builds on' paragraph "
                             "and the link to the notation page")
    lead, goals, builds_on, _ = found
    items = re.split(r"^- ", goals, flags=re.M)
    assert items[0] == "" and all(item.strip() for item in items[1:]), f"{stem}: the goals are a bullet list"
    return lead, [re.sub(r"\s+", " ", item).strip() for item in items[1:]], re.sub(r"\s+", " ", builds_on)


def test_the_back_matter_is_in_the_table_of_contents():
    """The pages let off are pages of the book (a renamed one would otherwise be let off silently)."""
    assert set(BACK_MATTER) <= set(documents())
    assert chapters(), "the table of contents lists chapters"


@pytest.mark.parametrize("stem", chapters())
def test_a_chapter_opens_with_its_goals_and_what_it_builds_on(stem):
    lead, goals, builds_on = opening(stem)
    assert lead == GOALS_LEAD
    assert 2 <= len(goals) <= 4, f"{stem}: {len(goals)} goals, not two to four"
    assert builds_on.startswith(BUILDS_ON), f"{stem}: the opening ends with {BUILDS_ON!r}..., not {builds_on!r}"
    assert not CITE.search(OPENING.match(source(stem)).group(0)), f"{stem}: a citation before the goals' end"


@pytest.mark.parametrize("stem", chapters())
def test_a_chapter_builds_on_earlier_chapters(stem):
    _, _, builds_on = opening(stem)
    named = DOC.findall(builds_on)
    earlier = documents()[1: documents().index(stem)]
    assert set(named) <= set(earlier), f"{stem} builds on {set(named) - set(earlier)}, not earlier chapters"
    if stem == chapters()[0]:
        assert not named and "no earlier chapter" in builds_on
    else:
        assert named, f"{stem}: the 'builds on' line names no earlier chapter"


@pytest.mark.parametrize("stem", chapters())
def test_a_chapter_opening_links_the_notation_page(stem):
    assert paragraphs(stem)[-1] == NOTATION_LINE, f"{stem}: the opening does not end with {NOTATION_LINE!r}"
