"""One build of a book at a time: every process of a build holds one lock, ``_build/.lock``.

``make build`` (:mod:`tools.build`), ``make pdf`` and ``make publish`` take
an exclusive ``flock`` on ``_build/.lock`` before they touch ``_build/``, and
hold it until they end. A second one waits for the
first, after saying in one line which process holds it (its PID, which the
holder writes into the file); Ctrl-C stops the wait. ``make live`` builds
with ``make build``, so it waits too.

The lock belongs to the open file, not to a PID: the kernel releases it when
the last process holding the file ends, however it ends (SIGKILL included),
so it never goes stale. The processes a build starts inherit the descriptor
(:data:`ENV` holds its number): Sphinx and its readers keep the lock as long
as they run, even if the process that took it was killed, and a build
started under the lock (``make build`` inside ``make pdf``) finds it already
its own and goes on.

Usage, from the book's root::

    python -m tools.buildlock COMMAND [ARGUMENT...]   # run COMMAND holding the lock (the Makefile)

    descriptor = buildlock.acquire(root, say)          # in Python; os.close(descriptor) releases it
"""

from __future__ import annotations

import contextlib
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


def holder(descriptor: int) -> str:
    """The PID written into the lock file by the process that holds it, as text ("unknown" if none)."""
    text = ""
    for attempt in range(2):  # the holder writes its PID right after taking the lock: maybe not yet
        with contextlib.suppress(OSError):
            text = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
        if text.isdigit() and _exists(int(text)):
            return text
        if attempt == 0:
            time.sleep(0.1)
    return text if text.isdigit() else "unknown"


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
                if not waited:
                    say(f"Another build of this book (PID {holder(descriptor)}) holds {LOCK}: waiting for it to "
                        "end (Ctrl-C stops waiting).")
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
