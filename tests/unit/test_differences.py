"""Derivatives of any order from offset heads, and their noise (selfattention.studies.differences).

The references are written here from the definitions: a central difference of order k at the spacing s
has the coefficients (-1)**(k - m) comb(k, m) / s**k at the offsets (m - k/2) s; the noise of a weighted
sum of one head's rows at separate places is the head's noise times the root of the sum of the squared
coefficients; and the derivative of order k of a Gaussian of standard deviation h has the squared
integral (2k - 1)!! / (2**(k + 1) sqrt(pi) h**(2k + 1)).
"""

from __future__ import annotations

from math import comb, prod

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tolerances import rounding

import selfattention as sa
from selfattention.multihead import curvature_layer, derivative_layer, layer_weights, signal_tokens
from selfattention.studies import derivative as dv
from selfattention.studies import differences as df

N, SIGMA = 201, 0.3
P = np.linspace(0.0, 1.0, N)
TAU = 4e-4  # h = 0.0141, 2.8 steps of the grid: sums over the grid are the integrals but for exp(-2 pi**2 2.8**2)


def one_head_noise(tau: float) -> float:
    """sigma / sqrt(N_eff) of the middle token of one head without offset."""
    return SIGMA * float(np.sqrt(np.sum(sa.gaussian_head(np.zeros(N), P, tau)[1][N // 2] ** 2)))


def test_orders_one_and_two_are_the_derivative_and_the_curvature_layers():
    X = signal_tokens(np.zeros(N), P)
    # The same two or three rows, weighted by the same numbers (two terms added in either order: exactly).
    np.testing.assert_array_equal(layer_weights(X, *df.difference_layer(1, 0.2, TAU)),
                                  layer_weights(X, *derivative_layer(0.1, TAU)))
    np.testing.assert_array_equal(layer_weights(X, *df.difference_layer(2, 0.1, TAU)),
                                  layer_weights(X, *curvature_layer(0.1, TAU)))
    np.testing.assert_array_equal(df.difference_noise(P, 1, [0.2], TAU, SIGMA), dv.noise_std(P, [0.1], TAU, SIGMA))


@given(st.integers(1, df.MAX_ORDER), st.floats(1e-3, 10.0))
def test_the_coefficients_are_the_binomials_with_alternating_signs_over_the_spacing_to_the_order(order, spacing):
    heads, W_O = df.difference_layer(order, spacing, TAU)
    offsets = [head.W_Q[3, 0] / np.sqrt(2) for head in heads]  # the query's delta rides on the constant feature
    np.testing.assert_allclose(offsets, [(m - order / 2) * spacing for m in range(order + 1)], rtol=1e-15, atol=0)
    expected = [(-1) ** (order - m) * comb(order, m) / spacing**order for m in range(order + 1)]
    # Divided by the spacing once per order: one rounding each.
    np.testing.assert_allclose(W_O[:, 0], expected, rtol=rounding(order + 1), atol=0)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_a_polynomial_of_that_order_gets_its_derivative_in_the_interior(order):
    """The layer is exact on a polynomial of its order where its bands lie inside the signal."""
    spacing = 0.05
    X = signal_tokens(np.zeros(N), P)
    B = layer_weights(X, *df.difference_layer(order, spacing, TAU))  # (N, N)
    inside = np.abs(P - 0.5) <= 0.1  # the outer bands, 0.1 from the query at most, 21 h or more from either end
    # The order-th derivative of p**order / order! is 1; weights of size up to comb(order, order // 2) / spacing**order
    # times values below 1 lose a few eps of that size.
    scale = comb(order, order // 2) / spacing**order
    np.testing.assert_allclose((B @ (P**order / prod(range(1, order + 1))))[inside], 1.0, rtol=0,
                               atol=1e3 * np.finfo(float).eps * scale)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_above_the_bandwidth_each_order_costs_one_more_power_of_one_over_the_spacing(order):
    """Spacings of 8 to 16 bandwidths: separate samples; noise = one head's * sqrt(comb(2 order, order)) / s**order."""
    h = np.sqrt(TAU / 2)
    spacings = np.array([8.0, 11.0, 16.0]) * h
    noise = df.difference_noise(P, order, spacings, TAU, SIGMA)
    slope = np.polyfit(np.log(spacings), np.log(noise), 1)[0]
    # Bands 8 h apart share weights of exp(-16) of their peak: the power law holds to far below 1e-3.
    assert slope == pytest.approx(-order, abs=1e-3)
    separated = one_head_noise(TAU) * np.sqrt(comb(2 * order, order)) / spacings**order
    np.testing.assert_allclose(noise, separated, rtol=1e-4)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_below_the_bandwidth_the_noise_levels_off_and_each_order_costs_one_more_power_of_one_over_h(order):
    """At a fiftieth of a bandwidth the layer is the order-th derivative of one head's band, to (s / h)**2."""
    temperatures = np.array([4e-4, 1e-3, 2.5e-3])
    hs = np.sqrt(temperatures / 2)
    flat = np.array([df.difference_noise(P, order, [h / 50], tau, SIGMA)[0] for h, tau in zip(hs, temperatures,
                                                                                               strict=True)])
    limit = np.array([df.small_spacing_noise(N, order, tau, SIGMA) for tau in temperatures])
    # The limit drops terms of (s / h)**2 = 4e-4 relative (times a constant below 2 for these orders); the grid's
    # sums are its integrals but for exp(-2 pi**2 2.8**2) at the narrowest band; the middle token is 14 h or more
    # from either end.
    np.testing.assert_allclose(flat, limit, rtol=1e-3)
    assert np.polyfit(np.log(hs), np.log(flat), 1)[0] == pytest.approx(-(order + 0.5), abs=0.01)
    higher = np.array([df.difference_noise(P, order + 1, [h / 50], tau, SIGMA)[0] for h, tau in zip(hs, temperatures,
                                                                                                     strict=True)])
    # The ratio of two consecutive orders: sqrt((2 order + 1) / 2) / h, one more power of 1 / h.
    np.testing.assert_allclose(higher / flat * hs, np.sqrt((2 * order + 1) / 2), rtol=2e-3)


def test_the_small_spacing_limit_of_order_one_is_the_derivative_layers():
    for tau in (4e-4, 1e-3, 0.004):
        assert df.small_spacing_noise(N, 1, tau, SIGMA) == pytest.approx(
            dv.leading_order_noise(N, [1e-9], tau, SIGMA)[0], rel=1e-12)
    assert df.small_spacing_noise(N, 2, 0.004, 0.0) == 0.0


def test_the_noise_is_sigma_times_the_root_of_the_squared_weights():
    X = signal_tokens(np.zeros(N), P)
    B = layer_weights(X, *df.difference_layer(3, 0.07, TAU))
    # The same row, its N squares summed in another order at most: rounding(2 N) relative, and the root halves it.
    assert df.difference_noise(P, 3, [0.07], TAU, SIGMA)[0] == pytest.approx(SIGMA * np.sqrt(np.sum(B[N // 2] ** 2)),
                                                                            rel=rounding(2 * N + 2))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: df.difference_layer(0, 0.1, TAU), "order"),
    (lambda: df.difference_layer(df.MAX_ORDER + 1, 0.1, TAU), "order"),
    (lambda: df.difference_layer(2, -0.1, TAU), "spacing"),
    (lambda: df.difference_layer(8, 1e-300, TAU), "spacing"),
    (lambda: df.difference_layer(8, 1e300, TAU), "spacing"),
    (lambda: df.difference_noise(P, 2, [0.1, 0.0], TAU, SIGMA), "spacings"),
    (lambda: df.difference_noise(P, 2, [0.1], TAU, -1.0), "sigma"),
    (lambda: df.small_spacing_noise(1, 2, TAU, SIGMA), "n"),
    (lambda: df.small_spacing_noise(N, 8, 1e-300, 1e300), "sigma and temperature"),
])
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
