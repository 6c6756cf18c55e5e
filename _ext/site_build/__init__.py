"""Build-level guarantees for the book: self-contained, reproducible, never stale.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``). It

* re-executes every notebook when the code the notebooks import changes
  (``src/``, ``requirements.txt``, ``pyproject.toml``, and the bench results
  chapters read, ``benchmarks/attention_cost.json`` and
  ``benchmarks/linear_memory.json``): every page depends
  on those files, and the jupyter-cache, which keys on cell source only, is
  emptied when their bytes change (:mod:`.freshness`);
* repairs a damaged execution cache instead of failing every later build: a
  bad record is dropped (its chapter is executed again), a bad database
  removed with the cache; what cannot heal stops the build with one line
  naming the file and the fix (:mod:`.healing`);
* makes an incremental build write exactly what a clean build writes
  (:mod:`.incremental`), also after an edit made while a page was being
  read (:mod:`.read_times`);
* stops the build at a failing cell with one line: the chapter, the line in
  its ``.md`` file and the error (:mod:`.failures`);
* makes the output depend on the sources only: the last commit's time for
  ``SOURCE_DATE_EPOCH`` when it is not set, stable cell ids in the
  downloadable notebooks, a ``.buildinfo`` hash free of the build's
  directory (:mod:`.reproducible`);
* lets Sphinx read the pages, and so execute their notebooks, in parallel,
  and write them in one process (:mod:`.parallel`);
* fails the build (a warning, and warnings are errors) when a page would load
  an asset from another host or embeds ipywidgets state (random model ids),
  or when an absolute path of the build machine leaks into the output
  (:mod:`.checks`).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from . import checks, failures, freshness, healing, incremental, parallel, read_times, reproducible


def setup(app: Sphinx) -> dict[str, Any]:
    reproducible.default_source_date_epoch()
    # Last: after the themes (priority 500) and the book's extensions (page_meta: 900) add absolute templates paths.
    app.connect("config-inited", reproducible.relative_template_paths, priority=999)
    app.connect("config-inited", parallel.declare_parallel_safety)
    app.connect("builder-inited", parallel.write_serially)
    # After myst-nb (priority 500) has resolved the jupyter-cache path.
    app.connect("builder-inited", healing.heal_execution_cache, priority=850)
    app.connect("builder-inited", freshness.invalidate_stale_cache, priority=900)
    app.connect("builder-inited", parallel.create_execution_cache, priority=950)
    app.connect("source-read", freshness.note_dependencies)
    app.connect("doctree-read", failures.stop_at_failed_cell)
    incremental.setup(app)
    read_times.setup(app)
    # Last, so that every other extension has added its scripts.
    app.connect("html-page-context", checks.no_external_assets, priority=999)
    app.connect("html-page-context", checks.no_widget_state, priority=999)
    app.connect("build-finished", reproducible.stable_notebooks)
    app.connect("build-finished", checks.no_leaked_paths)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
