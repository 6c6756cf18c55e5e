"""A code exercise, live: a wrong answer gets a hint, a right one a pass, from the check in the kernel.

Chapter 2's exercise "a softmax that does not overflow", on a local Jupyter
server started as ``make live`` starts it (see ``test_thebe.py``). The
reader's answer replaces the starter cell's code, and the cell is run as a
reader runs it, with its own run button. The cells above it run first, in
order, so that the test holds whether a live cell runs only itself or the
cells it needs as well; the answers import what they use, so that neither
depends on the other.
"""

from __future__ import annotations

import re

import pytest

from tools.chromium import open_page
from tools.live import live_url
from tools.servers import JupyterServer

PAGE = "book/attention.html"
LAUNCH_TIMEOUT = 120_000  # ms: a cold kernel on a busy 2-core machine
RUN_TIMEOUT = 120_000  # ms: the cell, and the chapter's cells above it if they run first
KERNEL_STDOUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'
STARTER = "check_softmax(stable_softmax)"

WRONG = """\
import numpy as np
from selfattention.checks import check_softmax


def stable_softmax(scores):
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)


check_softmax(stable_softmax)
"""

RIGHT = """\
import numpy as np
from selfattention.checks import check_softmax


def stable_softmax(scores):
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


check_softmax(stable_softmax)
"""


@pytest.fixture(scope="module")
def jupyter(site_url):
    server = JupyterServer(origin=site_url)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def live_page(browser, site_url, jupyter):
    """The chapter, launched on the local server as a reader launches it."""
    page = open_page(browser, {site_url, jupyter.url.rstrip("/")})
    page.goto(live_url(site_url, PAGE, jupyter.url, jupyter.token))
    page.locator(".dropdown-launch-buttons .dropdown-toggle").click()
    page.locator(".btn-launch-thebe").click()
    page.locator(".live-code-status[data-state=ready]").wait_for(timeout=LAUNCH_TIMEOUT)
    yield page
    page.context.close()


def exercise_cell(page):
    """The exercise's starter cell: the first cell that calls the check (the solution's comes after it)."""
    return page.locator("div.cell", has_text=STARTER).first


def run(page, cell, source: str, verdict: str) -> str:
    """Write ``source`` into ``cell``, run it, and return the line the check printed, which starts with ``verdict``."""
    cell.locator(".CodeMirror").evaluate("(el, src) => el.CodeMirror.setValue(src)", source)
    cell.locator(".thebe-run-button").click()
    # Its start, case and all: has_text alone matches any part in any case, and "Not right: ..." holds "right:",
    # so the wrong answer's line, still shown while the right one runs, would be read as the new verdict.
    output = cell.locator(KERNEL_STDOUT, has_text=re.compile(rf"^\s*{re.escape(verdict)}"))
    output.wait_for(timeout=RUN_TIMEOUT)
    return output.text_content().strip()


def test_the_static_page_shows_the_starter_unwritten_and_the_solution_right(site_dir):
    """With no session, the starter's output (from the build) says how far it is, and the solution's passes."""
    html = (site_dir / PAGE).read_text()
    exercise = html[html.index('id="ex-attention-write"'):]
    exercise, solution = exercise.split("<details", 1)  # the solution is the closed box after it
    assert "Not written yet: replace each ... in stable_softmax with your code." in exercise
    assert "Live Code" in exercise and "<span class=\"pre\">live</span>" in exercise  # `make live`
    assert "Right: softmax of each row" in solution.split("</details>", 1)[0]


def test_a_wrong_then_a_right_answer_get_their_verdicts(live_page):
    cells = live_page.locator("div.cell")
    target = exercise_cell(live_page)
    above = target.evaluate("(el) => [...document.querySelectorAll('div.cell')].indexOf(el)")
    assert above > 0
    for k in range(above):  # the cells it may need, in order (a hidden one's button is not clickable)
        cells.nth(k).evaluate("(el) => el.querySelector('.thebe-run-button') && "
                              "el.querySelector('.thebe-run-button').click()")
    wrong = run(live_page, target, WRONG, "Not right:")
    assert wrong.startswith("Not right: an overflow") and "\n" not in wrong
    right = run(live_page, target, RIGHT, "Right:")
    assert right.startswith("Right: softmax of each row") and "\n" not in right
    assert "Traceback" not in target.text_content()
    assert live_page.external_requests == []
