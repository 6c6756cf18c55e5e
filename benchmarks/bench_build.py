"""How fast the book builds, and how much a reader downloads per chapter.

Every build is a ``make build`` in a fresh copy of the working tree (see
:mod:`tools.workcopy`; dependencies already installed), so the
repository's own ``_build/`` is never touched:

* clean build: a new copy, no cache (repeated, median reported);
* no-change rebuild: ``make build`` again with nothing edited;
* one-chapter rebuild: after adding a code cell to one chapter, the one
  whose notebook took longest to execute in the clean build (worst case).

What a page costs a reader (bytes, Lighthouse) is ``bench_lighthouse.py``'s.

Targets on 2 cores: clean < 90 s, no-change < 10 s, one chapter < 20 s.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from tools import ROOT, workcopy

REPEATS = 3
TARGETS = {"clean build": 90.0, "no-change rebuild": 10.0, "one-chapter rebuild": 20.0}


def timed_build(copy: Path) -> workcopy.BuildResult:
    result = workcopy.build(copy)
    if not result.ok:
        raise RuntimeError(f"make build failed in {copy}:\n{result.log[-3000:]}")
    print(f"  {result.seconds:6.1f} s, executed {sorted(result.executed)}", flush=True)
    return result


def build_times(tmp: Path) -> tuple[dict[str, list[float]], str, float, Path]:
    """Seconds of each kind of build; the edited chapter, its execution time; the last copy."""
    times: dict[str, list[float]] = {name: [] for name in TARGETS}
    for i in range(REPEATS):
        print(f"clean build {i + 1}/{REPEATS}", flush=True)
        copy = workcopy.copy_tree(ROOT, tmp / f"clean-{i}")
        result = timed_build(copy)
        times["clean build"].append(result.seconds)
    # The source whose notebook took longest to execute, and its seconds.
    chapter, execution = max(result.execution_seconds.items(), key=lambda item: item[1])
    for i in range(REPEATS):
        print(f"no-change rebuild {i + 1}/{REPEATS}", flush=True)
        times["no-change rebuild"].append(timed_build(copy).seconds)
    for i in range(REPEATS):
        print(f"rebuild after editing {chapter} {i + 1}/{REPEATS}", flush=True)
        path = copy / chapter
        path.write_text(path.read_text() + f"\n```{{code-cell}} ipython3\n{i} + 1  # benchmark edit\n```\n")
        result = timed_build(copy)
        if result.executed != {chapter}:
            raise RuntimeError(f"editing {chapter} executed {sorted(result.executed)}")
        times["one-chapter rebuild"].append(result.seconds)
    return times, chapter, execution, copy


def report(times, chapter, execution) -> str:
    lines = ["| build | median (s) | runs (s) | target (s) | met |", "|---|---:|---|---:|---|"]
    for name, runs in times.items():
        median = statistics.median(runs)
        met = "yes" if median < TARGETS[name] else "**no**"
        lines.append(f"| {name} | {median:.1f} | {', '.join(f'{r:.1f}' for r in runs)} "
                     f"| < {TARGETS[name]:.0f} | {met} |")
    lines += ["", f"One-chapter rebuild edits `{chapter}`, the slowest notebook "
              f"({execution:.1f} s to execute in the last clean build)."]
    return "\n".join(lines)


def main() -> str:
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        times, chapter, execution, _ = build_times(Path(tmp))
    return report(times, chapter, execution)


if __name__ == "__main__":
    print(main())
