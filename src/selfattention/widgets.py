"""The smoothing demo as a notebook widget: sliders for sigma, tau and N.

:func:`explore` returns ipywidgets sliders for the noise level ``sigma``, the
temperature ``tau`` (on a log scale) and the number of samples ``N``, a
"best tau" button that sets ``tau`` by leave-one-out cross-validation
(:func:`selfattention.choose_temperature`), and the book's smoothing figure
(:func:`selfattention.figures.smoothing.plot_smoothing`), redrawn on every
change. Defaults and slider ranges come from :mod:`selfattention.settings`,
so the widget starts on the very signal the chapters show.

While the book is built (the environment variable :data:`STATIC_ENV` is set,
which the book's ``live_code`` Sphinx extension does), :func:`explore`
returns the still figure instead: a static page never shows a slider that
moves but changes nothing, and stores no widget state.

Importing this module needs ipywidgets and matplotlib.
"""

from __future__ import annotations

import os

import ipywidgets as widgets
import numpy as np

from . import settings
from .figures.smoothing import plot_smoothing
from .head import gaussian_head
from .kernel import choose_temperature
from .signals import noisy_sine

#: Environment variable that makes :func:`explore` return a still figure.
STATIC_ENV = "SELFATTENTION_STATIC"
#: Candidate temperatures of the "best tau" button: the tau slider's range,
#: 8 per decade (coarser than the package default, so a click stays quick).
_DECADES = np.log10(settings.TEMPERATURE_RANGE)
BEST_TAU_CANDIDATES = np.logspace(*_DECADES, round(8 * (_DECADES[1] - _DECADES[0])) + 1)


def smoothing_figure(n, sigma, temperature, *, rng=settings.SEED):
    """The engineered head on the book's noisy sine, titled with its parameters.

    Parameters
    ----------
    n : int
        Number of samples.
    sigma : float
        Noise standard deviation.
    temperature : float
        The head's temperature ``tau``.
    rng : int or numpy.random.Generator
        Seed of the noise; the book's seed by default.

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy = noisy_sine(n, sigma, periods=settings.PERIODS, rng=rng)
    output, weights = gaussian_head(noisy, positions, temperature)  # (n,), (n, n)
    title = f"$\\sigma$ = {sigma:.3g}, $\\tau$ = {temperature:.3g}, N = {n}"
    return plot_smoothing(positions, clean, noisy, output, weights, title=title)


def best_temperature(n, sigma, *, rng=settings.SEED, candidates=BEST_TAU_CANDIDATES) -> float:
    """The leave-one-out choice of ``tau`` for the book's noisy sine with ``n``, ``sigma``."""
    positions, _, noisy = noisy_sine(n, sigma, periods=settings.PERIODS, rng=rng)
    best, _ = choose_temperature(noisy, positions, candidates)
    return best


class Explorer(widgets.VBox):
    """Sliders for sigma, tau (log scale) and N, a "best tau" button and the figure.

    The controls are attributes (``sigma``, ``tau``, ``n``, ``best``,
    ``message``, ``image``) so that code and tests can drive them.
    """

    def __init__(self, n, sigma, temperature, *, rng=settings.SEED):
        n, sigma, temperature = settings.check_in_ranges(n, sigma, temperature)
        # One fixed noise realisation for every redraw, even from a Generator.
        self.rng = rng if isinstance(rng, int) else int(np.random.default_rng(rng).integers(2**63))
        style = {"description_width": "9em"}
        self.sigma = widgets.FloatSlider(
            value=sigma, min=settings.SIGMA_RANGE[0], max=settings.SIGMA_RANGE[1], step=0.01,
            description="noise σ", continuous_update=False, style=style)
        self.tau = widgets.FloatLogSlider(
            value=temperature, base=10, min=np.log10(settings.TEMPERATURE_RANGE[0]),
            max=np.log10(settings.TEMPERATURE_RANGE[1]), step=0.05, readout_format=".3g",
            description="temperature τ", continuous_update=False, style=style)
        self.n = widgets.IntSlider(
            value=n, min=settings.N_RANGE[0], max=settings.N_RANGE[1], step=5,
            description="samples N", continuous_update=False, style=style)
        self.best = widgets.Button(description="best τ", tooltip="Set τ by leave-one-out cross-validation")
        self.message = widgets.Label()
        self.image = widgets.Image(format="png")
        for slider in (self.sigma, self.tau, self.n):
            slider.observe(self._redraw, names="value")
        self.best.on_click(self._choose_tau)
        controls = widgets.VBox([self.sigma, self.tau, self.n, widgets.HBox([self.best, self.message])])
        super().__init__([controls, self.image])
        self._redraw()

    def _redraw(self, _change=None):
        fig = smoothing_figure(self.n.value, self.sigma.value, self.tau.value, rng=self.rng)
        self.image.value = fig._repr_png_()

    def _choose_tau(self, _button=None):
        tau = best_temperature(self.n.value, self.sigma.value, rng=self.rng)
        self.message.value = f"leave-one-out: τ = {tau:.3g}"
        self.tau.value = tau  # redraws (once) when the value changes


def is_static() -> bool:
    """True while the book is being built (:data:`STATIC_ENV` set, not ``0``)."""
    return os.environ.get(STATIC_ENV, "") not in ("", "0")


def explore(*, n=settings.N, sigma=settings.SIGMA, temperature=settings.TEMPERATURE,
            rng=settings.SEED, static=None):
    """Explore the engineered head: sliders for sigma, tau and N, live in a kernel.

    Parameters
    ----------
    n, sigma, temperature : optional
        Starting values, within the slider ranges of :mod:`selfattention.settings`.
    rng : int or numpy.random.Generator
        Seed of the noise; the book's seed by default.
    static : bool, optional
        Return the still figure instead of the widget; by default, only while
        the book is built (see :func:`is_static`).

    Returns
    -------
    Explorer or matplotlib.figure.Figure
    """
    n, sigma, temperature = settings.check_in_ranges(n, sigma, temperature)
    if is_static() if static is None else static:
        return smoothing_figure(n, sigma, temperature, rng=rng)
    return Explorer(n, sigma, temperature, rng=rng)
