"""The exercises' answer boxes and solutions in the built pages (_ext/exercises).

An answer box holds the answer the package computed when the book was built
and checks a reader's entry with no kernel: a right one is accepted, a wrong
one told how far off it is (absolutely and relatively), bad input answered in
words; it works from the keyboard alone, and its label and its status line
(``role="status"``, ``aria-live``) are what a screen reader reads. A
solution is a closed ``<details>`` that the keyboard opens.
"""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from selfattention import head, kernel
from tools import ROOT

PAGE = "book/quadratic-trick.html"
SCALAR = "#answer-ex-trick-width-tau"  # tau for rows of a given width
MATRIX = "#answer-ex-trick-offset-wq"  # W_Q of the band centred delta ahead


def chapter_setting(name: str) -> float:
    """A number the chapter's code sets (``width = 0.1``), read from its source."""
    text = (ROOT / "book" / "quadratic-trick.md").read_text()
    return float(re.search(rf"^{name} = (.+)$", text, re.M).group(1))


def box_answer(page, selector: str) -> dict:
    return json.loads(page.locator(selector).get_attribute("data-answer"))


@pytest.fixture
def chapter_page(page, site_url):
    page.goto(f"{site_url}/{PAGE}")
    return page


def check(page, selector: str, *entries: str) -> str:
    box = page.locator(selector)
    for field, entry in zip(box.locator("input").all(), entries, strict=True):
        field.fill(entry)
    box.locator("input").first.press("Enter")
    return box.locator("[role=status]").inner_text()


def test_the_expected_values_in_the_page_are_the_packages(chapter_page):
    scalar, matrix = box_answer(chapter_page, SCALAR), box_answer(chapter_page, MATRIX)
    assert scalar["expected"] == [[kernel.bandwidth_to_temperature(chapter_setting("width"))]] and not scalar["matrix"]
    assert matrix["expected"] == head.gaussian_head_weights(offset=chapter_setting("ahead"))[0].tolist()
    assert matrix["matrix"] and matrix["rtol"] > 0


def test_every_box_of_the_site_holds_the_value_its_chapter_glued(site_dir):
    """The directive copies the executed notebook's glued value exactly (repr of floats round-trips)."""
    boxes = 0
    for page in sorted((site_dir / "book").glob("*.html")):
        found = re.findall(r'<form class="answer-box" id="answer-([^"]+)" data-answer="([^"]+)"', page.read_text())
        if not found:
            continue
        glued = json.loads((ROOT / "_build" / "jupyter_execute" / "book" / f"{page.stem}.glue.json").read_text())
        for name, data in found:
            value = ast.literal_eval(glued[name]["data"]["text/plain"])
            expected = json.loads(data.replace("&quot;", '"'))["expected"]
            assert np.array(expected).ravel().tolist() == np.ravel(value).tolist(), f"{page.name}: {name}"
            boxes += 1
    assert boxes >= 8


def test_a_right_answer_is_accepted(chapter_page):
    assert check(chapter_page, SCALAR, "2 * 0.1^2").startswith("Right: 0.02 matches the answer")
    assert chapter_page.locator(f"{SCALAR} input").get_attribute("aria-invalid") is None


def test_a_wrong_answer_is_told_how_far_off_it_is(chapter_page):
    message = check(chapter_page, SCALAR, "0.03")
    assert message == "Not yet: 0.03 is 0.01 too high, 50 % above the answer."
    assert check(chapter_page, SCALAR, "0.015") == "Not yet: 0.015 is 0.005 too low, 25 % below the answer."
    assert chapter_page.locator(f"{SCALAR} input").get_attribute("aria-invalid") == "true"
    # within the stated 1 %: rounded to two significant figures of 0.0200 is still right
    assert check(chapter_page, SCALAR, "0.0201").startswith("Right")


def test_a_matrix_answer_is_checked_entry_by_entry(chapter_page):
    right = ["0", "0", "0", "sqrt(2)", "-0.2", "0", "0", "-1", "0", "0.1*√2", "-0.01", "1"]
    assert check(chapter_page, MATRIX, *right) == "Right: all 12 entries match."
    wrong = [*right[:4], "0.2", *right[5:]]  # the sign of -2 delta dropped
    message = check(chapter_page, MATRIX, *wrong)
    assert message == ("Not yet: 1 of 12 entries are off. Row 2, column 2: 0.2 is 0.4 too high, "
                       "200 % above the entry.")
    invalid = chapter_page.locator(f"{MATRIX} input[aria-invalid=true]")
    assert invalid.count() == 1 and invalid.get_attribute("aria-label") == "row 2, column 2"
    off_zero = [*right[:2], "0.5", *right[3:]]
    assert "Row 1, column 3: 0.5 is 0.5 too high (the entry is 0)." in check(chapter_page, MATRIX, *off_zero)


@pytest.mark.parametrize(("entry", "message"), [
    ("", "Type a number first."),
    ("abc", "Your answer: \u201cabc\u201d has \"abc\", which is not a number. Type a number such as 0.25, 1/4 or "
            "2*sqrt(2)."),
    ("NaN", "Your answer: \u201cNaN\u201d is not a finite number. Type a number such as 0.25, 1/4 or 2*sqrt(2)."),
    ("1/0", "Your answer: \u201c1/0\u201d is not a finite number. Type a number such as 0.25, 1/4 or 2*sqrt(2)."),
    ("(0.02", "Your answer: \u201c(0.02\u201d has a ( without its ). Type a number such as 0.25, 1/4 or 2*sqrt(2)."),
])
def test_bad_input_is_answered_clearly(chapter_page, entry, message):
    assert check(chapter_page, SCALAR, entry) == message


def test_an_empty_matrix_entry_is_named(chapter_page):
    entries = ["0"] * 5 + [""] + ["0"] * 6
    assert check(chapter_page, MATRIX, *entries) == "Row 2, column 3 is empty: type a number in every entry."


def test_the_boxes_are_labelled_and_announce_their_result(chapter_page):
    scalar = chapter_page.get_by_role("textbox", name="Your answer, \u03c4 =", exact=True)  # its math as MathML reads
    assert scalar.count() == 1 and scalar.get_attribute("id") == "answer-ex-trick-width-tau-0-0"
    for selector in (SCALAR, MATRIX):
        status = chapter_page.locator(f"{selector} [role=status]")
        assert status.get_attribute("aria-live") == "polite"
    assert chapter_page.locator(f"{MATRIX} fieldset > legend").count() == 1
    assert chapter_page.get_by_label("row 4, column 1").count() == 1


def test_keyboard_only(chapter_page):
    """Tab into the box, type, Enter checks; Tab to the button, Space checks again."""
    chapter_page.locator(SCALAR).locator(".answer-box-title").scroll_into_view_if_needed()
    chapter_page.locator(f"{SCALAR} label").evaluate("label => label.closest('form').previousElementSibling"
                                                     ".setAttribute('tabindex', '-1')")
    chapter_page.locator(SCALAR).evaluate("form => form.previousElementSibling.focus()")
    chapter_page.keyboard.press("Tab")
    assert chapter_page.evaluate("document.activeElement.id") == "answer-ex-trick-width-tau-0-0"
    chapter_page.keyboard.type("0.02")
    chapter_page.keyboard.press("Enter")
    status = chapter_page.locator(f"{SCALAR} [role=status]")
    assert status.inner_text().startswith("Right")
    chapter_page.keyboard.press("Tab")
    assert chapter_page.evaluate("document.activeElement.className") == "answer-box-check"
    chapter_page.keyboard.press("Shift+Tab")
    chapter_page.keyboard.press("Control+A")
    chapter_page.keyboard.type("1")
    chapter_page.keyboard.press("Tab")
    chapter_page.keyboard.press("Space")
    assert status.inner_text().startswith("Not yet: 1 is")


def test_a_solution_is_closed_until_the_keyboard_opens_it(chapter_page):
    solution = chapter_page.locator("details.solution#ex-trick-width-solution, details.solution").nth(1)
    summary = solution.locator("summary")
    summary.scroll_into_view_if_needed()  # as the reader reaches it: parts far below the view are rendered late,
    expect(summary).to_have_text("Solution to Exercise 4.2", use_inner_text=True)  # at the next frames
    assert solution.get_attribute("open") is None
    assert not solution.locator("p").first.is_visible()
    summary.focus()
    chapter_page.keyboard.press("Enter")
    assert solution.get_attribute("open") == ""
    assert solution.locator("p").first.is_visible()
