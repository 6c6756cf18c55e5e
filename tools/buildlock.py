"""One build of a book at a time: every process of a build holds one lock, ``_build/.lock``.

``make build`` (:mod:`tools.build`), ``make pdf`` and ``make publish`` take
an exclusive ``flock`` on ``_build/.lock`` before they touch ``_build/``, and
hold it until they end. A second one waits for the
first, after saying in one line which process holds it (its PID: the
process that took it, which writes its PID into the file, while it runs;
else one that still holds it, found in ``/proc``); Ctrl-C stops the wait.
``make live`` builds with ``make build``, so it waits too.

The lock belongs to the open file, not to a PID: the kernel releases it when
the last process holding the file ends, however it ends (SIGKILL included),
so it never goes stale. The processes a build starts inherit the descriptor
(:data:`ENV` holds its number): Sphinx and its readers keep the lock as long
as they run, even if the process that took it was killed, and a build
started under the lock (``make build`` inside ``make pdf``) finds it already
its own and goes on.

A Sphinx process (``python -m tools.build --sphinx``) that holds the lock
while the build that started it does not (that build was killed, with its
process group, before the Sphinx process noticed and ended) is an orphan: its
work can never be published, and it still writes into ``_build/staging``. A
build that finds one says so and stops it (SIGTERM to its process group,
then SIGKILL), then goes on.

Usage, from the book's root::

    python -m tools.buildlock COMMAND [ARGUMENT...]   # run COMMAND holding the lock (the Makefile)

    descriptor = buildlock.acquire(root, say)          # in Python; os.close(descriptor) releases it
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tools import ROOT, lifetime
from tools.faults import Stop, fault

LOCK = Path("_build") / ".lock"
#: The number of an inherited descriptor that holds the lock.
ENV = "BOOK_BUILD_LOCK"
#: The end of the command line of a build's Sphinx process (:mod:`tools.build`).
SPHINX = ["-m", "tools.build", "--sphinx"]
#: Seconds an orphaned Sphinx process gets to end after SIGTERM, before SIGKILL.
GRACE = 3.0


@dataclasses.dataclass(frozen=True)
class Holder:
    """A process that holds the lock: its PID, its parent's, and its command line."""

    pid: int
    parent: int
    command: tuple[str, ...]


def _same_file(descriptor: int, path: Path) -> bool:
    """Whether ``descriptor`` is open on the file now at ``path`` (not on one removed since)."""
    try:
        mine, there = os.fstat(descriptor), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def inherited(path: Path) -> int | None:
    """The descriptor named by :data:`ENV` if it is open on the lock at ``path`` and holds it, else None."""
    value = os.environ.get(ENV, "")
    if not value.isdigit() or not _same_file(int(value), path):
        return None
    try:
        fcntl.flock(int(value), fcntl.LOCK_EX | fcntl.LOCK_NB)  # the holder's own open file: granted at once
    except OSError:
        return None
    return int(value)


def _process(pid: int) -> Holder | None:
    """The process ``pid`` from ``/proc``, or None if it has ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except (OSError, IndexError):
        return None
    return None if stat[0] == "Z" else Holder(pid, int(stat[1]), tuple(command))


def _holds(pid: str, descriptor: str, lock: os.stat_result) -> bool:
    """Whether the descriptor of ``pid`` is open on the file ``lock`` and holds its flock (its fdinfo says so)."""
    try:
        if not os.readlink(f"/proc/{pid}/fd/{descriptor}").endswith(LOCK.name):
            return False
        there = os.stat(f"/proc/{pid}/fd/{descriptor}")
        info = Path(f"/proc/{pid}/fdinfo/{descriptor}").read_text()
    except OSError:
        return False
    same = (there.st_dev, there.st_ino) == (lock.st_dev, lock.st_ino)
    return same and any(line.startswith("lock:") and " FLOCK " in line for line in info.splitlines())


def holders(descriptor: int) -> list[Holder]:
    """The processes holding the lock on ``descriptor``'s file (Linux's ``/proc``; empty elsewhere).

    Every process of a build holds it (its open file is inherited); a process
    waiting for it does not. ``/proc/locks`` names only the process that took
    it, which may have ended since.
    """
    lock, found = os.fstat(descriptor), []
    with contextlib.suppress(OSError):
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                if any(_holds(pid, fd, lock) for fd in os.listdir(f"/proc/{pid}/fd")):
                    found.append(_process(int(pid)))
    return [process for process in found if process is not None]


def orphans(found: list[Holder]) -> list[Holder]:
    """The Sphinx processes among ``found`` whose build (their parent, which holds the lock too) has ended."""
    pids = {process.pid for process in found}
    return [process for process in found if list(process.command[-3:]) == SPHINX and process.parent not in pids]


def holder(descriptor: int) -> str:
    """The PID of the process that holds the lock, as text ("unknown" if it cannot be told).

    The first of the processes holding it whose parent does not (the one that
    took it, or the first of its children that outlived it); where ``/proc``
    tells nothing, the PID written into the file by the process that took it.
    """
    found = holders(descriptor)
    pids = {process.pid for process in found}
    first = next((process.pid for process in found if process.parent not in pids), None)
    if first is not None:
        return str(first)
    text = ""
    for attempt in range(2):  # the holder writes its PID right after taking the lock: maybe not yet
        with contextlib.suppress(OSError):
            text = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
        if text.isdigit() and _exists(int(text)):
            return text
        if attempt == 0:
            time.sleep(0.1)
    return text if text.isdigit() else "unknown"


def stop_orphans(descriptor: int, found: list[Holder]) -> bool:
    """Stop the orphaned Sphinx processes ``found`` (SIGTERM to each one's group, then SIGKILL); True once the
    lock is free (it is then held on ``descriptor``)."""
    for number in (signal.SIGTERM, signal.SIGKILL):
        for process in found:
            with contextlib.suppress(OSError):  # its own session, with Sphinx's workers; else the process alone
                if os.getpgid(process.pid) == process.pid:
                    os.killpg(process.pid, number)
                else:
                    os.kill(process.pid, number)
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline:
            with contextlib.suppress(BlockingIOError):
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            time.sleep(0.05)
    return False


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


def _open(path: Path) -> int:
    """The lock file, opened (and created with its folder if missing); a :class:`Stop` if it cannot be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        if path.is_file():  # a read-only lock file still locks (flock needs no write access)
            with contextlib.suppress(OSError):
                return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        raise fault("create the build's lock file in", error, path.parent, path.parent.parent) from None


def _stopped_orphans(descriptor: int, say: Callable[[str], None]) -> bool:
    """Stop the orphaned Sphinx processes that hold the lock, saying so; True once it is held on ``descriptor``."""
    left = orphans(holders(descriptor))
    if not left:
        return False
    say(f"A build of this book has ended, but its Sphinx process (PID "
        f"{', '.join(str(process.pid) for process in left)}) still holds {LOCK}: stopping it.")
    if stop_orphans(descriptor, left):
        say("It has stopped: this build goes on.")
        return True
    return False


def acquire(root: Path, say: Callable[[str], None]) -> int:
    """Hold the lock of the book at ``root`` (waiting for another build to end); the descriptor holding it.

    A signal whose handler raises (Ctrl-C's ``KeyboardInterrupt``) ends the
    wait. ``say`` gets the one line that names the other build, once, and one
    more when it has ended.
    """
    path = root / LOCK
    descriptor = inherited(path)
    if descriptor is not None:
        return descriptor
    waited = False
    while True:
        descriptor = _open(path)
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waited or not _stopped_orphans(descriptor, say):
                    if not waited:
                        say(f"Another build of this book (PID {holder(descriptor)}) holds {LOCK}: waiting for it "
                            "to end (Ctrl-C stops waiting).")
                    waited = True
                    fcntl.flock(descriptor, fcntl.LOCK_EX)
        except BaseException:
            os.close(descriptor)
            raise
        if _same_file(descriptor, path):
            break
        os.close(descriptor)  # the file was removed while we waited (rm -rf _build): lock the one there now
    with contextlib.suppress(OSError):  # for the message of a build that waits for this one
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    if waited:
        say("The other build has ended: this one goes on.")
    return descriptor


def main(argv: list[str]) -> int:
    """Run ``argv`` holding the lock of the book at :data:`tools.ROOT` (it replaces this process)."""
    if not argv:
        print("usage: python -m tools.buildlock COMMAND [ARGUMENT...]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with lifetime.watch_parent(signal.SIGTERM):  # killing make ends the wait too
            descriptor = acquire(ROOT, lambda line: print(line, file=sys.stderr, flush=True))
    except KeyboardInterrupt:
        print("Stopped waiting for the other build: nothing was done.", file=sys.stderr)
        return 130
    except Stop as stop:
        print(f"The build stopped: {stop}", file=sys.stderr)
        return 1
    os.set_inheritable(descriptor, True)
    os.environ[ENV] = str(descriptor)
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        print(f"could not run {argv[0]}: {error.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
