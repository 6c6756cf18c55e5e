"""The book's ``_build/``: the last good build, the build in progress, and publishing one as the other.

Under the book's ``_build/``:

* ``builds/<name>/``: a whole successful build: ``html/`` (the site) with
  ``.doctrees/``, ``jupyter_execute/`` and ``attention_explorer/``
  (Sphinx's environment, myst-nb's executed notebooks and the explorer's
  fallback image, which the environment lists as the smoothing chapter's
  dependencies), which the next build starts from;
* ``html``: a symbolic link to the last good build's ``html/``
  (``builds/<name>/html``), the published site, replaced in one step
  (rename(2) of a new link over it) when a build succeeds: at every instant
  it is a whole site, the old or the new, however the publication is stopped
  (SIGKILL, a crash, a power cut once the disk has written the rename).
  ``.doctrees``, ``jupyter_execute`` and ``attention_explorer`` are links
  through it (``html/../.doctrees``), so they always name the published build's;
* ``.jupyter_cache/``: the executed notebooks, kept across builds (their
  freshness and repair are ``_ext/site_build``'s);
* ``staging/``: the build in progress (:func:`prepare_staging`). It starts as
  a copy of the last good build (or empty), made writable whatever the modes
  of the original; Sphinx updates it, and only when Sphinx succeeds is it
  renamed, whole, into ``builds/`` and ``html`` switched to it
  (:func:`publish`), with signals held off; the builds it replaces are then
  removed. A move the file system refuses leaves the last good build
  published and the new one in ``staging/``;
* ``.lock``: held by every process of a build (:mod:`tools.buildlock`).

A ``_build/`` from before ``builds/`` (the four folders directly in
``_build/``, marked as one build by ``.last-good``) is the last good build
until the first publication, which swaps its ``html/`` folder for the link
in one step too (Linux's renameat2 ``RENAME_EXCHANGE``).

A folder the build may not write stops it with a :class:`~tools.faults.Stop`
naming that folder and the fix: at once, before anything is built, when it
can be seen then (:func:`check_writable`), else when the write is refused.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path

from tools.faults import Stop, fault, said_full, shown

BUILD = Path("_build")
#: What one Sphinx build leaves, besides the cache. A file the environment notes as a page's
#: dependency must be here: missing from the next build's staging, it makes Sphinx read that page again.
STATE = ("html", ".doctrees", "jupyter_execute", "attention_explorer")
CACHE = ".jupyter_cache"
STAGING = "staging"
#: The folder of the whole builds: the published one, and those being replaced or removed.
BUILDS = "builds"
#: The mark of a ``_build/`` laid out before ``builds/``: its own four folders are one successful build.
MARK = ".last-good"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def check_writable(build: Path) -> None:
    """Stop at once, naming it, if a folder that staging or publishing writes may not be written.

    ``os.access`` answers for each; where it says no, a file created there
    gets the file system's own reason (read-only, immutable, a read-only
    mount) for the message.
    """
    for path in (build, *(build / name for name in (STAGING, BUILDS, *STATE))):
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
        if said_full(str(why)):
            stop = Stop(f"could not copy {shown(Path(source_file))} into {shown(target.parent)} (no space left: "
                        "free some on that disk)")
            stop.full = True
            raise stop from None
        raise Stop(f"could not copy {shown(Path(source_file))} into {shown(target.parent)} ({why})") from None
    except OSError as error:
        raise fault("copy", error, Path(error.filename or source), target.parent) from None
    for folder, _, _ in os.walk(target):
        mode = os.lstat(folder).st_mode
        if mode & stat.S_IRWXU != stat.S_IRWXU:
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IRWXU)


def size(path: Path) -> int:
    """The bytes the files and folders under ``path`` take on the disk (as ``du`` counts them), 0 if none."""
    total = 0
    for folder, folders, names in os.walk(path):
        for name in (*folders, *names):
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def last_good(build: Path) -> Path | None:
    """The folder holding the last good build: the one ``_build/html`` links into, else None.

    A ``_build/`` laid out before ``builds/`` holds it itself, when marked.
    """
    site = build / "html"
    if site.is_symlink():
        target = Path(os.readlink(site))
        if len(target.parts) == 3 and target.parts[0] == BUILDS and target.name == "html":
            folder = build / target.parent
            return folder if folder.is_dir() else None
        return None
    return build if (build / MARK).is_file() and site.is_dir() else None


def prepare_staging(build: Path) -> Path:
    """A fresh ``staging/``: a copy of the last good build if ``_build/`` holds one, else empty."""
    staging = build / STAGING
    check_writable(build)
    remove_tree(staging)
    try:
        staging.mkdir(parents=True)
    except OSError as error:
        raise fault("create", error, staging, build) from None
    source = last_good(build)
    if source is not None:
        for name in STATE:
            if (source / name).is_dir():
                copy_writable(source / name, staging / name)
    return staging


@contextlib.contextmanager
def signals_held():
    """Hold Ctrl-C, SIGTERM and SIGHUP off until the block is done (they are delivered after it)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _exchange(a: Path, b: Path) -> None:
    """Swap the names ``a`` and ``b`` in one step (renameat2's ``RENAME_EXCHANGE``, Linux 3.15 and glibc 2.28).

    Where there is no such call, the two are swapped by three renames, between which ``b`` is missing.
    """
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is not None:
        at_cwd, exchange = -100, 2  # AT_FDCWD, RENAME_EXCHANGE (linux/fcntl.h, linux/fs.h)
        if renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), exchange) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS):  # else: a file system without it
            raise OSError(code, os.strerror(code), str(b), None, str(a))
    aside = a.with_name(f"{a.name}.swap")
    a.rename(aside)
    b.rename(a)
    aside.rename(b)


def _clear(path: Path) -> None:
    """Remove whatever a publication stopped midway left at ``path`` (a link, or an old site folder)."""
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    else:
        path.unlink(missing_ok=True)


def _link(path: Path, target: Path) -> None:
    """Make ``path`` a symbolic link to ``target`` in one step: a new link renamed over the old one.

    A folder at ``path`` (``_build/`` laid out before ``builds/``) is
    exchanged for the link, and left at ``.<name>.new`` for :func:`_tidy`.
    """
    new = path.with_name(f".{path.name}.new")
    _clear(new)
    os.symlink(target, new)
    if path.is_dir() and not path.is_symlink():
        _exchange(new, path)
    else:
        os.replace(new, path)


def _move_in(staging: Path, builds: Path) -> Path:
    """Rename ``staging`` whole into ``builds/``, under a new name; its new path."""
    try:
        builds.mkdir(exist_ok=True)
        home = Path(tempfile.mkdtemp(dir=builds, prefix="build-"))
    except OSError as error:
        raise fault("write", error, builds, builds.parent) from None
    try:
        staging.rename(home)  # over the empty folder just made: one step
    except OSError as error:
        with contextlib.suppress(OSError):
            home.rmdir()
        raise fault("move", error, staging, staging.parent, builds) from None
    return home


def _tidy(build: Path, home: Path) -> None:
    """Link ``.doctrees`` and the rest through ``html``, and remove every build in ``builds/`` but ``home``."""
    for name in STATE[1:]:
        path, target = build / name, Path("html", "..", name)
        try:
            if not (path.is_symlink() and Path(os.readlink(path)) == target):
                _link(path, target)
        except OSError as error:
            raise fault("replace", error, path, build) from None
    for leftover in (build / f".{name}.new" for name in STATE):
        _clear(leftover)  # a folder of the layout before builds/, exchanged for its link
    try:
        (build / MARK).unlink(missing_ok=True)
    except OSError as error:
        raise fault("remove", error, build / MARK, build) from None
    for old in sorted(home.parent.iterdir()):
        if old != home:
            remove_tree(old)


def publish(build: Path) -> str | None:
    """Publish ``staging/`` as the last good build, in one step: ``_build/html`` links to it.

    A move the file system refuses raises a :class:`Stop`; the last good
    build stays published, and the new one waits in ``staging/``. Returns a
    warning if the old build could not be removed afterwards (the site is
    published).
    """
    staging, builds = build / STAGING, build / BUILDS
    with signals_held():
        home = _move_in(staging, builds)
        try:
            _link(build / "html", Path(BUILDS, home.name, "html"))
        except (OSError, Stop) as error:  # (a Stop: what a stopped publication left could not be removed)
            stop = error if isinstance(error, Stop) else fault("replace", error, build / "html", build)
            with contextlib.suppress(OSError):
                home.rename(staging)
            raise stop from None
    try:
        _tidy(build, home)
    except Stop as stop:
        return f"{stop}; the next build removes it"
    return None
