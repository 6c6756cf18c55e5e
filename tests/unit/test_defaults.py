"""The shared defaults: the demos' slider ranges reach both limits the book describes, at every N."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding, square_scores_error

import selfattention as sa
from selfattention import defaults


@pytest.mark.parametrize("n", defaults.N_RANGE)
def test_lowest_temperature_gives_the_identity(n):
    p = np.linspace(0, 1, n)
    _, weights = sa.gaussian_head(np.zeros(n), p, defaults.TEMPERATURE_RANGE[0])
    # Not rounding: the nearest neighbour's weight is exp(-(1 / (n - 1))**2 / tau), 3e-44 at n = 1000.
    np.testing.assert_allclose(weights, np.eye(n), rtol=0, atol=1e-40)


@pytest.mark.parametrize("n", defaults.N_RANGE)
def test_highest_temperature_gives_nearly_uniform_weights(n):
    p = np.linspace(0, 1, n)
    tau = defaults.TEMPERATURE_RANGE[1]
    _, weights = sa.gaussian_head(np.zeros(n), p, tau)
    # Within each row, the largest weight is at most exp(1 / tau) = 1.105 times the smallest: up to the scores'
    # gap (a ratio of two weights moves by expm1(2 gap)), and 7 roundings of the ratio (two exponentials, two
    # divisions by the row's sum, the quotient) and of exp(1 / tau).
    gap = square_scores_error(0.5, tau)
    bound = np.exp(1 / tau) * (1 + np.expm1(2 * gap) + rounding(7))
    assert np.max(weights.max(axis=1) / weights.min(axis=1)) <= bound


def test_defaults_lie_in_the_slider_ranges():
    assert defaults.check_in_ranges(defaults.N, defaults.SIGMA, defaults.TEMPERATURE) == (
        defaults.N, defaults.SIGMA, defaults.TEMPERATURE)


def test_the_ranges_ends_are_inside_and_beyond_them_is_not():
    lows = (defaults.N_RANGE[0], defaults.SIGMA_RANGE[0], defaults.TEMPERATURE_RANGE[0])
    highs = (defaults.N_RANGE[1], defaults.SIGMA_RANGE[1], defaults.TEMPERATURE_RANGE[1])
    assert defaults.check_in_ranges(*lows) == lows and defaults.check_in_ranges(*highs) == highs
    for k, name in enumerate(("n", "sigma", "temperature")):
        beyond = list(highs)
        beyond[k] = highs[k] + (1 if k == 0 else highs[k])
        with pytest.raises(ValueError, match=rf"^{name} must lie in the slider range"):
            defaults.check_in_ranges(*beyond)


def test_no_row_of_the_layer_explorer_underflows():
    """attention_explorer.js shifts every row of a head by the largest score of the whole band.

    A row whose best key lies past an end then has a largest entry of at least
    exp(-delta**2 / tau); the sliders' ranges keep it far above the smallest
    normal double, so the row, normalised by its sum, is the package's row.
    """
    largest_exponent = defaults.OFFSET_RANGE[1] ** 2 / defaults.LAYER_TEMPERATURE_RANGE[0]
    assert np.exp(-largest_exponent) > 1e-100
