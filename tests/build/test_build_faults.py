"""``tools.build`` when the file system refuses a write: one line naming the folder, and the last good build kept.

Each fault is real (:mod:`denied`): an immutable folder (``chattr +i``), a
read-only one in a process that file modes bind (root with the
capabilities that override them dropped), or a full disk (``_build`` on a
tmpfs of a few megabytes). The build runs in a child process
in a temporary book whose ``_build/`` holds a last good build (published by
:func:`tools.staging.publish`, as a build leaves it); Sphinx is
replaced by a stand-in that rewrites the staged copy as Sphinx would (the
real staging, lock, publication and messages run: :mod:`tools.staging`). The slow tests make the
site of a real ``make build`` immutable, and its disk too small for the next.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from denied import free_bytes, immutable, modes_bind, resize, run_python, small_disk

from tools import ROOT, SITE, workcopy
from tools.faults import Stop, megabytes
from tools.staging import BUILD, BUILDS, MARK, STAGING, STATE, last_good, publish, size

MAKE_ERROR = re.compile(r"make(\[\d+\])?: \*\*\* ")

#: ``python -c``: build the book at argv[1] with a stand-in for Sphinx.
BUILD_WITH_STAND_IN = """
import sys
from pathlib import Path
from tools import build, staging as layout

def sphinx(relay, command, cwd):  # what Sphinx does to the staged copy of the last good build
    staging = Path(cwd) / "_build" / "staging"
    for name in layout.STATE:
        (staging / name).mkdir(exist_ok=True)
    (staging / "html" / "_static").mkdir(exist_ok=True)
    (staging / "html" / "index.html").write_text("new site")
    (staging / "html" / "_static" / "theme.css").write_text("new")
    (staging / "html" / "_static" / "added.js").write_text("new")
    return 0

build.Relay.run = sphinx
sys.exit(build.build(Path(sys.argv[1])))
"""
#: ``python -c``: build the book at argv[1] with a stand-in for Sphinx that writes pages until the disk is full.
BUILD_FILLING_THE_DISK = """
import sys
from pathlib import Path
from tools import build

def sphinx(relay, command, cwd):  # Sphinx writing pages until the disk is full, and failing as it then does
    pages = Path(cwd) / "_build" / "staging" / "html"
    pages.mkdir(parents=True, exist_ok=True)
    try:
        for number in range(10**4):
            (pages / f"page{number}.html").write_bytes(bytes(2**16))
    except OSError as error:
        relay.tail = f"The build failed: {type(error).__name__}: {error}".encode()
        return 1
    return 0

build.Relay.run = sphinx
sys.exit(build.build(Path(sys.argv[1])))
"""
#: The line a build stops with on a full disk: the file system, what is free there, and what a build needs.
FULL = re.compile(r"The build stopped: the disk is full: the file system at (?P<where>\S+), which holds _build, has "
                  r"(?P<free>[\d.]+ MiB) free, and a build needs (?P<need>(about|more than) [\d.]+ MiB) there "
                  r"\((?P<why>[^)]*)\); the partial build was removed\. Free some space, then build again\.")


@pytest.fixture
def book(tmp_path) -> Path:
    """A book folder whose ``_build/`` holds a last good build (and the lock file an earlier build left)."""
    built = tmp_path / BUILD
    write_old_build(built / STAGING)
    assert publish(built) is None
    (built / ".lock").write_text("")
    return tmp_path


def write_old_build(folder: Path) -> None:
    """The last good build's folders in ``folder``."""
    for name in STATE:
        (folder / name).mkdir(parents=True)
        (folder / name / "kept.txt").write_text("old")
    (folder / "html" / "_static").mkdir()
    (folder / "html" / "index.html").write_text("old site")
    (folder / "html" / "_static" / "theme.css").write_text("old")


def run_build(book: Path, prefix: list[str] = (), stand_in: str = BUILD_WITH_STAND_IN) -> subprocess.CompletedProcess:
    return run_python(stand_in, str(book), prefix=list(prefix), cwd=book)


def assert_kept(book: Path) -> None:
    """The last good build is published, and the next build starts from it."""
    built = book / BUILD
    assert (built / "html" / "index.html").read_text() == "old site"
    assert (built / "html" / "_static" / "theme.css").read_text() == "old"
    folder = last_good(built)
    assert folder is not None, "the last good build is lost: the next build starts from nothing"
    assert (folder / ".doctrees" / "kept.txt").read_text() == "old"


def stopped(done: subprocess.CompletedProcess) -> str:
    """The line the build stopped with (it must have stopped, with no traceback)."""
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("The build stopped: ")]
    assert len(lines) == 1, done.stderr
    assert "_build/html is unchanged: it still holds the last good build." in done.stderr, done.stderr
    return lines[0]


def test_an_immutable_site_stops_the_build_at_once_naming_it(book):
    """``_build/html`` is a link (chattr cannot change a link): the command names the folder it links to."""
    folder = shown((book / "_build" / "html").resolve(), book)
    with immutable((book / "_build" / "html").resolve()):
        done = run_build(book)
    assert stopped(done) == (f"The build stopped: could not write _build/html (operation not permitted: is it "
                             f"immutable? lsattr -d {folder}; chattr -i {folder}).")
    assert_kept(book)
    assert not (book / "_build" / "staging").exists(), "it built before finding the site it could not replace"


def test_an_immutable_build_folder_is_named(book):
    (book / "_build" / "staging").mkdir()  # a failed build's, which this build must remove
    with immutable(book / "_build"):
        done = run_build(book)
    assert stopped(done).startswith("The build stopped: could not write _build (operation not permitted: is it "
                                    "immutable? lsattr -d _build; chattr -i _build)"), done.stderr
    assert_kept(book)


def test_a_read_only_build_folder_is_named(book):
    prefix = modes_bind()
    (book / "_build" / "staging").mkdir()
    (book / "_build").chmod(0o555)
    try:
        done = run_build(book, prefix)
    finally:
        (book / "_build").chmod(0o755)
    assert stopped(done) == ("The build stopped: could not write _build (permission denied: make it writable, "
                             "chmod u+rwX _build).")
    assert_kept(book)


def test_a_read_only_site_folder_is_named_not_its_staged_copy(book):
    prefix = modes_bind()
    (book / "_build" / "html").chmod(0o555)
    try:
        done = run_build(book, prefix)
    finally:
        (book / "_build" / "html").chmod(0o755)
    assert stopped(done) == ("The build stopped: could not write _build/html (permission denied: make it "
                             "writable, chmod u+rwX _build/html).")
    assert_kept(book)


def test_read_only_folders_inside_the_site_do_not_stop_a_build(book):
    """The staged copy is made writable (Sphinx rewrites it), and the old build is removed all the same."""
    prefix = modes_bind()
    static = book / "_build" / "html" / "_static"
    (static / "theme.css").chmod(0o444)
    static.chmod(0o555)
    done = run_build(book, prefix)
    assert done.returncode == 0, done.stderr
    assert (book / "_build" / "html" / "index.html").read_text() == "new site"
    assert (book / "_build" / "html" / "_static" / "theme.css").read_text() == "new"
    assert (book / "_build" / "html" / "_static" / "added.js").read_text() == "new"
    assert not (book / "_build" / "staging").exists(), done.stderr
    assert len(list((book / "_build" / BUILDS).iterdir())) == 1, "the old build was not removed"


def test_a_failed_builds_folder_that_cannot_be_read_is_removed_all_the_same(book):
    prefix = modes_bind()
    locked = book / "_build" / "staging" / "html" / "locked"
    locked.mkdir(parents=True)
    (locked / "page.html").write_text("a failed build's")
    locked.chmod(0o000)
    try:
        done = run_build(book, prefix)
    finally:
        if locked.exists():
            locked.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert not (book / "_build" / "staging").exists()
    assert (book / "_build" / "html" / "index.html").read_text() == "new site"


def test_a_move_refused_while_publishing_leaves_the_last_good_build_published(book):
    """``staging`` refuses to move into ``builds/``: nothing changes, and the new build waits in ``staging``."""
    built = book / BUILD
    staging = built / STAGING
    for name in STATE:
        (staging / name).mkdir(parents=True)
    (staging / "html" / "index.html").write_text("new site")
    with immutable(staging), pytest.raises(Stop) as stop:
        publish(built)
    assert str(stop.value) == (f"could not move {built / STAGING} (operation not permitted: is it immutable? "
                               f"lsattr -d {built / STAGING}; chattr -i {built / STAGING})")
    assert_kept(book)
    assert (staging / "html" / "index.html").read_text() == "new site"
    assert sorted(p.name for p in staging.iterdir()) == sorted(STATE)
    assert len(list((built / BUILDS).iterdir())) == 1


def test_a_site_folder_that_refuses_to_be_replaced_by_the_link_is_undone(tmp_path):
    """``_build/`` laid out before ``builds/``, its ``html`` immutable: the new build goes back to ``staging``."""
    built = tmp_path / BUILD
    write_old_build(built)
    (built / MARK).write_text("the last good build\n")
    write_old_build(built / STAGING)
    (built / STAGING / "html" / "index.html").write_text("new site")
    with immutable(built / "html"), pytest.raises(Stop) as stop:
        publish(built)
    assert str(stop.value).startswith(f"could not replace {built / 'html'} (operation not permitted"), stop.value
    assert_kept(tmp_path)
    assert (built / STAGING / "html" / "index.html").read_text() == "new site"
    assert list((built / BUILDS).iterdir()) == []


@pytest.fixture
def small_book(tmp_path) -> Path:
    """A book whose ``_build/`` is a 2 MiB file system, holding a last good build of 1.3 MiB."""
    with small_disk(tmp_path / BUILD, 2):
        write_old_build(tmp_path / BUILD / STAGING)
        (tmp_path / BUILD / STAGING / "html" / "figure.png").write_bytes(bytes(1300 * 1024))
        assert publish(tmp_path / BUILD) is None
        yield tmp_path


def full_disk_line(done: subprocess.CompletedProcess) -> re.Match:
    """The line the build stopped with, which says the disk is full, and what it said."""
    line = stopped(done)
    said = FULL.fullmatch(line)
    assert said is not None, done.stderr
    assert done.stderr.rstrip().splitlines()[-2:] == [line, "_build/html is unchanged: it still holds the last good "
                                                            "build."], done.stderr
    return said


def test_a_disk_too_full_to_stage_the_last_good_build_is_freed_and_said_in_one_line(small_book):
    """The copy of the last good build fills the disk: the partial copy is removed, and the need is its size."""
    built = small_book / BUILD
    last = sum(size(last_good(built) / name) for name in STATE)
    done = run_build(small_book)
    said = full_disk_line(done)
    assert said["where"] == str(built) and said["free"] == megabytes(free_bytes(built))
    assert said["need"] == f"about {megabytes(last)}" and said["why"] == "the size of the last good build"
    assert not (built / STAGING).exists(), "the partial build keeps the disk full"
    assert_kept(small_book)
    assert free_bytes(built) > 2**19


def test_a_disk_that_fills_while_sphinx_writes_is_freed_and_said_in_one_line(small_book):
    built = small_book / BUILD
    (last_good(built) / "html" / "figure.png").unlink()  # a small last good build: Sphinx writes more
    done = run_build(small_book, stand_in=BUILD_FILLING_THE_DISK)
    said = full_disk_line(done)
    assert said["where"] == str(built) and said["free"] == megabytes(free_bytes(built))
    assert said["need"].startswith("more than ") and float(said["need"].split()[2]) > 1.5, said["need"]
    assert said["why"] == "what it had written when the disk filled"
    assert not (built / STAGING).exists(), "the partial build keeps the disk full"
    assert_kept(small_book)
    assert free_bytes(built) > 2**20


def shown(path: Path, book: Path) -> str:
    return path.relative_to(book).as_posix()


@pytest.mark.slow
def test_make_build_with_an_immutable_site_says_so_in_one_line(tmp_path):
    cell = "```{code-cell} ipython3\nprint('answer:', 6 * 7)\n```\n"
    book = workcopy.tiny_book(ROOT, tmp_path / "book", {"a": f"# A\n\n{cell}"})
    assert workcopy.build(book).ok
    (book / "book" / "a.md").write_text((book / "book" / "a.md").read_text().replace("6 * 7", "6 * 8"))
    before = (book / SITE / "book" / "a.html").read_bytes()
    folder = (book / SITE).resolve().relative_to(book)  # the last good build's site, which _build/html links to
    with immutable((book / SITE).resolve()):
        result = workcopy.build(book)
    assert not result.ok
    # make's own last word ("make: *** ...", or "make[1]: *** ..." when make test runs the tests
    # under make, which passes its level on to the build through MAKELEVEL) is not the build's.
    end = [line for line in result.log.strip().splitlines() if not MAKE_ERROR.match(line)][-2:]
    assert end == ["The build stopped: could not write _build/html (operation not permitted: is it immutable? "
                   f"lsattr -d {folder}; chattr -i {folder}).",
                        "_build/html is unchanged: it still holds the last good build."], result.log[-3000:]
    assert "Traceback" not in result.log and (book / SITE / "book" / "a.html").read_bytes() == before
    assert workcopy.build(book).ok and "answer: 48" in (book / SITE / "book" / "a.html").read_text()


@pytest.mark.slow
def test_make_build_on_a_disk_too_full_for_the_next_build_frees_it_and_says_so(tmp_path):
    cell = "```{code-cell} ipython3\nprint('answer:', 6 * 7)\n```\n"
    book = workcopy.tiny_book(ROOT, tmp_path / "book", {"a": f"# A\n\n{cell}"})
    with small_disk(book / BUILD, 256) as disk:
        assert workcopy.build(book).ok
        before = (book / SITE / "book" / "a.html").read_bytes()
        resize(disk, size(disk) + 2**20)  # a megabyte free: less than a copy of the last good build
        (book / "book" / "a.md").write_text((book / "book" / "a.md").read_text().replace("6 * 7", "6 * 8"))
        free = free_bytes(disk)
        result = workcopy.build(book)
        assert not result.ok
        end = [line for line in result.log.strip().splitlines() if not MAKE_ERROR.match(line)][-2:]
        assert FULL.fullmatch(end[0]) and end[1] == "_build/html is unchanged: it still holds the last good build.", \
            result.log[-3000:]
        assert not (disk / STAGING).exists() and free_bytes(disk) >= free
        assert "Traceback" not in result.log and (book / SITE / "book" / "a.html").read_bytes() == before
        resize(disk, 256 * 2**20)
        assert workcopy.build(book).ok and "answer: 48" in (book / SITE / "book" / "a.html").read_text()
