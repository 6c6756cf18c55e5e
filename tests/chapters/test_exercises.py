"""Every chapter ends with its exercises, in the form a course can use, and each solution is checked.

A chapter's exercises (``_ext/exercises`` on top of sphinx-exercise) are the
last section of the page, ``## Exercises`` with the label
``exercises-<stem>``: three to five exercises, from a check to an open
question, each with one solution right after it, and one or two code
exercises ("Write: ...") on top of them. Each exercise names its kind first
in its title; at least one asks the reader to change a live cell and
predict the result, and at least one to write code that a check of
``selfattention.checks`` judges. Every value a solution glues (``ex-...``) is asserted by
the chapter's own test, so that a change to the package that breaks a
solution fails there. A solution reads nothing its live cell binds: a reader
who changed the cell and then opens the solution gets the chapter's answer.

Chapters 2 to the last before the notation page have exercises; a chapter
added to ``_toc.yml`` there gets these checks too (see the README).
"""

from __future__ import annotations

import ast
import contextlib
import io
import re

import numpy as np
import pytest
from chapters.book import ANSWER_BOX, BOOK, CODE_CELL, FENCE, glued_names, source

from tools import toc

#: The kinds of exercise, from the quickest to the most open; a chapter's exercises follow this order.
KINDS = ("Check", "Compute", "Write", "Predict, then run", "Open question")
LIVE = "Predict, then run"
#: A code exercise: the reader writes a function in a live cell, and a check of selfattention.checks judges it.
WRITE = "Write"
EXERCISE = re.compile(r"^```\{exercise-start\} ([^\n]+)\n:label: (\S+)\n```\n(.*?)^```\{exercise-end\}\n```",
                      re.S | re.M)
SOLUTION = re.compile(r"^```\{solution-start\} (\S+)\n```\n(.*?)^```\{solution-end\}\n```", re.S | re.M)


def chapters_with_exercises() -> list[str]:
    documents = [name.removeprefix("book/") for name in toc.documents()]
    return documents[documents.index("introduction") + 1: documents.index("notation")]


def exercises_section(stem: str) -> str:
    text = source(stem)
    start = text.find(f"(exercises-{stem})=\n## Exercises\n")
    assert start >= 0, f"{stem} has no '## Exercises' section labelled exercises-{stem}"
    section = text[start:]
    headings = re.search(r"^#{1,2} ", FENCE.sub("", section.split("\n", 2)[2]), re.M)  # not a code cell's comment
    assert not headings, f"{stem}: the exercises must end the page"
    return section


def test_every_chapter_between_the_introduction_and_the_notation_has_exercises():
    assert len(chapters_with_exercises()) >= 10  # attention to positions-and-masks


@pytest.mark.parametrize("stem", chapters_with_exercises())
def test_three_to_five_exercises_from_a_check_to_an_open_question(stem):
    exercises = EXERCISE.findall(exercises_section(stem))
    others = [title for title, _, _ in exercises if not title.startswith(f"{WRITE}: ")]
    assert 3 <= len(others) <= 5, f"{stem} has {len(others)} exercises besides its code exercises"
    assert 1 <= len(exercises) - len(others) <= 2, f"{stem} must have one or two code exercises"
    kinds = []
    for title, label, _ in exercises:
        kind = next((k for k in KINDS if title.startswith(f"{k}: ")), None)
        assert kind, f"{stem}: {title!r} must start with one of {KINDS} and a colon"
        assert label.startswith("ex-"), label
        kinds.append(KINDS.index(kind))
    assert kinds == sorted(kinds), f"{stem}: the exercises go from a check to an open question"
    assert kinds[0] == 0 and kinds[-1] == len(KINDS) - 1, f"{stem}: the first is a check, the last an open question"


@pytest.mark.parametrize("stem", chapters_with_exercises())
def test_each_exercise_has_one_solution_right_after_it(stem):
    section = exercises_section(stem)
    labels = [label for _, label, _ in EXERCISE.findall(section)]
    solved = [label for label, _ in SOLUTION.findall(section)]
    assert solved == labels, f"{stem}: solutions {solved} for exercises {labels}"
    order = [m.group(2) for m in EXERCISE.finditer(section)]
    positions = {label: m.start() for label, m in zip(order, EXERCISE.finditer(section), strict=True)}
    for k, m in enumerate(SOLUTION.finditer(section)):
        nxt = list(EXERCISE.finditer(section))[k + 1].start() if k + 1 < len(order) else len(section)
        assert positions[m.group(1)] < m.start() < nxt, f"{stem}: the solution of {m.group(1)} must follow it"


@pytest.mark.parametrize("stem", chapters_with_exercises())
def test_a_live_exercise_has_a_cell_to_change_and_says_how_to_make_it_live(stem):
    live = [body for title, _, body in EXERCISE.findall(exercises_section(stem)) if title.startswith(LIVE)]
    assert live, f"{stem} has no '{LIVE}' exercise"
    for body in live:
        cells = CODE_CELL.findall(body)
        assert any(":tags: [remove-cell]" not in cell for cell in cells), "a visible cell to change"
        assert re.search(r":::\{div\} screen-only\n.*Live Code.*make live", body, re.S), "how to make it live"
        assert "predict" in body.lower()


@pytest.mark.parametrize("stem", chapters_with_exercises())
def test_every_glued_answer_is_asserted_by_the_chapters_test(stem):
    exact, _ = glued_names(stem)
    section = exercises_section(stem)
    names = {name for name in exact if name.startswith("ex-") and name in section}
    assert names, f"{stem}: its exercises glue nothing"
    test = (BOOK.parent / "tests" / "chapters" / f"test_{stem.replace('-', '_')}.py").read_text()
    missing = sorted(name for name in names if f'"{name}"' not in test)
    assert not missing, f"test_{stem.replace('-', '_')}.py never reads {missing}"
    for name in ANSWER_BOX.findall(section):
        assert name in exact, f"{stem}: the answer box {name} shows a value the chapter does not glue"


def _code(cell: str) -> ast.Module:
    """A code cell's source without its ``:option:`` lines."""
    lines = cell.splitlines()
    return ast.parse("\n".join(lines[next((k for k, line in enumerate(lines) if not line.startswith(":")),
                                           len(lines)):]))


def _names(tree: ast.AST, context: type) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, context)}


@pytest.mark.parametrize("stem", chapters_with_exercises())
def test_a_solution_reads_nothing_its_live_cell_binds(stem):
    """The reader changes the live cell, then opens its solution: the solution must still give the chapter's answer.

    So a solution's code reads none of the names the live cell assigns (the
    value the reader changes, or anything computed from it); it uses the
    chapter's own, or binds its own first.
    """
    section = exercises_section(stem)
    solutions = dict(SOLUTION.findall(section))
    for title, label, body in EXERCISE.findall(section):
        if not title.startswith(LIVE):
            continue
        live = set().union(*(_names(_code(cell), ast.Store) for cell in CODE_CELL.findall(body)))
        for cell in CODE_CELL.findall(solutions[label]):
            tree = _code(cell)
            read = _names(tree, ast.Load) - _names(tree, ast.Store)
            assert not read & live, f"{label}: its solution reads {sorted(read & live)}, which the live cell binds"


def _run_cell(code: str, namespace: dict) -> str:
    """What a cell prints, run in ``namespace`` as the chapter's kernel would (numpy already imported)."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(code, "<cell>", "exec"), namespace)
    return printed.getvalue()


def test_the_book_has_a_code_exercise_for_every_check():
    from selfattention import checks

    called = set()
    for stem in chapters_with_exercises():
        called |= set(re.findall(r"\b(check_\w+)\(", exercises_section(stem)))
    assert called == {check.__name__ for check in checks.CHECKS}
    assert len(called) >= 12


@pytest.mark.parametrize("stem", chapters_with_exercises())
def test_a_code_exercise_starts_unwritten_says_how_to_check_it_and_its_solution_passes(stem):
    """The starter cell runs (the build runs it) and says "not written yet"; its solution's cell passes the check.

    Both cells are run here as the build runs them, so that a starter that
    raises, or a solution the check refuses, fails this test before a build.
    """
    section = exercises_section(stem)
    solutions = dict(SOLUTION.findall(section))
    written = [(label, body) for title, label, body in EXERCISE.findall(section) if title.startswith(f"{WRITE}: ")]
    assert written
    for label, body in written:
        starter = [_code_text(cell) for cell in CODE_CELL.findall(body)]
        assert len(starter) == 1, f"{label}: one starter cell"
        check = re.search(r"^(check_\w+)\((\w+)\)$", starter[0], re.M)
        assert check, f"{label}: its starter ends by calling a check on the function"
        assert "= ..." in starter[0] or "return ..." in starter[0], f"{label}: a starter with ... to fill"
        assert re.search(r":::\{div\} screen-only\n.*Live Code.*make live", body, re.S), "how to make it live"
        namespace = {"np": np}
        assert _run_cell(starter[0], namespace).startswith("Not written yet:"), label
        solved = [_code_text(cell) for cell in CODE_CELL.findall(solutions[label])]
        assert any(check.group(0) in cell for cell in solved), f"{label}: its solution runs the same check"
        printed = "".join(_run_cell(cell, namespace) for cell in solved)
        assert printed.startswith("Right:") and printed.count("\n") == 1, f"{label}: {printed}"


def _code_text(cell: str) -> str:
    """A code cell's source without its ``:option:`` lines."""
    lines = cell.splitlines()
    return "\n".join(lines[next((k for k, line in enumerate(lines) if not line.startswith(":")), len(lines)):])
