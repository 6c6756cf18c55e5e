"""The derivative from two heads at +delta and -delta (selfattention.studies.derivative)."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import assert_close, mse_atol, rounding

import selfattention as sa
from selfattention.studies import derivative as dv
from selfattention.studies.bias_variance import region_mask


def test_the_weights_are_the_heads_difference_over_two_delta():
    p = np.linspace(0.0, 1.0, 40)
    _, ahead = sa.gaussian_head(np.zeros(40), p, 0.004, offset=0.1)
    _, behind = sa.gaussian_head(np.zeros(40), p, 0.004, offset=-0.1)
    # B is W_O[1] A^(1) + W_O[2] A^(2), summed in another order: rounding of O(eps / delta).
    np.testing.assert_allclose(dv.derivative_weights(p, 0.1, 0.004), (ahead - behind) / 0.2, rtol=0, atol=1e-13)


def test_a_straight_line_gets_its_slope_in_the_interior():
    """The layer is exact on a line wherever both bands lie inside the interval (a symmetric difference)."""
    p = np.linspace(0.0, 1.0, 201)
    B = dv.derivative_weights(p, 0.05, 0.001)  # h = 0.022: the bands reach 0.05 + 8 h < 0.25 from the query
    inside = region_mask(p, "interior")
    # The weights' tails beyond 8 h are below exp(-32); what is left is rounding, O(eps / delta).
    np.testing.assert_allclose((B @ (3 * p - 1))[inside], 3.0, rtol=0, atol=1e-11)


def test_the_risk_is_the_exact_error_of_the_layer():
    n, sigma, delta, tau = 60, 0.4, 0.08, 0.003
    risk = dv.derivative_risk(n, sigma, [delta], [tau], "interior")
    p, f, _ = sa.noisy_sine(n, 0.0)
    B = dv.derivative_weights(p, delta, tau)
    inside = region_mask(p, "interior")
    z = np.random.default_rng(5).standard_normal((20000, n))
    errors = (f + sigma * z) @ B.T - dv.true_derivative(p)  # (draws, n)
    mse = (errors[:, inside] ** 2).mean()
    # 20000 draws estimate a mean of squares to about sqrt(2 / 20000) = 1 %, relative: 5 % is 5 of those.
    assert mse == pytest.approx(float(risk.mse[0, 0]), rel=0.05)
    assert risk.bias2[0, 0] == pytest.approx(((B @ f - dv.true_derivative(p))[inside] ** 2).mean(), rel=1e-12)



def test_the_risk_on_a_grid_is_each_pairs_layer():
    n, sigma, offsets, taus = 40, 0.3, [0.05, 0.12], [0.002, 0.005, 0.02]
    risk = dv.derivative_risk(n, sigma, offsets, taus, "whole")
    p, f, _ = sa.noisy_sine(n, 0.0)
    for a, delta in enumerate(offsets):
        for b, tau in enumerate(taus):
            B = dv.derivative_weights(p, delta, tau)  # (n, n): its rows' sizes add up to at most 1 / delta
            residual = B @ f - dv.true_derivative(p)
            # The same weights; B f as a product of a stack of matrices, against one: 2 n roundings on 1 / delta.
            assert_close(risk.bias2[a, b], (residual**2).mean(),
                         mse_atol(n, np.abs(residual).max() + 1, rounding(2 * n, 1 / delta)))
            assert_close(risk.variance[a, b], sigma**2 * (B**2).sum(axis=1).mean(),
                         rounding(2 * n + 2, sigma**2 / delta**2))

def test_the_best_pair_is_the_least_error_on_the_grid():
    risk = dv.derivative_risk(50, 0.3, [0.05, 0.1, 0.15], [0.002, 0.004, 0.008])
    a, b = np.unravel_index(np.argmin(risk.mse), risk.mse.shape)
    assert risk.best() == (risk.offsets[a], risk.temperatures[b])


def test_the_noise_formula_matches_the_middle_token_and_has_two_regimes():
    p = np.linspace(0.0, 1.0, 100)
    offsets = np.geomspace(0.005, 0.2, 12)
    measured = dv.noise_std(p, offsets, 0.004, 0.3)
    formula = dv.leading_order_noise(100, offsets, 0.004, 0.3)
    # Sums of Gaussians over a grid 4.4 steps per h equal their integrals to far below 1e-6.
    np.testing.assert_allclose(measured, formula, rtol=1e-6)
    h = np.sqrt(0.004 / 2)
    small = dv.leading_order_noise(100, [1e-6], 0.004, 0.3)[0]
    assert small == pytest.approx(0.3 / np.sqrt(4 * np.sqrt(np.pi) * 99 * h**3), rel=1e-6)  # the 1/h regime
    large = dv.leading_order_noise(100, [0.2, 0.4], 0.004, 0.3)
    assert large[0] / large[1] == pytest.approx(2.0, rel=1e-6)  # the 1/delta regime


def test_the_best_offset_ratio_minimises_the_leading_order_error():
    c = dv.best_offset_ratio()
    cost = lambda x: (0.5 + x * x / 6) ** 6 * (-np.expm1(-x * x) / (x * x)) ** 4  # noqa: E731
    assert cost(c) < cost(c * 0.98) and cost(c) < cost(c * 1.02)
    assert 2.0 < c < 3.0


def test_true_derivative_is_the_sines():
    p = np.linspace(0, 1, 7)
    np.testing.assert_allclose(dv.true_derivative(p, 2.0), 4 * np.pi * np.cos(4 * np.pi * p), rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dv.derivative_weights(np.linspace(0, 1, 5), 0.0, 0.1), "offset must be positive"),
        (lambda: dv.derivative_risk(10, 0.3, [0.1, -0.1], [0.01]), "offsets must be a non-empty array of positive"),
        (lambda: dv.derivative_risk(10, 0.3, [0.1], [0.0]), "temperatures must all be positive"),
        (lambda: dv.derivative_risk(10, 0.3, [0.1], [0.01], "middle"), "region must be one of"),
        (lambda: dv.noise_std(np.linspace(0, 1, 5), [np.nan], 0.1, 0.3), "offsets contains NaN"),
        (lambda: dv.leading_order_noise(10, [0.0], 0.1, 0.3), "offsets must be a non-empty array of positive"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
