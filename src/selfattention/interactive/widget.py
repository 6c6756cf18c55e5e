"""The smoothing demo as a notebook widget: sliders for sigma, tau and N.

:func:`explore` returns a :class:`SmoothingWidget`: ipywidgets sliders for
the noise level ``sigma``, the temperature ``tau`` (on a log scale) and the
number of samples ``N``, a "best tau" button that sets ``tau`` by
leave-one-out cross-validation (:func:`leave_one_out_temperature`), and the
book's smoothing figure (:func:`smoothing_figure`), redrawn on every change.
Defaults and slider ranges come from :mod:`selfattention.defaults`, so the
widget starts on the very signal the chapters show.

A widget needs a live kernel. The static book does not execute the
``explore()`` cell (it is tagged ``skip-execution``); its in-page explorer
(``_ext/attention_explorer``), just above the cell, shows the same head
live with no kernel.

Importing this module needs ipywidgets and matplotlib.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import traitlets

from .. import defaults
from .._validation import as_seed
from ..figures.smoothing import plot_smoothing
from ..kernel import choose_temperature
from ..signals import noisy_sine
from ..studies.noise_and_samples import smoothed_sine


def smoothing_figure(n, sigma, temperature, *, rng=defaults.SEED):
    """The engineered head on the book's noisy sine, titled with its parameters.

    Parameters
    ----------
    n, sigma, temperature
        As for :func:`~selfattention.studies.noise_and_samples.smoothed_sine`,
        within the slider ranges of :mod:`selfattention.defaults`.
    rng : int or numpy.random.Generator
        Seed of the noise; the book's seed by default.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n, sigma, temperature = defaults.check_in_ranges(n, sigma, temperature)
    head = smoothed_sine(n, sigma, temperature, periods=defaults.PERIODS, rng=rng)
    title = f"$\\sigma$ = {sigma:.3g}, $\\tau$ = {temperature:.3g}, N = {n}"
    return plot_smoothing(head.positions, head.clean, head.noisy, head.output, head.weights, title=title)


def leave_one_out_temperature(n, sigma, *, rng=defaults.SEED, candidates=None) -> float:
    """The leave-one-out choice of ``tau`` for the book's noisy sine with ``n``, ``sigma``.

    Parameters
    ----------
    n : int
    sigma : float
        Both within the slider ranges of :mod:`selfattention.defaults`.
    rng : int or numpy.random.Generator
        Seed of the noise; the book's seed by default.
    candidates : array_like, shape (m,), optional
        The temperatures tried; when omitted,
        :data:`~selfattention.kernel.DEFAULT_CANDIDATES`, the grid of the
        in-page explorer's button, so that both pick the same ``tau``.

    Returns
    -------
    float
        The candidate :func:`~selfattention.choose_temperature` picks.
    """
    n, sigma = defaults.check_sample_ranges(n, sigma)
    positions, _, noisy = noisy_sine(n, sigma, periods=defaults.PERIODS, rng=rng)
    best, _ = choose_temperature(noisy, positions, candidates)
    return best


class SmoothingWidget(widgets.VBox):
    """Sliders for sigma, tau (log scale) and N, a "best tau" button and the figure.

    The controls are attributes (``sigma``, ``tau``, ``n``, ``best``,
    ``message``, ``image``) so that code and tests can drive them.
    """

    def __init__(self, n, sigma, temperature, *, rng=defaults.SEED):
        n, sigma, temperature = defaults.check_in_ranges(n, sigma, temperature)
        self.rng = as_seed(rng)  # one fixed noise realisation for every redraw
        self.sigma, self.tau, self.n = _sliders(n, sigma, temperature)
        self.best = widgets.Button(description="best τ", tooltip="Set τ by leave-one-out cross-validation")
        self.message = widgets.Label()
        self.image = widgets.Image(format="png", layout={"width": "100%", "max_width": SLIDER_MAX_WIDTH})
        for slider in (self.sigma, self.tau, self.n):
            slider.observe(self._redraw, names="value")
        self.best.on_click(self._choose_tau)
        controls = widgets.VBox([self.sigma, self.tau, self.n, widgets.HBox([self.best, self.message])],
                                layout={"width": "100%"})
        super().__init__([controls, self.image], layout={"width": "100%"})
        self._redraw()

    def _redraw(self, _change=None):
        fig = smoothing_figure(self.n.value, self.sigma.value, self.tau.value, rng=self.rng)
        self.image.value = fig._repr_png_()

    def _choose_tau(self, _button=None):
        tau = leave_one_out_temperature(self.n.value, self.sigma.value, rng=self.rng)
        self.message.value = f"leave-one-out: τ = {tau:.3g}"
        self.tau.value = tau  # redraws (once) when the value changes


class SliderValueError(traitlets.TraitError, ValueError):
    """A value a slider refuses; a ``ValueError`` as well as traitlets' ``TraitError``."""


class _RefusesNaN:
    """A float slider that refuses NaN (ipywidgets clamps other values into the range, but keeps NaN)."""

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        if np.isnan(proposal["value"]):
            raise SliderValueError(f"{self.name} must be a number, got {proposal['value']!r}")
        return super()._validate_value(proposal)


class _FloatSlider(_RefusesNaN, widgets.FloatSlider):
    name = "sigma"


class _FloatLogSlider(_RefusesNaN, widgets.FloatLogSlider):
    name = "tau"


#: The sliders' label column and their widest extent: a label, a track and a readout on one line.
SLIDER_LABEL_WIDTH = "7.5em"
SLIDER_MAX_WIDTH = "40em"


def _sliders(n, sigma, temperature):
    """The sigma, tau (log scale) and N sliders, over the ranges of :mod:`selfattention.defaults`."""
    # ipywidgets' default slider is 300 px including its label and readout, which left a track of
    # about 85 px: each slider takes the width of the output area (at most SLIDER_MAX_WIDTH).
    style = {"description_width": SLIDER_LABEL_WIDTH}
    layout = {"width": "100%", "max_width": SLIDER_MAX_WIDTH}
    sigma_slider = _FloatSlider(
        value=sigma, min=defaults.SIGMA_RANGE[0], max=defaults.SIGMA_RANGE[1], step=0.01,
        description="noise σ", continuous_update=False, style=style, layout=layout)
    tau_slider = _FloatLogSlider(
        value=temperature, base=10, min=np.log10(defaults.TEMPERATURE_RANGE[0]),
        max=np.log10(defaults.TEMPERATURE_RANGE[1]), step=0.05, readout_format=".3g",
        description="temperature τ", continuous_update=False, style=style, layout=layout)
    n_slider = widgets.IntSlider(
        value=n, min=defaults.N_RANGE[0], max=defaults.N_RANGE[1], step=5,
        description="samples N", continuous_update=False, style=style, layout=layout)
    return sigma_slider, tau_slider, n_slider


def explore(*, n=defaults.N, sigma=defaults.SIGMA, temperature=defaults.TEMPERATURE, rng=defaults.SEED):
    """Explore the engineered head: sliders for sigma, tau and N, live in a kernel.

    Parameters
    ----------
    n, sigma, temperature : optional
        Starting values, within the slider ranges of :mod:`selfattention.defaults`.
    rng : int or numpy.random.Generator
        Seed of the noise; the book's seed by default.

    Returns
    -------
    SmoothingWidget
    """
    return SmoothingWidget(n, sigma, temperature, rng=rng)
