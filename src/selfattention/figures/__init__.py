"""The book's figures: plotting only, with the data passed in.

A module named like a study of :mod:`selfattention.studies` draws that
study's results (``figures.dk_scaling`` draws ``studies.dk_scaling``);
:mod:`.diagrams` draws the head's architecture, :mod:`.smoothing` the noisy
sine and the head smoothing it, :mod:`.positional` the heads of
:mod:`selfattention.positional` side by side, and :mod:`.panels` holds the signal and
attention-matrix panels the figures share. Every function takes its data as
explicit arguments and returns a :class:`matplotlib.figure.Figure`
built without pyplot, so drawing a figure leaves global matplotlib state as
it was (rcParams restored after the figure's style, no open pyplot figures
for a notebook to display twice). How a figure is drawn so that it reads on
a phone and a desktop, and is sharp on both: :mod:`._style`'s docstring.
"""

from ._style import BookFigure, book_figure, new_figure, new_panels

__all__ = ["BookFigure", "book_figure", "new_figure", "new_panels"]
