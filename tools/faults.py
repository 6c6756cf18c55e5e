"""File-system faults of a build, said in one line: what could not be done, to which path, and the fix.

``make build`` writes only under ``_build/``; when the file system refuses
(a folder made read-only or immutable, a full disk), the build stops with a
:class:`Stop` whose message is one line naming the path that refused, not
the file deep inside a copy where the refusal happened to surface::

    could not move _build/html (operation not permitted: is it immutable? lsattr -d _build/html; chattr -i _build/html)

:func:`culprit` finds that path among the candidates (the file, its folder,
the folder it was to go to); :func:`fault` makes the message.

A full disk (or quota) is told apart (:attr:`Stop.full`, :func:`said_full`
for a child's output): the build then removes its partial build, which would
keep the disk full, and says in one line which file system is full, what
is free there and how much a build needs (:func:`disk_full`)::

    the disk is full: the file system at /srv, which holds _build, has 0.2 MiB free, and a build needs
    about 15.1 MiB there (the size of the last good build); the partial build was removed. Free some space,
    then build again

(one line, here broken into three).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

#: The errors of a full disk or quota, and what a process prints for them (Python's OSError, sqlite).
FULL = (errno.ENOSPC, errno.EDQUOT)
FULL_SAID = ("No space left on device", "Disk quota exceeded", "database or disk is full")


class Stop(Exception):
    """A build that cannot go on; its message is the one line that says why and what to do.

    ``full`` is true when the write was refused because the disk (or quota) is full.
    """

    full = False


def said_full(text: str) -> bool:
    """Whether ``text`` (a failed process's output) says that the disk was full."""
    return any(words in text for words in FULL_SAID)


def culprit(*candidates: Path) -> Path:
    """The first of ``candidates`` that exists and this process may not write, else the first that exists."""
    existing = [Path(c) for c in candidates if os.path.lexists(c)] or [Path(candidates[0])]
    return next((c for c in existing if not os.access(c, os.W_OK, follow_symlinks=False)), existing[0])


def shown(path: Path) -> str:
    """``path`` relative to the working directory (the book's root) when it is inside it."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def hint(error: OSError, path: Path) -> str:
    """What the error means for ``path``, and the command that fixes it where there is one."""
    code, shown_path = error.errno, shown(path)
    if code == errno.EACCES:
        return f"permission denied: make it writable, chmod u+rwX {shown_path}"
    if code == errno.EPERM:  # chattr changes no link: name the folder a link (_build/html) stands for
        folder = shown(path.resolve()) if path.is_symlink() else shown_path
        return f"operation not permitted: is it immutable? lsattr -d {folder}; chattr -i {folder}"
    if code == errno.EROFS:
        return "the file system is mounted read-only"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "no space left: free some on that disk"
    return (error.strerror or type(error).__name__).lower()


def fault(action: str, error: OSError, *candidates: Path) -> Stop:
    """A :class:`Stop`: could not ``action`` the culprit among ``candidates`` (the first is the one acted on)."""
    path = culprit(*candidates) if candidates else Path(error.filename or "?")
    stop = Stop(f"could not {action} {shown(path)} ({hint(error, path)})")
    stop.full = error.errno in FULL
    return stop


def mount_point(path: Path) -> Path:
    """The mount point of the file system that holds ``path``."""
    path = path.resolve()
    while not os.path.ismount(path):
        path = path.parent
    return path


def megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def disk_full(build: Path, last: int, written: int, removed: str = "the partial build was removed") -> str:
    """The line that says the disk holding ``build`` is full and how much a build needs there.

    A build needs about the size of the last good build (``last`` bytes, 0
    if there is none), and more than the failed build had written
    (``written``); ``removed`` says what became of the partial build.
    """
    where = mount_point(build)
    stats = os.statvfs(where)
    free = stats.f_bavail * stats.f_frsize
    need = f"about {megabytes(last)} there (the size of the last good build)" if last and last >= written else \
        f"more than {megabytes(written)} there (what it had written when the disk filled)"
    return (f"the disk is full: the file system at {where}, which holds {shown(build)}, has {megabytes(free)} "
            f"free, and a build needs {need}; {removed}. Free some space, then build again")
