"""Figures of the book, one module per chapter.

Every function here takes its data as explicit arguments and returns a
:class:`matplotlib.figure.Figure` built without pyplot, so drawing a figure
never touches global matplotlib state (no rcParams changes, no open pyplot
figures for a notebook to display twice).
"""

from ._style import BookFigure, new_figure

__all__ = ["BookFigure", "new_figure"]
