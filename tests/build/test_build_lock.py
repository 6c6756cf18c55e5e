"""One build of a book at a time (``tools.buildlock``), and a build whose parent dies stops.

The fast tests take the real lock (``flock`` on ``_build/.lock``) in
temporary books, from this process and from child processes: a second taker
waits and names the holder's PID, the lock is free once its holder is killed
(SIGKILL: nothing goes stale), a build started under the lock (through
``make``) finds it its own, and a lock file removed while a build waits
(``make clean``, which takes no lock) is taken anew. A build killed while
its child holds the lock: the child is named, not the build, and a child
that is the build's Sphinx process (a stand-in) is stopped. The slow tests run
real ``make build``\\ s in tiny books (:func:`tools.workcopy.tiny_book`): two
started at once publish the site a clean build writes, and killing only
``make`` stops the build it started.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tools import ROOT, SITE, buildlock, workcopy

CHAPTER = "# Chapter {name}\n\n```{{code-cell}} ipython3\nvalue = {value}\nprint(value * 2)\n```\n"
SLOW = "# Slow\n\n```{code-cell} ipython3\nimport time\ntime.sleep(600)\n```\n"


def holding_command(book: Path, *command: str) -> list[str]:
    """``python -m tools.buildlock COMMAND``, for ``book`` (the lock of a book that holds no ``tools``)."""
    script = f"import sys; from pathlib import Path; import tools; tools.ROOT = Path({str(book)!r}); " \
             "from tools.buildlock import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", script, *command]


def holding(book: Path, *command: str) -> subprocess.Popen:
    """``python -m tools.buildlock COMMAND`` for ``book``, once it holds the lock (its PID is in the file)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(buildlock.ENV, None)
    process = subprocess.Popen(holding_command(book, *command), env=env, stderr=subprocess.PIPE, text=True)
    lock = book / buildlock.LOCK
    deadline = time.monotonic() + 30
    while not (lock.is_file() and lock.read_text().strip() == str(process.pid)):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    return process


def taken(path: Path) -> bool:
    """Whether another open file holds the lock at ``path``."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)


class Waiter(threading.Thread):
    """``buildlock.acquire`` in a thread: what it said, and the descriptor once it holds the lock."""

    def __init__(self, book: Path):
        super().__init__(daemon=True)
        self.book, self.said, self.descriptor = book, [], None
        self.start()

    def run(self):
        self.descriptor = buildlock.acquire(self.book, self.said.append)


@pytest.fixture
def book(tmp_path, monkeypatch):
    monkeypatch.delenv(buildlock.ENV, raising=False)
    return tmp_path


def test_a_second_build_waits_for_the_first_and_names_its_pid(book):
    first = holding(book, "sleep", "60")
    try:
        waiter = Waiter(book)
        waiter.join(1.0)
        assert waiter.is_alive() and waiter.descriptor is None, "the second build went on while the first ran"
        assert waiter.said == [f"Another build of this book (PID {first.pid}) holds _build/.lock: waiting for it "
                               "to end (Ctrl-C stops waiting)."]
    finally:
        first.kill()  # SIGKILL: no handler runs, and the lock goes with the process
        first.wait()
        first.stderr.close()
    waiter.join(10)
    assert waiter.descriptor is not None, "the lock of a killed build was not released"
    assert waiter.said[-1] == "The other build has ended: this one goes on."
    assert (book / buildlock.LOCK).read_text().strip() == str(os.getpid())
    os.close(waiter.descriptor)
    assert not taken(book / buildlock.LOCK)


def test_a_build_started_under_the_lock_finds_it_its_own(book, monkeypatch):
    descriptor = buildlock.acquire(book, pytest.fail)
    try:
        monkeypatch.setenv(buildlock.ENV, str(descriptor))  # what a command run under the lock inherits
        assert buildlock.acquire(book, pytest.fail) == descriptor
        monkeypatch.setenv(buildlock.ENV, "0")  # a number that is not the lock's open file: the lock is taken
        waiter = Waiter(book)
        waiter.join(0.5)
        assert waiter.is_alive() and waiter.said, "a stray descriptor number let a second build in"
    finally:
        os.close(descriptor)
    waiter.join(10)
    os.close(waiter.descriptor)


def test_a_build_that_make_starts_under_the_lock_goes_on_at_once(book):
    """``make pdf`` holds the lock and runs ``make build`` twice: the descriptor passes through make and the shell."""
    inner = shlex.join(holding_command(book, "echo", "the inner build ran"))
    (book / "Makefile").write_text(f"steps:\n\t{inner}\n\t{inner}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outer = subprocess.run(holding_command(book, "make", "--no-print-directory", "-s", "-f", "Makefile", "steps"),
                           cwd=book, env=env, capture_output=True, text=True, timeout=60)  # a wait would never end
    assert outer.returncode == 0 and outer.stdout == "the inner build ran\n" * 2, outer.stderr
    assert outer.stderr == ""


def test_the_children_of_a_build_hold_its_lock_after_it_is_killed(book):
    """tools.build passes the descriptor to Sphinx: killing the parent leaves the lock with the child, which writes."""
    pidfile = book / "child.pid"
    parent = holding(book, sys.executable, "-c", "import os, subprocess, time; "
                     f"subprocess.Popen(['sh', '-c', 'echo $$ > {pidfile}; exec sleep 60'], "
                     f"pass_fds=[int(os.environ[{buildlock.ENV!r}])]); time.sleep(60)")
    lock, child = book / buildlock.LOCK, None
    try:
        deadline = time.monotonic() + 30
        while not pidfile.is_file() or not pidfile.read_text().strip():
            assert time.monotonic() < deadline, "the child did not start"
            time.sleep(0.05)
        child = int(pidfile.read_text())
        parent.kill()
        parent.wait()
        assert taken(lock), "the lock went with the parent while its child still ran"
    finally:
        parent.kill()
        parent.wait()
        parent.stderr.close()
        if child is not None:
            os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while taken(lock):
        assert time.monotonic() < deadline, "the lock stayed taken after every holder was killed"
        time.sleep(0.05)


def killed_parent_of(book: Path, *command: str) -> int:
    """Run ``command`` in ``book`` as a build's child holding its lock, then kill the build (SIGKILL); its PID."""
    pidfile = book / "child.pid"
    parent = holding(book, sys.executable, "-c", "import os, subprocess, sys, time; "
                     f"child = subprocess.Popen({list(command)!r}, cwd={str(book)!r}, start_new_session=True, "
                     f"pass_fds=[int(os.environ[{buildlock.ENV!r}])]); "
                     f"open({str(pidfile)!r}, 'w').write(str(child.pid)); time.sleep(60)")
    try:
        deadline = time.monotonic() + 30
        while not pidfile.is_file() or not pidfile.read_text().strip():
            assert parent.poll() is None and time.monotonic() < deadline, "the child did not start"
            time.sleep(0.05)
    finally:
        parent.kill()
        parent.wait()
        parent.stderr.close()
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while _parent(child) == parent.pid:  # until the kernel has given the orphan another parent
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return child


#: Stand-ins for a build's Sphinx process (``python -m tools.build --sphinx``, run in the book's folder).
STAND_INS = {"ends": "import time\ntime.sleep(120)\n",
             "ignores": "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(120)\n"}


@pytest.mark.parametrize("sigterm", ["ends", "ignores"], ids=["ends on SIGTERM", "ignores SIGTERM"])
def test_the_orphaned_sphinx_process_of_a_killed_build_is_named_and_stopped(book, sigterm):
    """make's process group killed: the build's Sphinx child (its own session) holds the lock, its build gone."""
    (book / "tools").mkdir()
    (book / "tools" / "__init__.py").write_text("")
    (book / "tools" / "build.py").write_text(STAND_INS[sigterm])
    orphan = killed_parent_of(book, sys.executable, "-m", "tools.build", "--sphinx")
    try:
        assert taken(book / buildlock.LOCK)
        waiter = Waiter(book)
        waiter.join(buildlock.GRACE * 2 + 20)
        assert waiter.descriptor is not None, f"the orphan was not stopped: {waiter.said}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)
    assert waiter.said == [f"A build of this book has ended, but its Sphinx process (PID {orphan}) still holds "
                           "_build/.lock: stopping it.", "It has stopped: this build goes on."]
    assert not _alive(orphan)
    os.close(waiter.descriptor)


def test_the_live_child_holding_a_killed_builds_lock_is_named_and_waited_for(book):
    """Not a Sphinx process: it is named (not the killed build, whose PID the file holds) and left to end."""
    child = killed_parent_of(book, "sleep", "60")
    try:
        waiter = Waiter(book)
        waiter.join(2.0)
        assert waiter.is_alive() and waiter.descriptor is None, "the second build went on while the child ran"
        assert waiter.said == [f"Another build of this book (PID {child}) holds _build/.lock: waiting for it to "
                               "end (Ctrl-C stops waiting)."]
        assert _alive(child), "a process that is not a build's Sphinx process was stopped"
    finally:
        os.kill(child, signal.SIGKILL)
    waiter.join(10)
    assert waiter.descriptor is not None
    os.close(waiter.descriptor)


def _cmdline(pid: int) -> list[str]:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    return []


def _parent(pid: int) -> int:
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return -1


def test_a_lock_file_removed_while_a_build_waits_is_taken_anew(book):
    first = holding(book, "sleep", "60")
    try:
        waiter = Waiter(book)
        waiter.join(0.5)
        (book / buildlock.LOCK).unlink()  # make clean removes _build
        replacement = buildlock.acquire(book, pytest.fail)  # a third build creates the file again and holds it
    finally:
        first.kill()
        first.wait()
        first.stderr.close()
    try:
        waiter.join(1.0)
        assert waiter.is_alive(), "the waiter took the removed file's lock while another build held the new one"
    finally:
        os.close(replacement)
    waiter.join(10)
    assert waiter.descriptor is not None
    os.close(waiter.descriptor)


def test_ctrl_c_stops_the_wait(book):
    first = holding(book, "sleep", "60")
    try:
        second = subprocess.Popen([*first.args[:3], "true"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                                  stderr=subprocess.PIPE, text=True)
        said = second.stderr.readline()  # once it waits
        assert said.startswith(f"Another build of this book (PID {first.pid})"), said
        second.send_signal(signal.SIGINT)
        _, err = second.communicate(timeout=30)
        assert second.returncode == 130
        assert err.splitlines()[-1] == "Stopped waiting for the other build: nothing was done.", err
    finally:
        first.kill()
        first.wait()
        first.stderr.close()


# ---- real builds ----

def run_make(book: Path, log: list[str]) -> subprocess.Popen:
    """``make build`` in ``book`` (its own session), its output lines appended to ``log`` by a thread."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": workcopy.EPOCH, "PYTHONPATH": str(book / "src"),
           "PYTHONUNBUFFERED": "1"}
    env.pop("MAKEFLAGS", None)
    env.pop(buildlock.ENV, None)
    command = ["make", "--no-print-directory", *(f"--old-file={s}" for s in workcopy.STAMPS), "build"]
    make = subprocess.Popen(command, cwd=book, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)

    def read():
        for line in make.stdout:
            log.append(line.rstrip("\n"))
        make.stdout.close()

    make.reader = threading.Thread(target=read, daemon=True)
    make.reader.start()
    return make


def builds_in(book: Path) -> set[int]:
    """The PIDs of the ``python -m tools.build`` parents running in ``book`` now."""
    found = set()
    for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
        with contextlib.suppress(OSError):
            if _cmdline(pid)[-2:] == ["-m", "tools.build"] and os.readlink(f"/proc/{pid}/cwd") == str(book):
                found.add(pid)
    return found


@pytest.mark.slow
def test_two_builds_at_once_publish_the_clean_builds_site(tmp_path):
    reference = workcopy.tiny_book(ROOT, tmp_path / "reference", {"a": CHAPTER.format(name="A", value=2),
                                                                  "b": CHAPTER.format(name="B", value=3)})
    assert workcopy.build(reference).ok
    work = workcopy.tiny_book(ROOT, tmp_path / "work", {"a": CHAPTER.format(name="A", value=1),
                                                        "b": CHAPTER.format(name="B", value=1)})
    assert workcopy.build(work).ok  # a last good build, which both builds start from
    for name, value in (("a", 2), ("b", 3)):  # a code edit in each chapter: both are executed again
        (work / "book" / f"{name}.md").write_text(workcopy.NOTEBOOK_HEADER + CHAPTER.format(name=name.upper(),
                                                                                             value=value))
    logs, seen = ([], []), set()
    makes = [run_make(work, log) for log in logs]
    try:
        while any(make.poll() is None for make in makes):
            seen |= builds_in(work)
            time.sleep(0.1)
    finally:
        for make in makes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(make.pid, signal.SIGKILL)
            make.wait()
            make.reader.join()
    texts = ["\n".join(log) for log in logs]
    assert [make.returncode for make in makes] == [0, 0], texts[0][-3000:] + "\n----\n" + texts[1][-3000:]
    waited = [line for text in texts for line in text.splitlines() if line.startswith("Another build of this book")]
    assert len(waited) == 1, texts
    named = int(waited[0].split("(PID ")[1].split(")")[0])
    assert named in seen and len(seen) == 2, (named, seen)
    assert workcopy.differences(reference / SITE, work / SITE) == []


@pytest.mark.slow
def test_killing_only_make_stops_the_build_it_started(tmp_path):
    book = workcopy.tiny_book(ROOT, tmp_path / "book", {"slow": SLOW})
    log = []
    make = run_make(book, log)
    try:
        deadline = time.monotonic() + 300
        while not any("Executing notebook" in line for line in log):
            assert make.poll() is None and time.monotonic() < deadline, "\n".join(log)[-3000:]
            time.sleep(0.1)
        (parent,) = builds_in(book)
        make.kill()  # SIGKILL to make alone: python -m tools.build is orphaned
        make.wait()
        deadline = time.monotonic() + 60
        while _alive(parent) or taken(book / buildlock.LOCK):
            assert time.monotonic() < deadline, f"tools.build (PID {parent}) or its lock outlived make"
            time.sleep(0.2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)
        make.reader.join(30)
    text = "\n".join(log)
    assert f"The build was interrupted (its parent process, PID {make.pid}, ended)" in text, text[-3000:]
    assert not (book / SITE).exists()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, which only waits for its parent to reap it, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
