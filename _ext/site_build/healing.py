"""A damaged execution cache heals: a bad record is dropped and its chapter executed again.

myst-nb reads a chapter's outputs from the jupyter-cache with
``merge_match_into_notebook``, which fails, and so fails every later build,
when the record's notebook file is gone ("Notebook file does not exist for
cache record") or cut short (``NotJSONError``), or when the cache's database
cannot be read (a file where the cache's folder should be has none). When the
builder starts, :func:`heal_execution_cache` reads every record back with
jupyter-cache's ``get_cache_bundle`` (the call that would fail) and drops
the records it cannot read; a database it cannot read is removed with the
whole cache. A chapter whose record was dropped is
executed again the next time it is read. Anything else that makes the cache
unusable stops the build with one line that names the cache and the command
that removes it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.cache.db import NbCacheRecord
from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util import logging
from sqlalchemy.exc import DatabaseError

logger = logging.getLogger(__name__)


class DamagedCache(SphinxError):
    category = "Execution cache unusable"


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


def heal_execution_cache(app: Sphinx) -> None:
    """Drop unreadable records (or an unreadable cache) before any chapter is read (``builder-inited``)."""
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache" or not Path(config.execution_cache_path).exists():
        return
    path = Path(config.execution_cache_path)
    try:
        for damage in drop_unreadable_records(path):
            logger.info("site_build: dropped a damaged execution cache %s; its chapter will be executed "
                        "again", damage)
    except DatabaseError as error:  # also when the cache's path is a file: it has no database
        logger.info("site_build: the execution cache's database is unreadable (%s): emptying %s; every "
                    "chapter will be executed again", type(error).__name__, path)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError as error:
        raise DamagedCache(f"the execution cache {path} cannot be used ({error}); `make clean` removes "
                           "it (every chapter is then executed again)") from None
