"""Benchmarks: ``python -m benchmarks``, from the repository root (see __main__.py for the contract).

The modules share the repository's ``tools`` package with the browser tests
(the static and Jupyter servers of ``make live``, the Chromium launch, the
working-copy builds), so that benchmarks measure exactly what the tests check,
and the two timers below, so that every chapter is timed the same way.
"""

from __future__ import annotations

import statistics
import time

from tools import ROOT


class GoalMissed(Exception):
    """Raised by a benchmark's ``main()`` whose measurements miss a goal; carries its results.

    The runner records ``report`` (the Markdown ``main()`` would have
    returned) with the missed goals, and ``make bench`` exits non-zero.
    """

    def __init__(self, report: str, missed: list[str]):
        super().__init__("; ".join(missed))
        self.report, self.missed = report, missed


def check_goals(report: str, missed: list[str]) -> str:
    """``report``, or :class:`GoalMissed` with it if any goal in ``missed``."""
    if missed:
        raise GoalMissed(report, missed)
    return report


def execute_chapter(stem: str) -> float:
    """Seconds to execute ``book/<stem>.md`` in a fresh kernel, kernel start included.

    The MyST source is read into a notebook with myst-nb's own reader and
    executed with nbclient in the book's directory, as the book build does.
    """
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbclient import NotebookClient

    path = ROOT / "book" / f"{stem}.md"
    nb = read_myst_markdown_notebook(path.read_text())
    start = time.perf_counter()
    NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def median_time(call, runs: int = 3) -> float:
    """Median wall-clock seconds of ``call()`` over ``runs`` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
