"""Live cells through ``make live``'s servers, on a 390-px phone: cells that run what they need and show it.

Each chapter is opened with a local Jupyter server started as ``make live``
starts it (:class:`tools.servers.JupyterServer`) and launched with the real
*Live Code* button; ``live-cells.js`` then runs the chapter's set-up. The
tests run a chapter's LAST code cell first, as a reader who jumps to the end
does: every code cell above it runs first (chapter 12's include its training
cell, about 40 s alone), and the numbers the text quotes from that cell,
printed live by the cells the page leaves out, are the numbers the page
shows. Then: a figure cell draws its figure and an edit redraws it; a cell
shows its state in words, and its seconds while it runs; an error shows its
last line first and fits the phone; a NameError for a name a cell above
defines offers to run the cells above; Restart asks, and resets the states
and the status line.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from _ext.katex_math.numbers import as_power
from tools import ROOT
from tools.chromium import open_page
from tools.live import live_url
from tools.servers import JupyterServer

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}
LAUNCH_TIMEOUT = 180_000  # ms: a cold kernel and a chapter's set-up on a busy 2-core machine
#: Running chapter 12's last cell runs its 17 cells above, the training cell (39-54 s on a quiet
#: machine) among them; several times that on a loaded one.
RUN_ALL_TIMEOUT = 600_000
RUN_TIMEOUT = 120_000
CHAPTERS = ["smoothing", "heads-together", "attention-cost"]
#: A number the text quotes: ``{glue:text}`name:format```.
QUOTED = re.compile(r"\{glue:text\}`([\w-]+)(?::([^`]*))?`")
PASTED = re.compile(r'<span class="pasted-text">([^<]*)</span>')
#: A glued number in e-notation is typeset as a power of ten (_ext/katex_math/numbers.py): its TeX source.
TYPESET = re.compile(r'<annotation encoding="application/x-tex">([^<]*)</annotation>')

STATES = "() => [...document.querySelectorAll('div.cell[data-live-state]')].map(c => c.dataset.liveState)"
SETTLED = """() => {
  const states = [...document.querySelectorAll('div.cell[data-live-state]')].map(c => c.dataset.liveState);
  return states.length > 0 && states[0] === 'ran' && !states.some(s => s === 'running' || s === 'waiting');
}"""

#: Open the solutions (closed <details>) a cell is in, as a reader does to reach its Run button.
OPEN_FOLDS = "el => { for (let d = el.closest('details'); d; d = d.parentElement.closest('details')) d.open = true; }"
#: The cell is in an end state, and nothing runs or waits on the page.
ENDED = """el => ['ran', 'edited', 'failed', 'not-run'].includes(el.dataset.liveState)
  && !document.querySelector('div.cell[data-live-state=running], div.cell[data-live-state=waiting]')"""


@pytest.fixture(scope="module")
def jupyter(site_url):
    server = JupyterServer(origin=site_url)
    yield server
    server.stop()


def launch(browser, site_url, jupyter, chapter):
    """The chapter on a phone, Live Code started, its set-up run."""
    page = open_page(browser, {site_url, jupyter.url.rstrip("/")}, **PHONE)
    page.dialogs = []
    page.goto(live_url(site_url, f"book/{chapter}.html", jupyter.url, jupyter.token))
    page.locator(".dropdown-launch-buttons .dropdown-toggle").click()
    page.locator(".btn-launch-thebe").click()
    page.locator(".live-code-status[data-state=ready]").wait_for(timeout=LAUNCH_TIMEOUT)
    page.wait_for_function(SETTLED, timeout=LAUNCH_TIMEOUT)
    return page


def cells(page):
    return page.locator("div.cell[data-live-state]")


def run(page, index: int, timeout: int = RUN_TIMEOUT) -> str:
    """Press cell ``index``'s Run button (opening the solution it is folded in) and wait for its end state."""
    cell = cells(page).nth(index)
    cell.evaluate(OPEN_FOLDS)
    cell.locator(".live-cell-run").click()
    page.wait_for_function(ENDED, arg=cell.element_handle(), timeout=timeout)
    return cell.get_attribute("data-live-state")


def failures(page) -> list[str]:
    """The cells' state lines and error lines, to say why a run did not end as expected."""
    return page.evaluate("""() => [...document.querySelectorAll('.live-cell-state, .live-cell-error-line')]
        .map(el => el.textContent).filter(t => !/: (ran|not run)/.test(t))""")


def set_source(page, index: int, source: str) -> None:
    cells(page).nth(index).locator(".CodeMirror").evaluate("(el, src) => el.CodeMirror.setValue(src)", source)


def quoted_live(page, index: int) -> dict[str, str]:
    """``name = value`` lines that the left-out cells after cell ``index`` printed live."""
    quoted = cells(page).nth(index).locator(".live-cell-quoted")
    assert quoted.count() == 1, "nothing printed under the cell: the numbers the text quotes are missing"
    text = quoted.text_content()
    return dict(re.findall(r"^([\w-]+) = (.+)$", text, re.M))


def the_text_quotes(chapter: str, site_dir: Path, live: dict[str, str]) -> dict[str, tuple[str, bool]]:
    """For each live number the text quotes: (formatted as the text formats it, whether the page shows that)."""
    formats = dict(QUOTED.findall((ROOT / "book" / f"{chapter}.md").read_text()))
    page = (site_dir / "book" / f"{chapter}.html").read_text()
    shown = set(PASTED.findall(page)) | set(TYPESET.findall(page))
    found = {}
    for name, value in live.items():
        if name in formats:
            try:
                number = float(value.replace(",", ""))
            except ValueError:  # a string the text quotes
                continue
            text = format(int(number) if formats[name] in ("", ",") and number.is_integer() else number,
                          formats[name])
            found[name] = (text, text in shown or as_power(text) in shown)
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_last_cell_run_first_runs_what_it_needs_and_prints_what_the_text_quotes(browser, site_url, site_dir,
                                                                                    jupyter, chapter):
    page = launch(browser, site_url, jupyter, chapter)
    try:
        count = cells(page).count()
        states = page.evaluate(STATES)
        assert "not-run" in states[1:], "the set-up ran every cell: nothing would test the rule"
        # The set-up, folded under its toggle, has run; the last cell has not, and says so in words.
        assert cells(page).nth(0).locator(".live-cell-state").text_content().startswith("Cell 1 (set-up): ran in ")
        assert cells(page).nth(count - 1).locator(".live-cell-state").text_content() == f"Cell {count}: not run"
        assert run(page, count - 1, timeout=RUN_ALL_TIMEOUT) == "ran", failures(page)
        assert page.evaluate(STATES) == ["ran"] * count  # every cell above ran, in order, before it
        assert page.locator(".live-cell-error").count() == 0
        assert "NameError" not in page.locator("article").text_content()
        numbers = the_text_quotes(chapter, site_dir, quoted_live(page, count - 1))
        assert numbers, "the last cell printed none of the numbers the text quotes"
        assert {name: text for name, (text, shown) in numbers.items() if not shown} == {}
        assert page.external_requests == []
    finally:
        page.context.close()


#: (sources of the cells above, a name, the index of the cell that defines it or -1): what the NameError offer reads.
DEFINITIONS = [
    (["import numpy as np"], "np", 0),
    (["from selfattention import cost, defaults, memory", "x = cost"], "cost", 0),
    (["from selfattention.studies import induction as study"], "study", 0),
    (["from m.figures import (\n    plot_a,\n    plot_b,\n)\nz = 1"], "plot_b", 0),
    (["from m.figures import (\n    plot_a,\n)\nplot_b(1)"], "plot_b", -1),
    (["a, b = 1, 2", "b = 3"], "b", 1),
    (["f(a, b=1)"], "b", -1),
    (["fit = training.fit_circuit(\n    batches, learning_rate=study.LEARNING_RATE,\n)"], "learning_rate", -1),
    (["fit = training.fit_circuit(\n    batches)"], "fit", 0),
    (["for i in range(n):\n    pass"], "n", -1),
    (["for i, x in enumerate(n):\n    pass"], "x", 0),
    (["if x == 1:\n    pass", "y = x  # x = 1", "x.attr = 3"], "x", -1),
    (["def deep(n):\n    return 1"], "deep", 0),
    (["with open(p) as handle:\n    pass"], "handle", 0),
]


def test_a_name_is_found_where_a_cell_above_defines_it(page, site_url):
    """No kernel needed: live-cells.js's reading of the cells above, on cases the chapters have and traps."""
    page.goto(f"{site_url}/book/smoothing.html")
    page.add_script_tag(url=f"{site_url}/_static/live-cells.js")
    found = page.evaluate("cases => cases.map(([sources, name]) => window.liveCells.definingSource(sources, name))",
                          [[sources, name] for sources, name, _ in DEFINITIONS])
    assert found == [expected for *_, expected in DEFINITIONS]


@pytest.fixture(scope="module")
def cost_page(browser, site_url, jupyter):
    """Chapter 13, live, its set-up run. Each test leaves the cells' sources as it found them."""
    page = launch(browser, site_url, jupyter, "attention-cost")
    yield page
    page.context.close()


@contextlib.contextmanager
def edited(page, index: int, source: str):
    """Cell ``index`` holds ``source`` inside the block, its own source again after it."""
    original = cells(page).nth(index).locator(".CodeMirror").evaluate("el => el.CodeMirror.getValue()")
    set_source(page, index, source)
    try:
        yield original
    finally:
        set_source(page, index, original)


def source_of(page, index: int) -> str:
    return cells(page).nth(index).locator(".CodeMirror").evaluate("el => el.CodeMirror.getValue()")


def test_one_toolbar_and_no_per_cell_restart(cost_page):
    assert cost_page.locator(".live-cells-toolbar").count() == 1
    assert cost_page.locator(".live-cells-toolbar button").all_inner_texts() == ["Run all", "Restart"]
    assert cost_page.locator(".thebe-restart-button, .thebe-restartall-button, .thebe-runall-button").count() == 0
    assert cells(cost_page).count() == cost_page.locator(".live-cell-run").count() > 10


def test_the_toolbar_wears_the_theme_colours(cost_page):
    for scheme in ("light", "dark"):
        cost_page.evaluate("s => { document.documentElement.dataset.theme = s; }", scheme)
        colours = cost_page.locator(".live-cells-run-all").evaluate("""b => {
            const probe = document.createElement('span');
            probe.style.color = 'var(--pst-color-primary)';
            document.body.append(probe);
            const primary = getComputedStyle(probe).color;
            probe.remove();
            return [getComputedStyle(b).color, primary, getComputedStyle(b).borderTopColor]; }""")
        assert colours[0] == colours[1] == colours[2], (scheme, colours)
    cost_page.evaluate("() => { document.documentElement.dataset.theme = 'light'; }")


def test_a_cell_that_takes_seconds_shows_them(cost_page):
    """Run with Shift-Enter in its editor, as with its button: the same rule, the same state line."""
    with edited(cost_page, 1, "import time\ntime.sleep(3.5)"):
        state = cells(cost_page).nth(1).locator(".live-cell-state")
        cells(cost_page).nth(1).locator(".CodeMirror").evaluate("el => el.CodeMirror.focus()")
        cost_page.keyboard.press("Shift+Enter")
        cost_page.wait_for_function("el => /^Cell 2: running… [1-9][0-9.]* s$/.test(el.textContent)",
                                    arg=state.element_handle(), timeout=RUN_TIMEOUT)
        cost_page.wait_for_function("el => el.textContent.startsWith('Cell 2: ran in ')",
                                    arg=state.element_handle(), timeout=RUN_TIMEOUT)
    # Its own source back: what it holds has not run, and runs again before the cell below it.
    assert state.text_content() == "Cell 2: edited since it ran"
    assert run(cost_page, 2) == "ran"
    assert state.text_content().startswith("Cell 2: ran in ")


def test_an_error_shows_its_last_line_first_and_fits_a_phone(cost_page):
    with edited(cost_page, 1, "def deep(n):\n    return deep(n - 1) if n else 1 / 0\n\ndeep(5)"):
        assert run(cost_page, 1) == "failed"
        cell = cells(cost_page).nth(1)
        assert cell.locator(".live-cell-state").text_content() == "Cell 2: failed (ZeroDivisionError)"
        error = cell.locator(".live-cell-error")
        assert error.get_attribute("role") == "alert"
        assert error.locator(".live-cell-error-line").inner_text() == "ZeroDivisionError: division by zero"
        traceback = cell.locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        assert error.bounding_box()["y"] < traceback.bounding_box()["y"]  # the last line comes first
        fits = "el => el.scrollWidth <= el.clientWidth + 1 && el.getBoundingClientRect().right <= innerWidth + 1"
        assert error.evaluate(fits) and traceback.evaluate(fits)


def test_a_name_error_for_a_name_above_offers_to_run_the_cells_above(cost_page):
    last = cells(cost_page).count() - 1
    assert "cost.exact_cost" in source_of(cost_page, 1)
    with edited(cost_page, last, "del cost  # the set-up's import, gone"):
        assert run(cost_page, last, timeout=RUN_ALL_TIMEOUT) == "ran", failures(cost_page)
        assert run(cost_page, 1) == "failed"
    error = cells(cost_page).nth(1).locator(".live-cell-error")
    assert error.locator(".live-cell-error-line").inner_text() == "NameError: name 'cost' is not defined"
    assert "cost is defined by a cell above this one (cell 1 (set-up)" in error.inner_text()
    error.locator(".live-cell-rerun").click()
    cost_page.wait_for_function(SETTLED, timeout=RUN_TIMEOUT)
    assert cost_page.evaluate(STATES)[:2] == ["ran", "ran"]
    assert cells(cost_page).nth(1).locator(".live-cell-error").count() == 0


def test_a_figure_cell_draws_its_figure_and_an_edit_redraws_it(cost_page):
    figure_cell = next(i for i in range(cells(cost_page).count())
                       if 'glue("fig-cost-wall"' in source_of(cost_page, i))
    assert run(cost_page, figure_cell, timeout=RUN_ALL_TIMEOUT) == "ran"
    image = cells(cost_page).nth(figure_cell).locator(".jp-OutputArea-output img")
    cost_page.wait_for_function("img => img.complete && img.naturalWidth > 300", arg=image.element_handle())
    assert image.get_attribute("alt") == cost_page.locator("#fig-cost-wall img.lean-light").get_attribute("alt")
    before = image.get_attribute("src")
    source = source_of(cost_page, figure_cell)
    assert "guard_n," in source
    with edited(cost_page, figure_cell, source.replace("guard_n,", "guard_n // 64,")):
        assert run(cost_page, figure_cell) == "ran"
        image = cells(cost_page).nth(figure_cell).locator(".jp-OutputArea-output img")
        cost_page.wait_for_function("img => img.complete && img.naturalWidth > 300", arg=image.element_handle())
        assert image.get_attribute("src") != before


def test_restart_asks_then_resets_the_states_and_the_status_line(cost_page):
    answers = []

    def answer(accept):
        def handle(dialog):
            answers.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()
        return handle

    assert run(cost_page, 2) == "ran"
    cost_page.once("dialog", answer(False))
    cost_page.locator(".live-cells-restart").click()
    assert len(answers) == 1 and "Restart the live session?" in answers[0]
    before = cost_page.evaluate(STATES)
    assert before[:3] == ["ran"] * 3  # declined: nothing changed

    cost_page.once("dialog", answer(True))
    cost_page.locator(".live-cells-restart").click()
    assert len(answers) == 2
    status = cost_page.locator(".live-code-status")
    cost_page.wait_for_function("el => el.textContent.includes('Restarted')", arg=status.element_handle(),
                                timeout=LAUNCH_TIMEOUT)
    cost_page.wait_for_function(SETTLED, timeout=LAUNCH_TIMEOUT)
    assert cost_page.evaluate(STATES) == ["ran"] + ["not-run"] * (len(before) - 1)  # only the set-up ran again
    assert cost_page.locator(".live-cell-error").count() == 0
    assert status.get_attribute("data-state") == "ready"
    assert run(cost_page, 2) == "ran"  # a cell runs, with what it needs, in the new session
    assert cost_page.evaluate(STATES)[:3] == ["ran"] * 3


def test_a_kernel_that_dies_and_restarts_by_itself_resets_the_states(cost_page):
    """A reader's code that kills the kernel (as running out of memory would): the server restarts it,
    and the page says so, marks every cell not run and runs the set-up again, instead of failing every cell."""
    assert run(cost_page, 2) == "ran"
    with edited(cost_page, 1, "import os\nos._exit(1)  # the kernel process ends"):
        cells(cost_page).nth(1).locator(".live-cell-run").click()
        status = cost_page.locator(".live-code-status")
        cost_page.wait_for_function("el => el.textContent.includes('The live session restarted by itself')",
                                    arg=status.element_handle(), timeout=LAUNCH_TIMEOUT)
    cost_page.wait_for_function(SETTLED, timeout=LAUNCH_TIMEOUT)
    states = cost_page.evaluate(STATES)
    assert states == ["ran"] + ["not-run"] * (len(states) - 1)
    assert run(cost_page, 2) == "ran"
