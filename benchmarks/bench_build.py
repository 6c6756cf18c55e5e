"""How fast the book builds, phase by phase, and whether it meets its goals.

Every build is a ``make build`` in a fresh copy of the working tree (see
:mod:`tools.workcopy`; dependencies already installed), so the
repository's own ``_build/`` is never touched:

* clean build: a new copy, no cache (repeated, median reported);
* no change: ``make build`` again with nothing edited;
* one chapter's prose edited: a paragraph added to one chapter, the one
  whose notebook took longest to execute in the clean build (worst case);
  its outputs come from the cache;
* one chapter's code edited: a code cell added to that chapter, which is
  then executed again (and no other).

Each line of the build's log is stamped when it arrives; the phases are the
stretches between the lines Sphinx, myst-nb and ``tools/build.py`` print when
one starts (:data:`PHASES`). KaTeX's share of writing is what ``katex_math``
logs; a chapter's execution is what myst-nb logs ("Executed notebook in").

Goals on 2 cores (:data:`GOALS`): clean build at most 60 s, no change at most
5 s, a prose edit at most 10 s, a code edit at most 10 s plus that chapter's
own execution. A missed goal, or a build that reads or executes more than its
edit calls for, makes :func:`main` raise :class:`benchmarks.GoalMissed`.

Usage: ``python -m benchmarks build`` (this repository), or
``python -m benchmarks.bench_build <root>`` to profile another checkout
(its own ``tools/build.py`` and ``_ext/`` run; ``.venv`` and
``node_modules`` are this repository's).
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks import check_goals
from tools import ROOT, workcopy

REPEATS = 3
KINDS = ("clean build", "no change", "one chapter's prose edited", "one chapter's code edited")
#: (phase, the log line that starts it), in order; a phase whose line is missing takes no time.
PHASES = (
    ("start-up and staging (make, Python, last good build copied)", None),
    ("Sphinx set-up (configuration, extensions, environment loaded)", "Running Sphinx"),
    ("reading pages, executing notebooks included", "updating environment:"),
    ("environment saved, consistency, static files", "looking for now-outdated files"),
    ("writing pages", "writing output... ["),
    ("copying images", "copying images..."),
    ("search index, inventory, post-processing", "dumping search index"),
    ("publishing, exit", "build succeeded"),
)
#: Seconds: the most each kind may take (the code edit: beyond its chapter's own execution).
GOALS = {"clean build": 60.0, "no change": 5.0, "one chapter's prose edited": 10.0, "one chapter's code edited": 10.0}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
KATEX = re.compile(r"katex_math: typeset (\d+) formulas in ([\d.]+) s")
NOTHING_READ = "updating environment: 0 added, 0 changed, 0 removed"


def phases(result: workcopy.BuildResult) -> dict[str, float]:
    """Seconds of each phase of :data:`PHASES`, plus KaTeX's and the notebooks' execution."""
    lines = [(seconds, ANSI.sub("", line)) for seconds, line in result.lines]
    starts, position = [(PHASES[0][0], 0.0)], 0
    for name, marker in PHASES[1:]:
        for i in range(position, len(lines)):
            if marker in lines[i][1]:
                starts.append((name, lines[i][0]))
                position = i
                break
    ends = [seconds for _, seconds in starts[1:]] + [result.seconds]
    timed = {name: 0.0 for name, _ in PHASES}
    timed.update({name: end - start for (name, start), end in zip(starts, ends, strict=True)})
    katex = KATEX.search(result.log)
    timed["KaTeX (part of writing pages)"] = float(katex[2]) if katex else float("nan")  # not logged: unknown
    timed["notebooks executed (summed over chapters)"] = sum(result.execution_seconds.values())
    timed["total"] = result.seconds
    return timed


def timed_build(copy: Path, kind: str, runs: dict[str, list]) -> workcopy.BuildResult:
    result = workcopy.build(copy)
    if not result.ok:
        raise RuntimeError(f"make build failed in {copy}:\n{result.log[-3000:]}")
    print(f"  {kind}: {result.seconds:6.1f} s, executed {sorted(result.executed)}", flush=True)
    runs[kind].append(result)
    return result


def edit(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def build_runs(root: Path, tmp: Path) -> tuple[dict[str, list[workcopy.BuildResult]], str]:
    """Every build of every kind (:data:`KINDS`), and the chapter the edits went to."""
    runs: dict[str, list[workcopy.BuildResult]] = {kind: [] for kind in KINDS}
    for i in range(REPEATS):
        result = timed_build(workcopy.copy_tree(root, tmp / f"clean-{i}"), "clean build", runs)
    copy = tmp / f"clean-{REPEATS - 1}"
    chapter = max(result.execution_seconds.items(), key=lambda item: item[1])[0]  # the slowest notebook
    for i in range(REPEATS):
        timed_build(copy, "no change", runs)
        edit(copy / chapter, f"\nA paragraph the benchmark adds, edit {i}.\n")
        timed_build(copy, "one chapter's prose edited", runs)
        edit(copy / chapter, f"\n```{{code-cell}} ipython3\n{i} + 1  # benchmark edit\n```\n")
        timed_build(copy, "one chapter's code edited", runs)
    return runs, chapter


def surprises(runs: dict[str, list[workcopy.BuildResult]], chapter: str) -> list[str]:
    """What the builds did beyond what their edits call for."""
    found = []
    for result in runs["no change"]:
        if NOTHING_READ not in ANSI.sub("", result.log) or result.executed:
            found.append(f"a build with nothing changed read a page or executed {sorted(result.executed)}")
    for kind, executed in (("one chapter's prose edited", set()), ("one chapter's code edited", {chapter})):
        found += [f"{kind}: executed {sorted(r.executed)}" for r in runs[kind] if r.executed != executed]
    return sorted(set(found))


def medians(runs: dict[str, list[workcopy.BuildResult]]) -> dict[str, dict[str, float]]:
    """{kind: {phase: median seconds}}."""
    table = {}
    for kind, results in runs.items():
        profiles = [phases(result) for result in results]
        table[kind] = {name: statistics.median(p[name] for p in profiles) for name in profiles[0]}
    return table


def goals_missed(runs, chapter) -> tuple[list[str], list[str]]:
    """Rows of the goals table, and the goals missed."""
    rows, missed = [], []
    for kind, goal in GOALS.items():
        totals = [r.seconds for r in runs[kind]]
        own = [r.execution_seconds.get(chapter, 0.0) if kind.endswith("code edited") else 0.0 for r in runs[kind]]
        beyond = statistics.median(t - o for t, o in zip(totals, own, strict=True))
        met = beyond <= goal
        what = f"at most {goal:.0f}" + (" + its chapter's execution" if kind.endswith("code edited") else "")
        rows.append(f"| {kind} | {statistics.median(totals):.1f} | {', '.join(f'{t:.1f}' for t in totals)} "
                    f"| {what} | {'yes' if met else '**no**'} |")
        missed += [] if met else [f"{kind}: median {beyond:.1f} s against a goal of {goal:.0f} s"]
    return rows, missed


def _seconds(value: float) -> str:
    """A median in the phase table; a dash where the build did not log it (an older checkout's KaTeX)."""
    return "–" if value != value else f"{value:.1f}"


def report(runs, chapter) -> tuple[str, list[str]]:
    goal_rows, missed = goals_missed(runs, chapter)
    missed += surprises(runs, chapter)
    table = medians(runs)
    lines = ["| build | median (s) | runs (s) | goal (s) | met |", "|---|---:|---|---|---|", *goal_rows, "",
             f"Where the time goes, median seconds of {REPEATS} runs (edits to `{chapter}`, the slowest notebook):",
             "", "| phase | " + " | ".join(KINDS) + " |", "|---|" + "---:|" * len(KINDS)]
    for name in table[KINDS[0]]:
        lines.append(f"| {name} | " + " | ".join(_seconds(table[kind][name]) for kind in KINDS) + " |")
    clean = runs["clean build"]
    per_chapter = {stem: statistics.median(r.execution_seconds.get(stem, 0.0) for r in clean)
                   for stem in sorted(clean[0].execution_seconds)}
    lines += ["", "Each chapter's notebook in the clean builds (median s; chapters may execute at once): "
              + ", ".join(f"`{Path(stem).stem}` {seconds:.1f}" for stem, seconds in per_chapter.items()) + "."]
    return "\n".join(lines), missed


def main(root: Path = ROOT) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        runs, chapter = build_runs(root, Path(tmp))
    text, missed = report(runs, chapter)
    return check_goals(text, missed)


if __name__ == "__main__":
    from benchmarks import GoalMissed

    try:
        print(main(Path(sys.argv[1]).resolve() if sys.argv[1:] else ROOT))
    except GoalMissed as missed:
        print(missed.report, "", "Goals missed:", *missed.missed, sep="\n")
        sys.exit(1)
