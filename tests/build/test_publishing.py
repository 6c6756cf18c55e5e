"""Publishing a build is one step: killed at any moment, ``_build/html`` is a whole site, the old or the new.

:func:`tools.staging.publish` runs in a child process that kills itself
(SIGKILL: nothing of it runs after) just before its k-th change to the file
system (a rename, link, unlink, folder made or removed, or the exchange of a
folder for a link), for k = 1, 2, ... until it finishes. After each kill
``_build/html`` must hold exactly the old site or exactly the new one, the
last good build it stands for must be one build (not the site of one and the
environment of the other), and the next build must start from it and publish
cleanly, leaving nothing behind. From ``_build/`` as a build leaves it, and
from a ``_build/`` laid out before ``builds/`` (four folders and a mark).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tools import ROOT
from tools.staging import BUILD, BUILDS, MARK, STAGING, STATE, last_good, prepare_staging, publish

#: ``python -c``: publish the book at argv[1], killed just before the argv[2]-th change to the file system.
PUBLISH_KILLED = """
import os, signal, sys
from pathlib import Path
from tools import staging

last, changes = int(sys.argv[2]), 0

def counted(change):
    def change_or_die(*args, **kwargs):
        global changes
        changes += 1
        if changes == last:
            os.kill(os.getpid(), signal.SIGKILL)
        return change(*args, **kwargs)
    return change_or_die

for name in ("rename", "replace", "symlink", "link", "unlink", "remove", "rmdir", "mkdir"):
    setattr(os, name, counted(getattr(os, name)))
staging._exchange = counted(staging._exchange)
print(staging.publish(Path(sys.argv[1]) / "_build"))
"""
#: Each build's site: its pages, one of them only in the new site.
PAGES = {"old": ("index.html", "_static/theme.css", "book/a.html"),
         "new": ("index.html", "_static/theme.css", "book/a.html", "book/b.html")}


def write_build(folder: Path, which: str) -> None:
    """A whole build in ``folder``: its site, and the other folders a build leaves, every file saying ``which``."""
    for page in PAGES[which]:
        (folder / "html" / page).parent.mkdir(parents=True, exist_ok=True)
        (folder / "html" / page).write_text(f"{which} {page}")
    for name in STATE[1:]:
        (folder / name).mkdir(parents=True)
        (folder / name / "state.txt").write_text(which)


def files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}


def site(which: str) -> dict[str, str]:
    return {page: f"{which} {page}" for page in PAGES[which]}


def book_with_a_build(tmp_path: Path, layout: str) -> Path:
    """A book whose ``_build/`` holds the old build (published, or in the layout before ``builds/``) and the new
    one in ``staging/``."""
    build = tmp_path / BUILD
    if layout == "published":
        write_build(build / STAGING, "old")
        assert publish(build) is None
    else:
        write_build(build, "old")
        (build / MARK).write_text("the last good build\n")
    write_build(build / STAGING, "new")
    return tmp_path


def kill_at(book: Path, change: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PUBLISH_KILLED, str(book), str(change)], cwd=book,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, capture_output=True, text=True, timeout=60)


def assert_one_whole_build(build: Path) -> str:
    """``_build/html`` is a whole site, and the build it stands for is one build; which one."""
    published = files(build / "html")
    which = next((w for w in PAGES if published == site(w)), None)
    assert which is not None, f"_build/html is not a whole site: {sorted(published.items())}"
    folder = last_good(build)
    assert folder is not None, "the published site is not the last good build: the next starts from nothing"
    assert files(folder / "html") == published
    assert {(folder / name / "state.txt").read_text() for name in STATE[1:]} == {which}
    assert {(build / name / "state.txt").read_text() for name in STATE[1:]} <= {which, "old"}
    return which


@pytest.mark.parametrize("layout", ["published", "before builds/"])
def test_a_publication_killed_at_any_step_leaves_a_whole_site(tmp_path, layout):
    seen = []
    for change in range(1, 200):
        book = book_with_a_build(tmp_path / str(change), layout)
        done = kill_at(book, change)
        build = book / BUILD
        if done.returncode == 0:
            assert done.stdout.strip() == "None", done.stdout
            assert assert_one_whole_build(build) == "new"
            assert sorted(p.name for p in build.iterdir()) == sorted([".doctrees", "attention_explorer", BUILDS,
                                                                      "html", "jupyter_execute"])
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        seen.append(assert_one_whole_build(build))
        # The next build starts from the published one and publishes cleanly, leaving no folder behind.
        staged = prepare_staging(build)
        assert files(staged / "html") == site(seen[-1])
        (staged / "html" / "index.html").write_text("next index.html")
        assert publish(build) is None
        assert (build / "html" / "index.html").read_text() == "next index.html"
        assert len(list((build / BUILDS).iterdir())) == 1 and not (build / STAGING).exists()
        assert not [p.name for p in build.iterdir() if p.name.endswith(".new")]
    else:
        pytest.fail("the publication never finished")
    assert seen[0] == "old" and seen[-1] == "new", seen  # killed before it switched, and after
