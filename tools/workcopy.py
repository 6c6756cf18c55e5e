"""Build the book in a copy of the working tree, or a tiny book, for the slow tests and ``make bench``.

A copy holds the files git would commit (tracked and untracked-but-not-ignored,
as they are on disk now), with ``.venv`` and ``node_modules`` linked to the
original's, so a build there is a clean ``make build`` of the current sources
that never touches the original's ``_build/``. Usage::

    from tools import ROOT, workcopy

    copy = workcopy.copy_tree(ROOT, tmp_path / "a")
    workcopy.own_venv(copy, ROOT)    # optional: a .venv of its own, at the copy's path
    result = workcopy.build(copy)    # make build, in the copy
    result.ok, result.seconds, result.executed   # {"book/smoothing.md", ...}
    result.lines                     # [(seconds since the start, line of the log), ...]
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

from tools import toc

LINKED = (".venv", "node_modules")  # installed dependencies, shared with the original
STAMPS = (".venv/.installed", "node_modules/.installed")  # `make` must not reinstall them
EXECUTED = re.compile(r"^(?P<path>\S+?): Executed notebook in (?P<seconds>[\d.]+) seconds", re.M)
#: ``SOURCE_DATE_EPOCH`` of the copies' builds: any fixed time makes two builds comparable.
EPOCH = "0"


@dataclasses.dataclass
class BuildResult:
    returncode: int
    seconds: float
    log: str  # stdout and stderr, interleaved as they came
    execution_seconds: dict[str, float]  # {source relative to the copy: seconds its notebook ran}
    lines: list[tuple[float, str]] = dataclasses.field(default_factory=list)  # (seconds since the start, line)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def executed(self) -> set[str]:
        """The sources (relative to the copy) whose notebook was executed."""
        return set(self.execution_seconds)


def source_files(root: Path) -> list[str]:
    """Files of the working tree that git tracks or would track, relative to ``root``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=root, capture_output=True, check=True).stdout
    return sorted(name for name in listed.decode().split("\0") if name and (root / name).is_file())


def copy_tree(root: Path, target: Path) -> Path:
    """Copy ``root``'s working tree into ``target`` (new), linking the installed dependencies."""
    target.mkdir(parents=True)
    for name in source_files(root):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target / name)
    for name in LINKED:
        (target / name).symlink_to((root / name).resolve(), target_is_directory=True)
    return target


def own_venv(copy: Path, root: Path) -> Path:
    """Replace the copy's link to ``root``'s ``.venv`` by a virtual environment of its own, at ``copy/.venv``.

    A fresh clone's ``make build`` would install the same pinned packages
    there, minutes of work; this hard-links the files of ``root``'s (seconds)
    and rewrites the scripts and ``.pth`` files that name the directory it was
    made in to name ``copy``. Python then finds every package, and every theme its templates,
    under ``copy/.venv``: the same environment at another path, which is what
    the site must not depend on.
    """
    venv, source = copy / ".venv", (root / ".venv").resolve()
    if venv.is_symlink():
        venv.unlink()
    shutil.copytree(source, venv, symlinks=True, copy_function=_link_or_copy)
    old, new = str(source.parent).encode(), str(copy.resolve()).encode()  # the project it was made in
    for path in [*(venv / "bin").iterdir(), *venv.glob("lib/python*/site-packages/*.pth")]:
        if path.is_file() and not path.is_symlink() and old in (data := path.read_bytes()):
            mode = path.stat().st_mode
            path.unlink()  # a new file: root's, hard-linked, stays as it was
            path.write_bytes(data.replace(old, new))
            path.chmod(mode)
    return venv


def _link_or_copy(source: str, target: str) -> None:
    """A hard link, or a copy where the two paths are on different file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def build(copy: Path, *, source_date_epoch: str = EPOCH, timeout: float = 1200) -> BuildResult:
    """Run ``make build`` in ``copy``; the kernels import the copy's ``src/``.

    Each line of the log is stamped with the seconds since the start when it
    arrived (``make bench`` times the build's phases from them).
    """
    env = {**os.environ, "SOURCE_DATE_EPOCH": source_date_epoch, "PYTHONPATH": str(copy / "src")}
    env.pop("MAKEFLAGS", None)
    command = ["make", "--no-print-directory", *(f"--old-file={s}" for s in STAMPS), "build"]
    start = time.perf_counter()
    make = subprocess.Popen(command, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    timer = threading.Timer(timeout, make.kill)
    timer.start()
    try:
        lines = [(time.perf_counter() - start, line.rstrip("\n")) for line in make.stdout]
        returncode = make.wait()
    finally:
        timed_out = not timer.is_alive()
        timer.cancel()
        make.stdout.close()
    seconds = time.perf_counter() - start
    log = "".join(f"{line}\n" for _, line in lines)
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout, output=log)
    execution = {_relative(m["path"], copy): float(m["seconds"]) for m in EXECUTED.finditer(log)}
    return BuildResult(returncode, seconds, log, execution, lines)


def _relative(path: str, copy: Path) -> str:
    try:
        return Path(path).resolve().relative_to(copy.resolve()).as_posix()
    except ValueError:
        return path


def differences(a: Path, b: Path, limit: int = 10) -> list[str]:
    """How two directory trees differ: each differing file with its first differing line."""
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    found = [f"only in {a}: {n}" for n in sorted(files_a - files_b)]
    found += [f"only in {b}: {n}" for n in sorted(files_b - files_a)]
    for name in sorted(files_a & files_b):
        bytes_a, bytes_b = (a / name).read_bytes(), (b / name).read_bytes()
        if bytes_a != bytes_b:
            found.append(f"{name}: {first_difference(bytes_a, bytes_b)}")
        if len(found) >= limit:
            break
    return found[:limit]


def first_difference(bytes_a: bytes, bytes_b: bytes) -> str:
    """The first differing line of two texts (or byte offset of two binaries)."""
    try:
        lines_a, lines_b = bytes_a.decode().splitlines(), bytes_b.decode().splitlines()
    except UnicodeDecodeError:
        offset = next((i for i, (x, y) in enumerate(zip(bytes_a, bytes_b, strict=False)) if x != y),
                      min(len(bytes_a), len(bytes_b)))
        return f"binary files differ from byte {offset}"
    for number, (x, y) in enumerate(zip(lines_a, lines_b, strict=False), start=1):
        if x != y:
            return f"line {number}: {x[:200]!r} != {y[:200]!r}"
    return f"one has {len(lines_a)} lines, the other {len(lines_b)}"


TINY_BOOK_FILES = ("_config.yml", "Makefile", "pyproject.toml", "requirements.txt", "package.json", "references.bib",
                   "favicon.svg")
TINY_BOOK_FOLDERS = ("_ext", "tools")  # the extensions, and `make build`'s own tool
NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
myst:
  html_meta:
    description: A page of a tiny book that the build tests write with the project's configuration.
---

"""


def tiny_book(root: Path, target: Path, chapters: dict[str, str]) -> Path:
    """A book with the project's configuration, extensions, Makefile and tools, but only ``chapters``.

    ``chapters`` maps a name to the MyST notebook body (the jupytext header is
    added); they are listed in order after a one-line landing page.
    """
    target.mkdir(parents=True)
    for name in TINY_BOOK_FILES:
        shutil.copy2(root / name, target / name)
    for folder in TINY_BOOK_FOLDERS:
        shutil.copytree(root / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in LINKED:
        (target / name).symlink_to((root / name).resolve(), target_is_directory=True)
    (target / "book").mkdir()
    (target / "book" / "index.md").write_text(
        "# A tiny book\n\nA few pages that the build tests write, with the project's own configuration.\n\n"
        "```{tableofcontents}\n```\n")
    for name, body in chapters.items():
        (target / "book" / f"{name}.md").write_text(NOTEBOOK_HEADER + body)
    toc.write(target / "_toc.yml", "book/index", [f"book/{name}" for name in chapters])
    return target
