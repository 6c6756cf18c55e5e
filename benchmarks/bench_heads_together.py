"""How long the chapter "Heads that work together" (chapter 12) takes to execute.

The chapter is executed in a fresh kernel as the book build does
(:func:`benchmarks.execute_chapter`, kernel start included). The goal is at
most 20 s on the book's 2-core build machine: :func:`main` raises
:class:`benchmarks.GoalMissed` when the median misses it. The parts that
dominate it are timed on their own, with the chapter's arguments: the
training above all, which runs at build time. Medians over repeated runs are
reported, with the CPU time the kernel used and the machine's load, since
other processes share its cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from benchmarks import chapter_report, median_time
from tools import ROOT

STEM = "heads-together"
GOAL_S = 20.0
RUNS = 3


def parts() -> list[tuple[str, float]]:
    """(what, median seconds) of the chapter's heaviest computations, with its arguments."""
    from selfattention import circuit_learning as cl
    from selfattention import defaults, induction, tokens, training
    from selfattention.studies import induction as study

    vocabulary, half = study.VOCABULARY, study.HALF
    sequences = tokens.repeated_sequences(2000, half, vocabulary, rng=defaults.SEED + 1)
    hand = cl.projections(induction.hand_built_circuit(vocabulary, 2 * half + 1))
    batches = study.training_batches(study.STEPS, study.BATCH, 2 * half, study.PERIODS, vocabulary,
                                     rng=defaults.SEED + 3)
    fit = training.fit_circuit(batches, vocabulary, learning_rate=study.LEARNING_RATE, rng=defaults.SEED + 4,
                               checkpoints=range(0, study.STEPS + 1, 20))
    return [
        (f"training: {study.STEPS} steps of Adam, batches of {study.BATCH}",
         median_time(lambda: training.fit_circuit(batches, vocabulary, learning_rate=study.LEARNING_RATE,
                                                  rng=defaults.SEED + 4), RUNS)),
        (f"tracking {len(fit.checkpoints)} checkpoints on 200 sequences",
         median_time(lambda: study.track(fit.checkpoints, sequences[:200], vocabulary, half), RUNS)),
        ("the hand-built circuit on 2000 sequences, both halves",
         median_time(lambda: study.accuracy(hand, sequences, vocabulary, half), RUNS)),
    ]


def parts_in_a_child() -> list[tuple[str, float]]:
    """:func:`parts`, run in a child process on the build's OpenBLAS threads (read when numpy loads)."""
    from tools.build import BLAS_THREADS

    env = {**BLAS_THREADS, **os.environ}
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_heads_together"], check=True, env=env,
                         cwd=ROOT, capture_output=True, text=True).stdout
    return [tuple(row) for row in json.loads(out.strip().splitlines()[-1])]


def main() -> str:
    heading = (f"Its heaviest parts alone (in one process, OpenBLAS on one thread as the build's kernels), "
               f"median of {RUNS}:")
    return chapter_report(12, "Heads that work together", STEM, GOAL_S, parts_in_a_child(), heading, RUNS)


if __name__ == "__main__":  # the child of parts_in_a_child(): its one line of JSON
    print(json.dumps(parts()))
