"""The book's interactive demos: what readers can move themselves.

* :mod:`.explorer_data`: the data the in-page explorer (the
  ``attention-explorer`` directive of ``_ext/attention_explorer``) embeds at
  build time and recomputes in JavaScript, with no kernel;
* :mod:`.circuit_data`: the same for the induction circuit's explorer of
  "Heads that work together" (its settings, and the package's run that it
  recomputes);
* :mod:`.widget`: the :class:`~.widget.SmoothingWidget` that
  :func:`~.widget.explore` returns in a live Jupyter kernel (ipywidgets).
"""
