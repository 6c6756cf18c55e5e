"""Build-level guarantees for the book: self-contained, reproducible, never stale.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``). It

* serves MathJax from the site itself: ``mathjax_path`` (``_config.yml``)
  points into ``_static/mathjax/``, which is filled from the npm package
  ``mathjax`` (``node_modules/``, installed by ``make assets``) when the
  builder starts (:mod:`.mathjax`);
* re-executes every notebook when the code the notebooks import changes
  (``src/``, ``requirements.txt``, ``pyproject.toml``): every page depends
  on those files, and the jupyter-cache, which keys on cell source only, is
  emptied when their bytes change (:mod:`.freshness`);
* makes the output depend on the sources only: the last commit's time for
  ``SOURCE_DATE_EPOCH`` when it is not set, stable cell ids in the
  downloadable notebooks, a ``.buildinfo`` hash free of the build's
  directory (:mod:`.reproducible`);
* fails the build (a warning, and warnings are errors) when a page would load
  an asset from another host or embeds ipywidgets state (random model ids),
  or when an absolute path of the build machine leaks into the output
  (:mod:`.checks`).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from . import checks, freshness, mathjax, reproducible


def setup(app: Sphinx) -> dict[str, Any]:
    reproducible.default_source_date_epoch()
    # After the themes (priority 500) have added their absolute templates paths.
    app.connect("config-inited", reproducible.relative_template_paths, priority=900)
    # After myst-nb (priority 500) has resolved the jupyter-cache path.
    app.connect("builder-inited", freshness.invalidate_stale_cache, priority=900)
    app.connect("builder-inited", mathjax.copy_mathjax, priority=900)
    app.connect("source-read", freshness.note_dependencies)
    # Last, so that every other extension has added its scripts.
    app.connect("html-page-context", checks.no_external_assets, priority=999)
    app.connect("html-page-context", checks.no_widget_state, priority=999)
    app.connect("build-finished", reproducible.stable_cell_ids)
    app.connect("build-finished", checks.no_leaked_paths)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
