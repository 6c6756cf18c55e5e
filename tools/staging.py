"""The book's ``_build/``: the last good build, the build in progress, and publishing one as the other.

Under the book's ``_build/``:

* ``html/``: the published site; with ``.doctrees/``, ``jupyter_execute/``
  and ``attention_explorer/`` (Sphinx's environment, myst-nb's executed
  notebooks and the explorer's fallback image, which the environment lists
  as the smoothing chapter's dependencies) it is the last good build, which
  the next build starts from; ``.last-good`` marks the four as one build;
* ``.jupyter_cache/``: the executed notebooks, kept across builds (their
  freshness and repair are ``_ext/site_build``'s);
* ``staging/``: the build in progress (:func:`prepare_staging`). It starts as
  a copy of the last good build (or empty), made writable whatever the modes
  of the original; Sphinx updates it, and only when Sphinx succeeds do its
  directories replace those of ``_build/`` (:func:`publish`), with signals
  held off and ``.last-good`` removed meanwhile (a crash in between makes the
  next build start from nothing, not from a mix). A move the file system
  refuses is undone, so the last good build and its mark stay;
* ``.lock``: held by every process of a build (:mod:`tools.buildlock`).

A folder the build may not write stops it with a :class:`~tools.faults.Stop`
naming that folder and the fix: at once, before anything is built, when it
can be seen then (:func:`check_writable`), else when the write is refused.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path

from tools.faults import Stop, fault, shown

BUILD = Path("_build")
#: What one Sphinx build leaves, besides the cache. A file the environment notes as a page's
#: dependency must be here: missing from the next build's staging, it makes Sphinx read that page again.
STATE = ("html", ".doctrees", "jupyter_execute", "attention_explorer")
CACHE = ".jupyter_cache"
STAGING = "staging"
MARK = ".last-good"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def check_writable(build: Path) -> None:
    """Stop at once, naming it, if a folder that staging or publishing writes may not be written.

    ``os.access`` answers for each; where it says no, a file created there
    gets the file system's own reason (read-only, immutable, a read-only
    mount) for the message.
    """
    for path in (build, *(build / name for name in (STAGING, *STATE))):
        if path.is_dir() and not os.access(path, os.W_OK):
            try:
                descriptor, name = tempfile.mkstemp(dir=path, prefix=".writable-")
            except OSError as error:
                raise fault("write", error, path) from None
            os.close(descriptor)  # access() said no, the file system yes: go on
            os.unlink(name)


def remove_tree(path: Path) -> None:
    """Remove ``path`` (a build's own scratch folder), making its folders writable first if need be."""
    for attempt in (1, 2):
        try:
            shutil.rmtree(path)
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if attempt == 2 or not isinstance(error, PermissionError):
                where = Path(error.filename or path)
                raise fault("remove", error, where, where.parent, path.parent) from None
        _make_writable(path)  # a read-only folder inside (copied from the published site): ours to change


def _make_writable(top: Path) -> None:
    """Give the owner every right on ``top`` and every folder below it, each before it is listed."""
    folders = [top]
    while folders:
        folder = folders.pop()
        with contextlib.suppress(OSError):
            os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
            folders += [entry.path for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]


def _writable_copy(source: str, target: str) -> None:
    """``shutil.copy2``, then the copy made writable by its owner (the published site may be read-only)."""
    shutil.copy2(source, target, follow_symlinks=False)
    mode = os.lstat(target).st_mode
    if not stat.S_ISLNK(mode) and not mode & stat.S_IWUSR:
        os.chmod(target, stat.S_IMODE(mode) | stat.S_IWUSR)


def copy_writable(source: Path, target: Path) -> None:
    """Copy the tree ``source`` to ``target`` with times, every file and folder writable by its owner."""
    try:
        shutil.copytree(source, target, symlinks=True, copy_function=_writable_copy)
    except shutil.Error as error:  # the first file that could not be copied
        source_file, _, why = error.args[0][0]
        raise Stop(f"could not copy {shown(Path(source_file))} into {shown(target.parent)} ({why})") from None
    except OSError as error:
        raise fault("copy", error, Path(error.filename or source), target.parent) from None
    for folder, _, _ in os.walk(target):
        mode = os.lstat(folder).st_mode
        if mode & stat.S_IRWXU != stat.S_IRWXU:
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IRWXU)


def prepare_staging(build: Path) -> Path:
    """A fresh ``staging/``: a copy of the last good build if ``_build/`` holds one, else empty."""
    staging = build / STAGING
    check_writable(build)
    remove_tree(staging)
    try:
        staging.mkdir(parents=True)
    except OSError as error:
        raise fault("create", error, staging, build) from None
    if (build / MARK).is_file():
        for name in STATE:
            if (build / name).is_dir():
                copy_writable(build / name, staging / name)
    return staging


@contextlib.contextmanager
def signals_held():
    """Hold Ctrl-C, SIGTERM and SIGHUP off until the block is done (they are delivered after it)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _swap(build: Path, staging: Path) -> None:
    """Move the last good build out of ``_build/`` and the new one in; undo every move if one is refused."""
    done = []  # (from, to) of each move made
    try:
        for name in STATE:
            for source, target in ((build / name, staging / f"old{name}"), (staging / name, build / name)):
                if source.exists():
                    source.rename(target)
                    done.append((source, target))
    except OSError as error:
        what = Path(error.filename)
        stop = fault("move", error, what, what.parent, Path(error.filename2 or staging).parent)
        try:
            for source, target in reversed(done):
                target.rename(source)  # back: the folders that allowed one move allow its undoing
        except OSError as undo:
            raise Stop(f"{stop}, nor undo the moves made ({undo.strerror}: {shown(Path(undo.filename))}): the "
                       "next build starts from nothing") from None
        stop.kept = True  # the last good build is back in place
        raise stop from None


def publish(build: Path) -> str | None:
    """Replace ``_build/``'s last good build with ``staging/``'s, as one step for signals.

    A move the file system refuses is undone and raises a :class:`Stop`: the
    last good build stays, marked as such. Returns a warning if the old build
    could not be removed from ``staging/`` afterwards (the site is published).
    """
    staging, mark = build / STAGING, build / MARK
    marked = f"{', '.join(STATE)} are one successful build\n"
    with signals_held():
        had_mark = mark.is_file()
        try:
            mark.unlink(missing_ok=True)
        except OSError as error:
            raise fault("remove", error, mark, build) from None
        try:
            _swap(build, staging)
        except Stop as stop:
            if had_mark and getattr(stop, "kept", False):
                with contextlib.suppress(OSError):  # else the next build starts from nothing: safe too
                    mark.write_text(marked)
            raise
        try:
            mark.write_text(marked)
        except OSError as error:
            raise fault("write", error, mark, build) from None
    try:
        remove_tree(staging)
    except Stop as stop:
        return f"{stop}; the next build removes it"
    return None
