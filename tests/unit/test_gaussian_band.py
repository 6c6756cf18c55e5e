"""The Gaussian band: the head's weights depend on positions only, and each row is
the Gaussian of standard deviation sqrt(tau / 2) the formula predicts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from strategies import signals_on_positions, temperatures
from tolerances import TINY, rounding, softmax_rtol, square_gap

import selfattention as sa
from selfattention.kernel import temperature_to_bandwidth
from selfattention.studies import gaussian_band


@given(signals_on_positions(), temperatures)
def test_band_weights_are_the_heads_weights_whatever_the_signal(sig_pos, tau):
    signal, p = sig_pos
    _, weights = sa.gaussian_head(signal, p, tau)
    np.testing.assert_array_equal(gaussian_band.band_weights(p, tau), weights)  # the signal is multiplied by 0


@pytest.mark.parametrize("tau", [0.001, 0.005, 0.02])
def test_each_row_is_the_predicted_gaussian(tau):
    positions = np.linspace(0.0, 1.0, 100)
    measured, predicted = gaussian_band.attention_row(positions, tau, 50)
    gap = square_gap(0.5, tau)  # the head's expanded square, the formula's
    np.testing.assert_allclose(measured, predicted, rtol=softmax_rtol(100, gap), atol=TINY)


@pytest.mark.parametrize("tau", [0.0005, 0.005, 0.02])
def test_row_width_is_sqrt_tau_over_2(tau):
    positions = np.linspace(0.0, 1.0, 1001)  # dense, so the sum approximates the integral
    measured, _ = gaussian_band.attention_row(positions, tau, 500)
    sd = np.sqrt(np.sum(measured * (positions - positions[500]) ** 2))
    # Not rounding: a sum over a grid of spacing 1e-3 for an integral over a Gaussian at least 16 spacings wide.
    assert sd == pytest.approx(temperature_to_bandwidth(tau), rel=1e-3)


def test_row_profiles_stack_the_rows_and_their_widths():
    positions, taus = np.linspace(0.0, 1.0, 60), [0.001, 0.004, 0.016]
    measured, predicted, widths = gaussian_band.row_profiles(positions, taus, 30)
    assert measured.shape == predicted.shape == (3, 60)
    for k, tau in enumerate(taus):
        np.testing.assert_array_equal(np.stack(gaussian_band.attention_row(positions, tau, 30)),
                                      [measured[k], predicted[k]])
    # Four times the temperature, twice the width: 0.004 is 4 x 0.001 to an ulp; the roots and the quotient round.
    np.testing.assert_allclose(widths[1:] / widths[:-1], 2.0, rtol=rounding(4), atol=0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gaussian_band.attention_row([0.0, 1.0], 0.01, 2), "row must be below the number of positions"),
        (lambda: gaussian_band.attention_row([0.0, 1.0], 0.01, -1), "row must be at least 0"),
        (lambda: gaussian_band.attention_row([0.0, 1.0], -0.01, 0), "temperature must not be negative"),
        (lambda: gaussian_band.band_weights([[0.0, 1.0]], 0.01), "positions must be 1-dimensional"),
        (lambda: gaussian_band.row_profiles([0.0, 1.0], [], 0), "temperatures must hold at least one"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
