"""The Binder environment's install time and size: ``binder/`` against today's root ``requirements.txt``.

Before ``binder/`` existed, repo2docker installed the root ``requirements.txt``
(everything the build and the tests need). Each variant is installed as
repo2docker installs it (:func:`tools.binder.install`: a fresh virtual
environment, ``pip install --no-cache-dir -r <requirements>``, then
``binder/postBuild`` for ``binder/``), from PyPI alone: no pip cache, no pip
configuration file, none of this machine's local wheel mirrors, so every
wheel is downloaded as on Binder. Runs alternate between the variants, so
that the load of a shared machine falls on both alike; medians are reported.
Goal: ``binder/`` adds at most :data:`GOAL_MB` (repo2docker's own notebook
interface, :data:`tools.binder.BASE`, is in every Binder image and not
counted: ``binder/`` installs what the live session needs on top of it).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import check_goals
from tools import ROOT, binder

RUNS = 3
#: The most ``binder/`` may add to a fresh environment (the median's "size added"), in MB.
GOAL_MB = 400
VARIANTS = {
    "before: root requirements.txt": {"requirements": "requirements.txt", "post_build": None},
    "binder/ (requirements.txt + postBuild)": {"requirements": f"{binder.BINDER}/requirements.txt",
                                               "post_build": f"{binder.BINDER}/postBuild"},
}


def pypi_only_env(cache: Path) -> dict[str, str]:
    """The environment of pip with no configuration file, no local mirrors and an empty cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_CACHE_DIR=str(cache), PIP_DISABLE_PIP_VERSION_CHECK="1")
    if os.environ.get("PIP_CERT"):
        env["PIP_CERT"] = os.environ["PIP_CERT"]
    return env


def size(path: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


def measure(variant: dict) -> dict:
    """Install ``variant`` once into a fresh environment: seconds, added bytes, packages."""
    work = Path(tempfile.mkdtemp(prefix="bench-binder-"))
    try:
        venv, empty = work / "venv", work / "empty"
        subprocess.run([sys.executable, "-m", "venv", str(empty)], check=True)
        seconds = binder.install(venv, ROOT, env=pypi_only_env(work / "cache"), **variant)
        listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                                capture_output=True, text=True, check=True).stdout
        added = size(venv) - size(empty)
        return {"seconds": sum(seconds.values()), "added": added, "packages": len(json.loads(listed))}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> str:
    runs: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    for i in range(RUNS):
        for name, variant in VARIANTS.items():
            runs[name].append(measure(variant))
            print(f"run {i + 1}, {name}: {runs[name][-1]}", flush=True)
    rows, medians = [], {}
    for name, results in runs.items():
        seconds = [r["seconds"] for r in results]
        medians[name] = (statistics.median(seconds), statistics.median(r["added"] for r in results))
        rows.append(f"| {name} | {results[0]['packages']} | {medians[name][1] / 1e6:.0f} | "
                    f"{', '.join(f'{s:.0f}' for s in seconds)} | {medians[name][0]:.0f} |")
    (before_s, before_b), (after_s, after_b) = medians.values()
    missed = [] if after_b / 1e6 <= GOAL_MB else [f"binder/ adds {after_b / 1e6:.0f} MB, over its {GOAL_MB} MB"]
    return check_goals("\n".join([
        "Install of the Binder environment as repo2docker does it (fresh venv, `pip install --no-cache-dir -r`, "
        "then postBuild), cold from PyPI (no pip cache, no local mirrors); runs alternate between the variants.",
        "",
        "| variant | packages | size added (MB) | runs (s) | median (s) |",
        "|---|---:|---:|---|---:|",
        *rows,
        "",
        f"binder/ against before: {after_b / before_b:.2f}x the size, {after_s / before_s:.2f}x the time "
        "(medians; the time includes downloads, so it varies with the network and the machine's load).",
        "On mybinder the pip layer of binder/requirements.txt is also cached across pushes that leave it "
        "unchanged; before, `-e .` in the requirements put the pip step after the copy of the repository, "
        "so every push reinstalled everything.",
        f"Goal: binder/ adds at most {GOAL_MB} MB: "
        f"{'met' if not missed else 'NOT met'} ({after_b / 1e6:.0f} MB).",
    ]), missed)
