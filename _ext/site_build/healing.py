"""A damaged execution cache heals: a bad record is dropped, a bad database is removed with the cache.

myst-nb reads a chapter's outputs from the jupyter-cache, whose database
(``global.db``, sqlite) lists the records and whose ``executed/`` folder holds
their notebooks. When the builder starts, before any chapter is read,
:func:`heal_execution_cache` checks both and repairs what it finds:

* the database is opened for writing, its tables listed and its pages checked
  (sqlite's ``PRAGMA quick_check``: :func:`database_damage`): one that is
  empty or missing a table, has a damaged page (bytes overwritten inside the
  file), a folder where the file should be, a
  file that is not a database, cannot be read or cannot be written (sqlite
  falls back to reading a file it may not write, and the build writes every
  chapter it executes), and a file where the cache's folder should be, are
  all removed with the whole cache (the site keeps the outputs it has: a
  chapter is executed again the next time it is read);
* every record is read back with jupyter-cache's ``get_cache_bundle`` (the
  call myst-nb makes, which fails, and so fails every later build, when the
  record's notebook is gone or cut short): a record that cannot be read is
  dropped, and its chapter executed again;
* the cache's folders must be writable too, or the cache is removed.

What cannot heal stops the build with one line naming the file and the
command that fixes it: a database another process holds locked (its PID,
from ``/proc/locks`` where there is one), or a damaged cache that cannot be
removed (read-only or immutable folders).
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import stat
import sys
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.cache.db import DB_NAME, NbCacheRecord, OrmBase
from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util import logging
from sqlalchemy.exc import DatabaseError

logger = logging.getLogger(__name__)

#: Seconds to wait for a write lock on the database (jupyter-cache's own reads wait 5 s).
LOCK_WAIT = 2.0
#: What sqlite says of a database another connection holds locked.
LOCKED = "database is locked"


class DamagedCache(SphinxError):
    category = "Execution cache unusable"


def shown(path: Path) -> str:
    """``path`` relative to the working directory (the book's root) when it is inside it."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def database_damage(path: Path) -> str | None:
    """Why the database of the cache at ``path`` cannot be used, or None (also when there is none yet)."""
    db = path / DB_NAME
    if not os.path.lexists(db):
        return None  # jupyter-cache creates it
    if db.is_dir():
        return "a folder stands where the database should be"
    try:
        connection = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=LOCK_WAIT, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")  # a write lock: another connection's refuses it
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            connection.execute(f"PRAGMA user_version = {version}")  # a write, undone: refused by a read-only file
            # Damaged pages (bytes overwritten inside the file) that listing the tables never reads: the next
            # record written or read there fails with "database disk image is malformed".
            found = [row[0] for row in connection.execute("PRAGMA quick_check(3)")]
            connection.execute("ROLLBACK")
        finally:
            connection.close()
    except sqlite3.Error as error:
        return f"{type(error).__name__}: {error}"
    missing = sorted(set(OrmBase.metadata.tables) - tables)
    if missing:
        return f"no table {', '.join(missing)} (an empty or foreign file)"
    return None if found == ["ok"] else f"PRAGMA quick_check: {'; '.join(found)}".replace("\n", " ")


def lock_holders(db: Path) -> list[int]:
    """The PIDs that hold a lock on ``db`` (Linux's ``/proc/locks``; empty elsewhere or if none)."""
    try:
        inode, text = os.stat(db).st_ino, Path("/proc/locks").read_text()
    except OSError:
        return []
    holders = []
    for line in text.splitlines():
        fields = line.split()
        if "->" in fields:  # a process waiting for the lock, not holding it
            continue
        pid, where = (fields[4], fields[5]) if len(fields) > 5 else ("", "")
        if pid.isdigit() and where.rsplit(":", 1)[-1] == str(inode) and int(pid) not in holders:
            holders.append(int(pid))
    return holders


def _unreadable(cache, pk: int) -> str | None:
    """Why the record ``pk`` cannot be read back, or None if it can."""
    try:
        cache.get_cache_bundle(pk)
    except (KeyError, ValueError, OSError) as error:  # NotJSONError is a ValueError
        return f"{type(error).__name__}: {str(error).strip()[:120]}"
    return None


def _drop(cache, record) -> None:
    """Remove the record and its folder (``remove_cache`` refuses a record whose notebook is gone,
    and a folder left behind makes jupyter-cache fail to cache that chapter again)."""
    # jupyter-cache keeps a record's files in executed/<hashkey>/ (JupyterCacheBase._get_notebook_path_cache).
    shutil.rmtree(Path(cache.path, "executed", record.hashkey), ignore_errors=True)
    NbCacheRecord.remove_records([record.pk], cache.db)


def drop_unreadable_records(path: Path) -> list[str]:
    """Drop every record of the cache at ``path`` that cannot be read back; what was dropped."""
    cache = get_cache(path)
    dropped = []
    for record in cache.list_cache_records():
        reason = _unreadable(cache, record.pk)
        if reason is not None:
            _drop(cache, record)
            dropped.append(f"record {record.pk} ({record.uri}): {reason}")
    return dropped


def unwritable_folder(path: Path) -> Path | None:
    """The first of the cache's folders that this process may not enter and write, or None."""
    for folder in (path, path / "executed"):
        if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK | os.R_OK):
            return folder
    return None


def fix_command(error: OSError, path: Path) -> str:
    """The command that lets the build remove ``path`` after ``error``."""
    if error.errno == errno.EPERM:
        return f"chattr -R -i {shown(path)} (it is immutable), or rm -rf {shown(path)} as whoever can"
    if error.errno == errno.EACCES:
        return f"chmod -R u+rwX {shown(path)}, or rm -rf {shown(path)}"
    return f"rm -rf {shown(path)}"


def remove_cache(path: Path, damage: str) -> None:
    """Remove the damaged cache at ``path`` (a folder, or whatever stands there), or stop in one line."""
    def writable_then_again(function, name, _):  # a folder the cache left read-only: make it writable, once
        parent = os.path.dirname(name)
        os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IRWXU)
        if os.path.isdir(name) and not os.path.islink(name):
            os.chmod(name, stat.S_IMODE(os.lstat(name).st_mode) | stat.S_IRWXU)
            shutil.rmtree(name)
        else:
            function(name)

    handler = {"onexc" if sys.version_info >= (3, 12) else "onerror": writable_then_again}
    try:
        if path.is_dir() and not path.is_symlink():
            db = path / DB_NAME  # first: without it the records are gone, and if it stays so does the rest
            if db.is_dir() and not db.is_symlink():
                shutil.rmtree(db, **handler)
            elif os.path.lexists(db):
                try:
                    db.unlink()
                except PermissionError as error:
                    writable_then_again(os.unlink, str(db), error)
            shutil.rmtree(path, **handler)
        else:
            path.unlink()
    except OSError as error:
        where = Path(error.filename) if error.filename else path
        raise DamagedCache(f"the execution cache {shown(path)} is damaged ({damage}) and {shown(where)} cannot be "
                           f"removed ({error.strerror}): run {fix_command(error, path)}, then build again") from None


def heal(path: Path) -> None:
    """Repair the cache at ``path`` (see the module's docstring), or raise :class:`DamagedCache`."""
    if not path.is_dir() or path.is_symlink():
        damage = "a file stands where the cache's folder should be"
    elif (folder := unwritable_folder(path)) is not None:
        damage = f"{shown(folder)} may not be written"
    else:
        damage = database_damage(path)
        if damage is not None and LOCKED in damage:
            holders = lock_holders(path / DB_NAME)
            who = f"process {', '.join(map(str, holders))}" if holders else "another process"
            raise DamagedCache(f"the execution cache's database {shown(path / DB_NAME)} is locked by {who}: stop "
                               f"it{f' (kill {holders[0]})' if len(holders) == 1 else ''}, then build again")
    if damage is None:
        try:
            for dropped in drop_unreadable_records(path):
                logger.info("site_build: dropped a damaged execution cache %s; its chapter will be executed "
                            "again", dropped)
            return
        except (DatabaseError, RuntimeError, OSError) as error:  # jupyter-cache wraps sqlite's in a RuntimeError
            cause = getattr(error.__cause__, "orig", error.__cause__) or getattr(error, "orig", None) or error
            damage = f"{type(cause).__name__}: {cause}"
    logger.info("site_build: the execution cache %s is damaged (%s): removing it; a chapter is executed "
                "again the next time it is read", shown(path), damage)
    remove_cache(path, damage)


def heal_execution_cache(app: Sphinx) -> None:
    """Drop unreadable records, or remove a damaged cache, before any chapter is read (``builder-inited``)."""
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache" or not config.execution_cache_path:
        return  # (myst-nb has resolved an empty path to _build/.jupyter_cache by now: never heal ".")
    path = Path(config.execution_cache_path)
    if os.path.lexists(path):
        heal(path)
