"""A page whose inputs change while it is being read is read again by the next build.

Sphinx decides what to re-read by comparing each source's modification time
(and each noted dependency's) with the time it *finished* reading the page,
which it records after parsing. Here, parsing a chapter executes its
notebook, for up to a minute: a chapter edited while its notebook ran, or a
file of ``src/`` edited while a kernel had already imported the old one,
looks older than that reading, and every later build kept the page as it was
read, before the edit. Two handlers close the gap:

* :func:`note_source_time` records each source's modification time as the
  reader opens it (``source-read``); :func:`reread_sources_edited_since`
  re-reads a page whose source no longer has that time (``env-get-outdated``).
  The record travels with the environment, merged from parallel readers
  (``env-merge-info``) and dropped with the page (``env-purge-doc``).
* When :mod:`.freshness` empties the execution cache because ``src/`` or the
  requirements changed (it stamps their digest when a build starts, so an
  edit during a build changes it too), :func:`reread_after_emptied_cache`
  re-reads every page, instead of only those whose dependencies look newer
  than their reading.
"""

from __future__ import annotations

import os

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

logger = logging.getLogger(__name__)

ENV_KEY = "site_build_source_times"
#: Set on the application (not kept in the environment) by :mod:`.freshness` when it empties the cache.
EMPTIED = "site_build_emptied_cache"


def _times(env: BuildEnvironment) -> dict[str, int]:
    if not hasattr(env, ENV_KEY):
        setattr(env, ENV_KEY, {})
    return getattr(env, ENV_KEY)


def _modified(env: BuildEnvironment, docname: str) -> int | None:
    try:
        return os.stat(env.doc2path(docname)).st_mtime_ns
    except OSError:
        return None


def note_source_time(app: Sphinx, docname: str, source: list[str]) -> None:
    """Record the modification time of the source being read (``source-read``)."""
    _times(app.env)[docname] = _modified(app.env, docname)


def merge_source_times(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    """Take the times a parallel reader recorded (``env-merge-info``)."""
    theirs = _times(other)
    _times(env).update({name: theirs[name] for name in docnames if name in theirs})


def purge_source_time(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _times(env).pop(docname, None)


def reread_sources_edited_since(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                                removed: set[str]) -> list[str]:
    """Pages whose source changed after the reader opened it (``env-get-outdated``)."""
    times = _times(env)
    edited = sorted(name for name in env.all_docs
                    if name in env.found_docs and name not in changed and name in times
                    and _modified(env, name) != times[name])
    if edited:
        logger.info("site_build: %d page(s) edited while they were read: reading them again", len(edited))
    return edited


def reread_after_emptied_cache(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                               removed: set[str]) -> list[str]:
    """Every page, when the execution cache was emptied at this build's start (``env-get-outdated``)."""
    return sorted(env.found_docs) if getattr(app, EMPTIED, False) else []


def setup(app: Sphinx) -> None:
    """Connect the handlers (called by the package's ``setup``)."""
    app.connect("source-read", note_source_time)
    app.connect("env-merge-info", merge_source_times)
    app.connect("env-purge-doc", purge_source_time)
    app.connect("env-get-outdated", reread_sources_edited_since)
    app.connect("env-get-outdated", reread_after_emptied_cache)
