"""How fast ``make live`` stops when its terminal closes and ``make`` leads the session.

Closing the terminal of ``ssh -t host make live`` signals ``make`` alone (the
session's leader), which waits for its children: ``tools.live`` must hear the
hang-up itself and stop the Jupyter server and its kernels, with the token's
runtime folder. :func:`tools.hangup.close_terminal` runs that on a
pseudo-terminal (a site newer than the sources, so nothing is built, and one
kernel started); this times it over :data:`RUNS` runs. The goal, checked: the
median is at most 2 s from the terminal closing to the last process ending,
and every run stops everything.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from benchmarks import check_goals
from tools import hangup

GOAL_S = 2.0
RUNS = 3
TIMEOUT = 60.0  # s: beyond this a run counts as not stopping


def main() -> str:
    seconds, missed = [], []
    for run in range(RUNS):
        with tempfile.TemporaryDirectory() as site:
            (Path(site) / "index.html").write_text("<p>book</p>")
            result = hangup.close_terminal(Path(site), TIMEOUT)
        seconds.append(result.seconds)
        print(f"run {run + 1}: {result.seconds:.2f} s, {len(result.alive)} left running", flush=True)
        if result.alive or result.runtime_left:
            missed.append(f"run {run + 1}: {len(result.alive)} processes still ran after {TIMEOUT:.0f} s, "
                          f"runtime folder left: {result.runtime_left}")
    median = statistics.median(seconds)
    if median > GOAL_S:
        missed.append(f"median {median:.2f} s from the hang-up to the last process ending (goal {GOAL_S:.0f} s)")
    report = (f"Closing the terminal of `make live` (make leading the session, one kernel): everything ended "
              f"after a median of {median:.2f} s over {RUNS} runs ({', '.join(f'{s:.2f}' for s in seconds)} s; "
              f"goal {GOAL_S:.0f} s).")
    return check_goals(report, missed)
