"""Benchmarks: ``python -m benchmarks``, from the repository root (see __main__.py for the contract).

The modules share the repository's ``tools`` package with the browser tests
(the static and Jupyter servers of ``make live``, the Chromium launch, the
working-copy builds), so that benchmarks measure exactly what the tests check,
and the two timers below, so that every chapter is timed the same way.
"""

from __future__ import annotations

import contextlib
import os
import resource
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
    executed with nbclient in the book's directory, its kernel on the build's
    OpenBLAS threads, as the book build does.
    """
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbclient import NotebookClient

    path = ROOT / "book" / f"{stem}.md"
    nb = read_myst_markdown_notebook(path.read_text())
    start = time.perf_counter()
    with _blas_threads():
        NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def timed_execution(stem: str) -> tuple[float, float]:
    """Wall-clock seconds of one :func:`execute_chapter` of ``stem``, and the CPU seconds its kernel used.

    The kernel is a child of this process: once it has exited, its CPU time
    (user and system) is in ``RUSAGE_CHILDREN``. On a shared machine the wall
    clock also counts the time other processes held the cores; the CPU time
    does not (numpy's threads can make it larger than the wall time).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = execute_chapter(stem)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def execution_table(number: int, title: str, runs: list[tuple[float, float]], goal_s: float) -> list[str]:
    """The Markdown lines reporting a chapter's ``runs`` of :func:`timed_execution` against ``goal_s``.

    A table of one row (median, runs, goal, whether the median meets it, the
    kernel's median CPU time) under a line saying how the chapter was run, and
    the machine's load after the runs.
    """
    times, cpu = [wall for wall, _ in runs], [used for _, used in runs]
    median = statistics.median(times)
    return [
        f"Chapter {number} executed {len(runs)} times in a fresh kernel (myst-nb reader + nbclient, kernel start "
        "included):",
        "",
        "| chapter | median (s) | runs (s) | goal (s) | met | kernel CPU, median (s) |",
        "|---|---:|---|---:|---|---:|",
        f"| {title} | {median:.1f} | {', '.join(f'{t:.1f}' for t in times)} | "
        f"<= {goal_s:.0f} | {'yes' if median <= goal_s else 'NO'} | {statistics.median(cpu):.1f} |",
        "",
        f"Load average (1 min) after the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
    ]


def chapter_report(number: int, title: str, stem: str, goal_s: float, parts: list[tuple[str, float]],
                   parts_heading: str, runs: int = 3) -> str:
    """Execute ``book/<stem>.md`` ``runs`` times and report it, with its ``parts`` timed alone, against ``goal_s``.

    The report is :func:`execution_table`, then ``parts_heading`` over a
    table of ``(what, median seconds)``; it raises :class:`GoalMissed` (with
    the report) when the median execution exceeds ``goal_s``.
    """
    measured = [timed_execution(stem) for _ in range(runs)]
    print(f"{stem}: {', '.join(f'{wall:.1f} s' for wall, _ in measured)}", flush=True)
    median = statistics.median(wall for wall, _ in measured)
    report = "\n".join([
        *execution_table(number, title, measured, goal_s),
        "",
        parts_heading,
        "",
        "| part | median (s) |",
        "|---|---:|",
        *(f"| {what} | {seconds:.2f} |" for what, seconds in parts),
    ])
    missed = [] if median <= goal_s else [f"chapter {number} executes in {median:.1f} s, over its {goal_s:.0f} s"]
    return check_goals(report, missed)


@contextlib.contextmanager
def _blas_threads():
    """Inside the block, kernels start with the build's OpenBLAS threads (``tools.build.BLAS_THREADS``).

    The kernel inherits this process's environment: without it a kernel used all
    the cores' threads, which a loaded machine turned into minutes of waiting
    (chapter 12: 160 to 207 s at load 18, against 25 s with one thread).
    """
    from tools.build import BLAS_THREADS

    saved = {key: os.environ.get(key) for key in BLAS_THREADS}
    os.environ.update({key: os.environ.get(key) or value for key, value in BLAS_THREADS.items()})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def median_time(call, runs: int = 3) -> float:
    """Median wall-clock seconds of ``call()`` over ``runs`` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
