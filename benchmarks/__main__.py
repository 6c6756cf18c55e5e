"""Run the benchmarks and rewrite ``benchmarks/results.md``.

Usage (from the repository root; ``make bench`` runs the first form)::

    python -m benchmarks              # every benchmarks/bench_*.py module
    python -m benchmarks build thebe  # only bench_build.py and bench_thebe.py

Contract for a benchmark module ``benchmarks/bench_<name>.py``: it defines
``main()``, which runs the measurements (printing progress as it likes) and
returns its results as a Markdown fragment (a few lines or a table; no
top-level heading). This runner prints each fragment and stores it in
``results.md`` between ``<!-- bench:<name> -->`` markers, under a heading
with the date and the machine it was measured on. Running a subset replaces
only those sections, so each module's figures stay until it is run again.
A module that raises is recorded as failed and the runner exits non-zero; one
that measured but missed a goal raises :class:`benchmarks.GoalMissed`, whose
results are recorded with the goals it missed, and the runner exits non-zero.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import os
import platform
import re
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.md"
HEADER = (
    "# Benchmark results\n\n"
    "Written by `make bench` (`python -m benchmarks`); do not edit by hand.\n"
    "Each section says when and on which machine it was measured.\n"
)
SECTION = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->\n.*?<!-- /bench:(?P=name) -->\n", re.S)


def discover() -> list[str]:
    """Names ``<name>`` of every ``benchmarks/bench_<name>.py``, sorted."""
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def machine() -> str:
    """A one-line description of this machine: CPU model, cores, memory, OS."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        models = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        cpu = models[0].strip() if models else cpu
    mem = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = re.search(r"^MemTotal:\s*(\d+)", meminfo.read_text(), re.M)
        mem = f", {int(kib.group(1)) / 2**20:.1f} GiB RAM" if kib else ""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu}, {cores} cores{mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def run_one(name: str) -> tuple[str, bool]:
    """Import ``benchmarks.bench_<name>``, call ``main()``: (markdown, succeeded)."""
    from benchmarks import GoalMissed

    print(f"== bench_{name}", flush=True)
    try:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        text = module.main()
        return (text or "(no results returned)").strip(), True
    except GoalMissed as missed:
        goals = "\n".join(f"- {goal}" for goal in missed.missed)
        return f"{missed.report.strip()}\n\n**Goals missed:**\n\n{goals}", False
    except Exception:  # record the failure, run the others
        trace = traceback.format_exc()
        print(trace, file=sys.stderr, flush=True)
        last = trace.strip().splitlines()[-1]
        return f"**Failed:** `{last}`", False


def section(name: str, body: str, when: str, where: str) -> str:
    return f"<!-- bench:{name} -->\n## {name}\n\n_Measured {when} on {where}._\n\n{body}\n<!-- /bench:{name} -->\n"


def merge(old: str, sections: dict[str, str]) -> str:
    """``results.md`` text: new sections replace old ones; sections of removed modules go."""
    kept = {m["name"]: m.group(0) for m in SECTION.finditer(old) if m["name"] in discover()}
    kept.update(sections)
    return HEADER + "".join(f"\n{kept[name]}" for name in sorted(kept))


def main(argv: list[str]) -> int:
    names = argv or discover()
    unknown = sorted(set(names) - set(discover()))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; have: {', '.join(discover())}", file=sys.stderr)
        return 2
    when = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    where = machine()
    sections, failed = {}, []
    for name in names:
        body, ok = run_one(name)
        print(body, flush=True)
        sections[name] = section(name, body, when, where)
        failed += [] if ok else [name]
    old = RESULTS.read_text() if RESULTS.exists() else ""
    RESULTS.write_text(merge(old, sections))
    print(f"wrote {RESULTS.relative_to(HERE.parent)}", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
