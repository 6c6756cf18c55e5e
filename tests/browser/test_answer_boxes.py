"""The exercises' answer boxes and solutions in the built pages (_ext/exercises).

An answer box holds the answer the package computed when the book was built
and checks a reader's entry with no kernel: a right one is accepted, a wrong
one told only whether it is too high or too low (no message of any box of the
site gives the answer or the distance to it away), bad input answered in
words; after three wrong answers it offers the exercise's solution. It works
from the keyboard alone, every input has a name, and its status line
(``role="status"``, ``aria-live``) is what a screen reader reads. A solution
is a closed ``<details>`` that the keyboard opens.
"""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from selfattention import head, kernel
from tools import ROOT, page_audit

PAGE = "book/quadratic-trick.html"
SCALAR = "#answer-ex-trick-width-tau"  # tau for rows of a given width
MATRIX = "#answer-ex-trick-offset-wq"  # W_Q of the band centred delta ahead


def chapter_setting(name: str) -> float:
    """A number the chapter's code sets (``width = 0.1``), read from its source."""
    text = (ROOT / "book" / "quadratic-trick.md").read_text()
    return float(re.search(rf"^{name} = ([^#\n]+)", text, re.M).group(1))


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


def test_a_right_answer_is_accepted_and_echoed_as_typed(chapter_page):
    assert check(chapter_page, SCALAR, "2 * 0.1^2") == "Right: 2 * 0.1^2 = 0.02 matches the answer, 0.02."
    assert chapter_page.locator(f"{SCALAR} input").get_attribute("aria-invalid") is None
    assert check(chapter_page, SCALAR, "0.02003") == "Right: 0.02003 matches the answer, 0.02."


def test_a_wrong_answer_is_told_which_way_it_is_off(chapter_page):
    assert check(chapter_page, SCALAR, "0.03") == "Not yet: 0.03 is too high."
    assert check(chapter_page, SCALAR, "0.015") == "Not yet: 0.015 is too low."
    assert check(chapter_page, SCALAR, "-0.01525").startswith("Not yet: \u22120.01525 is too low.")  # as typed
    assert chapter_page.locator(f"{SCALAR} input").get_attribute("aria-invalid") == "true"
    # within the stated 1 %: rounded to two significant figures of 0.0200 is still right
    assert check(chapter_page, SCALAR, "0.0201").startswith("Right")


def test_a_matrix_answer_is_checked_entry_by_entry(chapter_page):
    right = ["0", "0", "0", "sqrt(2)", "-0.2", "0", "0", "-1", "0", "0.1*√2", "-0.01", "1"]
    assert check(chapter_page, MATRIX, *right) == "Right: all 12 entries match."
    wrong = [*right[:4], "0.2", *right[5:]]  # the sign of -2 delta dropped
    message = check(chapter_page, MATRIX, *wrong)
    assert message == "Not yet: 1 of 12 entries are off. Row 2, column 2: 0.2 is too high."
    invalid = chapter_page.locator(f"{MATRIX} input[aria-invalid=true]")
    assert invalid.count() == 1 and invalid.get_attribute("aria-label") == "row 2, column 2"
    off_zero = [*right[:2], "0.5", *right[3:]]
    assert "Row 1, column 3: 0.5 is too high." in check(chapter_page, MATRIX, *off_zero)


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


# --- every box of the site ---------------------------------------------------------------------------------

#: A number as a box writes it: an optional (Unicode) minus, digits, a fraction, an exponent.
NUMBER = re.compile(r"[-\u2212]?(?:\d+\.?\d*|\.\d+)(?:e[-+\u2212]?\d+)?", re.I)
#: The numbers of a message that say where, not how much: "Row 2, column 3", "1 of 12 entries", "2 more entries".
WHERE = re.compile(r"Row \d+, column \d+|\d+ of \d+ entries|\d+ more entries")


@pytest.fixture(scope="module")
def site_boxes(site_dir) -> dict[str, list[dict]]:
    """{page: [{id, expected (a flat list), rtol, atol, matrix}]} for every answer box of the built site."""
    found = {}
    for page in sorted((site_dir / "book").glob("*.html")):
        for ident, data in re.findall(r'<form class="answer-box" id="([^"]+)" data-answer="([^"]+)"',
                                      page.read_text()):
            box = json.loads(data.replace("&quot;", '"'))
            found.setdefault(f"book/{page.name}", []).append(
                {"id": ident, **box, "expected": np.ravel(box["expected"]).tolist()})
    assert sum(map(len, found.values())) >= 17
    return found


def off(answer: float, rtol: float, atol: float, way: int) -> float:
    """A wrong entry, above (``way`` 1) or below (-1) ``answer``, farther than its tolerance, not a multiple of it."""
    return answer + way * (2.3 * (atol + rtol * abs(answer)) + 0.61 * abs(answer) + 0.37)


def wrong_answers(box: dict) -> list[list[float]]:
    """Entries to try: all too high, all too low; for a matrix also one entry off, the others right."""
    expected, rtol, atol = box["expected"], box["rtol"], box["atol"]
    tries = [[off(a, rtol, atol, way) for a in expected] for way in (1, -1)]
    if box["matrix"]:
        tries += [[off(a, rtol, atol, way) if k == len(expected) // 2 else a for k, a in enumerate(expected)]
                  for way in (1, -1)]
    return tries


def number(text: str) -> float:
    return float(text.replace("\u2212", "-"))


def give_aways(message: str, entries: list[float], expected: list[float]) -> list[str]:
    """The numbers of ``message`` that are not the reader's own entries, and those near an answer or a distance."""
    found = [number(t) for t in NUMBER.findall(WHERE.sub("", message))]
    own = [x for x in found if any(abs(x - v) <= 0.005 * abs(v) + 1e-300 for v in entries)]
    problems = [f"{x:g} is not one of the entries" for x in found if x not in own]
    for x in found:
        for v, a in zip(entries, expected, strict=True):
            for what, secret in (("the answer", a), ("the distance", abs(v - a)),
                                 ("the distance in %", 100 * abs(v - a) / abs(a) if a else 0.0)):
                near = abs(x - secret) <= 0.01 * abs(secret) + 1e-12
                if near and secret != 0 and not any(abs(x - e) <= 0.005 * abs(e) for e in entries):
                    problems.append(f"{x:g} is {what} ({secret:g})")
    return problems


def fill_and_check(page, box_id: str, entries: list[float]) -> str:
    box = page.locator(f"#{box_id}")
    fields = box.locator("input.answer-box-input")
    for k, value in enumerate(entries):
        fields.nth(k).fill(f"{value:.17g}")
    fields.first.press("Enter")
    return box.locator("[role=status]").inner_text()


def test_no_message_gives_the_answer_or_the_distance_away(page, site_url, site_boxes):
    """For every box of the site, wrong entries above and below: the message says which way, nothing more."""
    problems, tried = [], 0
    for path, boxes in site_boxes.items():
        page.goto(f"{site_url}/{path}")
        for box in boxes:
            for entries in wrong_answers(box):
                message = fill_and_check(page, box["id"], entries)
                tried += 1
                if not message.startswith("Not yet"):
                    problems.append(f"{path} {box['id']}: {message!r} for wrong entries")
                problems += [f"{path} {box['id']}: {message!r}: {p}" for p in
                             give_aways(message, entries, box["expected"])]
                assert ("too high" in message) or ("too low" in message), message
    assert tried >= 2 * 17
    assert problems == [], "\n".join(problems)


def test_the_solution_is_offered_after_three_wrong_answers(page, site_url, site_boxes):
    """Hidden for two wrong answers; after the third, a button opens the box's own exercise's solution."""
    for path, boxes in site_boxes.items():
        page.goto(f"{site_url}/{path}")
        for box in boxes:
            form = page.locator(f"#{box['id']}")
            button = form.locator("button.answer-box-solution")
            solution = page.locator(f"details[id='{form.get_attribute('data-solution')}']")
            assert solution.count() == 1
            solution.evaluate("details => { details.open = false; }")  # two boxes may share an exercise
            wrong = wrong_answers(box)[0]
            for _ in range(2):
                fill_and_check(page, box["id"], wrong)
            assert not button.is_visible(), f"{box['id']}: offered after two tries"
            assert "solution" not in form.locator("[role=status]").inner_text()
            message = fill_and_check(page, box["id"], wrong)
            assert "The button below opens the solution." in message
            button.click()
            assert solution.get_attribute("open") == ""
            exercise = form.evaluate("f => f.closest('.exercise').querySelector('.caption-number').textContent.trim()")
            summary = solution.locator("summary")
            assert summary.inner_text() == f"Solution to {exercise}", box["id"]
            assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
            assert summary.evaluate("s => s === document.activeElement")
            top = summary.bounding_box()["y"]
            assert 0 <= top < page.viewport_size["height"], f"{box['id']}: the solution is not in view"


def test_every_input_is_named_and_described(page, site_url, site_boxes):
    """axe-core finds no violation in any box, and every input has a name and points to the hint and status."""
    problems = []
    for path, boxes in site_boxes.items():
        page.goto(f"{site_url}/{path}")
        for box in boxes:
            form = page.locator(f"#{box['id']}")
            inputs = form.locator("input")
            assert inputs.count() == len(box["expected"])
            names = re.findall(r'textbox "([^"]*)"', form.aria_snapshot())
            if len(names) != inputs.count() or not all(names):
                problems.append(f"{box['id']}: inputs without a name: {names}")
            if box["matrix"]:
                legend = form.locator("fieldset > legend")
                assert legend.count() == 1 and legend.text_content().strip(), box["id"]
                rows, columns = np.shape(json.loads(form.get_attribute("data-answer"))["expected"])
                want = [f"row {r + 1}, column {c + 1}" for r in range(rows) for c in range(columns)]
                if names != want:
                    problems.append(f"{box['id']}: cells named {names}")
            elif not (names and names[0].startswith("Your answer, ")):
                problems.append(f"{box['id']}: named {names}")
            for k in range(inputs.count()):
                described = inputs.nth(k).get_attribute("aria-describedby") or ""
                if described.split() != [f"{box['id']}-hint", f"{box['id']}-feedback"]:
                    problems.append(f"{box['id']}: input {k} described by {described!r}")
            assert form.locator(f"#{box['id']}-feedback[role=status]").count() == 1
        violations = page_audit.axe(page, include=["form.answer-box"])
        problems += [f"{path}: axe {v['id']}: {v['help']} {[n['target'] for n in v['nodes']]}" for v in violations]
    assert problems == [], "\n".join(problems)


#: The precision a question names: "To four decimals, what weight ...".
PRECISION = re.compile(r"\bto (one|two|three|four|five|six|\d+) decimals?\b", re.I)
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def enter(page, box_id: str, *texts: str) -> str:
    """Type ``texts`` (as a reader would, not numbers formatted by the test) into the box; its status line."""
    box = page.locator(f"#{box_id}")
    for field, text in zip(box.locator("input.answer-box-input").all(), texts, strict=True):
        field.fill(text)
    box.locator("input.answer-box-input").first.press("Enter")
    return box.locator("[role=status]").inner_text()


def fixed(x: float, decimals: int) -> str:
    return f"{x:.{decimals}f}".replace("-", "\u2212")


def test_a_box_whose_question_names_a_precision_checks_and_shows_at_it(page, site_url, site_boxes):
    """Every box whose exercise says "to four decimals" compares and shows at four decimals, and echoes the entry.

    Its answer to those decimals is right and shown so (not at three significant figures: 0.9993, not 0.999);
    one unit of the last decimal off is wrong, said as typed; more decimals are echoed as typed, and what rounds
    to the answer is right.
    """
    asked = 0
    for path, boxes in site_boxes.items():
        page.goto(f"{site_url}/{path}")
        for box in boxes:
            question = page.locator(f"#{box['id']}").evaluate("""form => {
                const exercise = form.closest('.exercise').cloneNode(true);
                exercise.querySelectorAll('form').forEach((f) => f.remove());  // its hint names the decimals too
                return exercise.textContent.replace(/\\s+/g, ' ');
            }""")
            named = PRECISION.search(question)
            if not named:
                continue
            asked += 1
            d = WORDS.get(named.group(1).lower()) or int(named.group(1))
            assert box["decimals"] == d, f"{box['id']}: the question asks for {d} decimals"
            entries = [round(a, d) for a in box["expected"]]
            unit = 10.0**-d
            if box["matrix"]:
                texts = [f"{a:.{d}f}" for a in entries]
                assert enter(page, box["id"], *texts).startswith("Right"), box["id"]
                continue
            (answer,) = entries
            shown = fixed(answer, d)
            assert enter(page, box["id"], f"{answer:.{d}f}") == f"Right: {shown} matches the answer, {shown}."
            longer = f"{box['expected'][0]:.{d + 2}f}"
            echoed = fixed(float(longer), d + 2)
            assert enter(page, box["id"], longer) == f"Right: {echoed} matches the answer, {shown}."
            # The far edge of what rounds to the answer, away from the unrounded answer: right at this precision,
            # though farther than half a unit from the unrounded one.
            away = -1 if box["expected"][0] >= answer else 1
            edge = f"{answer + away * 0.49 * unit:.{d + 2}f}"
            assert enter(page, box["id"], edge) == f"Right: {fixed(float(edge), d + 2)} matches the answer, {shown}."
            for way, words in ((-1, "too low"), (1, "too high")):
                slip = fixed(answer + way * unit, d)
                assert enter(page, box["id"], slip) == f"Not yet: {slip} is {words}.", box["id"]
            assert enter(page, box["id"], f"{answer:.{d}f} * 1") == f"Right: {answer:.{d}f} * 1 = {shown} matches " \
                f"the answer, {shown}."
    assert asked >= 2
