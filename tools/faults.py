"""File-system faults of a build, said in one line: what could not be done, to which path, and the fix.

``make build`` writes only under ``_build/``; when the file system refuses
(a folder made read-only or immutable, a full disk), the build stops with a
:class:`Stop` whose message is one line naming the path that refused, not
the file deep inside a copy where the refusal happened to surface::

    could not move _build/html (operation not permitted: is it immutable? lsattr -d _build/html; chattr -i _build/html)

:func:`culprit` finds that path among the candidates (the file, its folder,
the folder it was to go to); :func:`fault` makes the message.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


class Stop(Exception):
    """A build that cannot go on; its message is the one line that says why and what to do."""


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
    return Stop(f"could not {action} {shown(path)} ({hint(error, path)})")
