"""The book's figures, one module per study of :mod:`selfattention.studies`.

Every function here takes its data as explicit arguments (computed by the
study of the same name) and returns a :class:`matplotlib.figure.Figure`
built without pyplot, so drawing a figure never touches global matplotlib
state (no rcParams changes, no open pyplot figures for a notebook to display
twice). The panels several figures share are in :mod:`.panels`.
"""

from ._style import BookFigure, new_figure

__all__ = ["BookFigure", "new_figure"]
