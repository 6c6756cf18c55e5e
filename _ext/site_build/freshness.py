"""Never serve a stale executed notebook.

jupyter-cache (``execute_notebooks: cache``) keys a notebook on its code
cells' source only, and Sphinx re-reads a page only when its own file, or a
file noted as its dependency, changed. So after an edit to the package in
``src/`` (or to the pinned requirements, or to the bench results a chapter
reads), both would happily serve outputs computed by the old code. For the files of :data:`DEPENDENCIES` this module

* notes each one as a dependency of every page (Sphinx's
  ``env.note_dependency``), so that Sphinx re-reads every page when one of
  them is newer than the page's last reading, as it does for an included file;
* when the builder starts, empties the jupyter-cache if it was filled under
  another digest of their bytes (the digest is stamped into the cache
  directory), so that the pages Sphinx re-reads are executed again instead
  of being served from the cache.

An edit to one chapter still re-reads and re-executes that chapter only.

The pages' HTML also depends on the book's own extensions (:data:`PAGE_DEPENDENCIES`:
their Python, templates, scripts and stylesheets, whose checksums the pages
link with), which Sphinx does not track. Their files are noted as
dependencies of every page as well, so that an edit there makes Sphinx read
and write every page again; they are not in the digest, so the chapters'
outputs still come from the cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from . import read_times
from .paths import PROJECT_ROOT

logger = logging.getLogger(__name__)

# What the notebooks' results depend on besides their own cells.
# benchmarks/attention_cost.json and linear_memory.json: the times and peak memory `make bench` measured,
# which two chapters read (a new run re-executes the chapters, as an edit to src/ does).
DEPENDENCIES = ("src", "requirements.txt", "pyproject.toml", "benchmarks/attention_cost.json",
                "benchmarks/linear_memory.json")
# What the pages' HTML depends on besides their sources and the notebooks' results.
PAGE_DEPENDENCIES = ("_ext",)
IGNORED_PARTS = ("__pycache__",)
IGNORED_SUFFIXES = (".pyc", ".pyo")
STAMP = "site_build-dependencies.sha256"


def dependency_files(root: Path, names: tuple[str, ...] = DEPENDENCIES) -> list[Path]:
    """Every file of ``names`` (default :data:`DEPENDENCIES`) under ``root``, sorted, minus caches."""
    files = []
    for name in names:
        path = root / name
        candidates = sorted(path.rglob("*")) if path.is_dir() else [path]
        files += [p for p in candidates if p.is_file() and _tracked(p.relative_to(root))]
    return files


def _tracked(relative: Path) -> bool:
    return not (
        any(part in IGNORED_PARTS or part.endswith(".egg-info") or part.startswith(".")
            for part in relative.parts)
        or relative.suffix in IGNORED_SUFFIXES
    )


def dependency_digest(root: Path) -> str:
    """SHA-256 over the relative names and bytes of :func:`dependency_files`."""
    digest = hashlib.sha256()
    for path in dependency_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def invalidate_stale_cache(app: Sphinx) -> None:
    """Empty the jupyter-cache if its stamp is not the current dependency digest."""
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    cache = Path(config.execution_cache_path)
    stamp = cache / STAMP
    digest = dependency_digest(PROJECT_ROOT)
    if cache.exists() and (not stamp.is_file() or stamp.read_text().strip() != digest):
        logger.info("site_build: src/ or requirements changed: emptying the execution cache %s", cache)
        shutil.rmtree(cache)
        setattr(app, read_times.EMPTIED, True)  # every page is read, so executed, again
    cache.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest + "\n")


def note_dependencies(app: Sphinx, docname: str, source: list[str]) -> None:
    """Make the page being read depend on every file of :data:`DEPENDENCIES` and :data:`PAGE_DEPENDENCIES`
    (``source-read``)."""
    for path in dependency_files(PROJECT_ROOT, DEPENDENCIES + PAGE_DEPENDENCIES):
        app.env.note_dependency(os.path.relpath(path, app.srcdir))
