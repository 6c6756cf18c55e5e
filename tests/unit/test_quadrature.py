"""Bumps on a grid and keys of several dimensions (selfattention.quadrature, studies.quadrature)."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import EPS

import selfattention as sa
from selfattention import quadrature
from selfattention.positive_features import MARGIN, positive_feature_head, spread_centres
from selfattention.random_features import random_feature_head
from selfattention.studies import quadrature as study

P = np.linspace(0.0, 1.0, 40)
S = np.sin(2 * np.pi * P) + 0.1 * np.cos(7 * P)


def test_grid_centres_are_equal_steps_over_the_spread_centres_interval():
    tau = 0.01
    c = quadrature.grid_centres(11, P, tau)
    low, high = -MARGIN * np.sqrt(tau), 1 + MARGIN * np.sqrt(tau)
    assert c[0] == pytest.approx(low, abs=4 * EPS) and c[-1] == pytest.approx(high, abs=4 * EPS)
    np.testing.assert_allclose(np.diff(c), (high - low) / 10, rtol=0, atol=8 * EPS)  # a few roundings of 1.6
    drawn = spread_centres(1000, P, tau, rng=1)
    assert low <= drawn.min() and drawn.max() <= high  # the interval spread_centres draws from
    assert quadrature.grid_centres(1, P, tau) == pytest.approx([low], abs=4 * EPS)


def test_the_trapezoid_rate_is_the_rules_error_on_a_gaussian_of_variance_tau_over_8():
    """At a node the aliasing terms add up: the relative error is the leading term, to its next, exp(-4x) of it."""
    tau = 0.01
    for count in (20, 30, 40):
        c = quadrature.grid_centres(count, P, tau)
        h, s2 = c[1] - c[0], tau / 8
        on_node = c[count // 2]
        rule = h * np.exp(-((c - on_node) ** 2) / (2 * s2)).sum()
        relative = rule / np.sqrt(2 * np.pi * s2) - 1
        rate = quadrature.trapezoid_rate(count, P, tau)
        assert 1e-14 < rate < 0.1
        assert relative == pytest.approx(rate, rel=2 * rate**3 + 1e-9)  # next term: 2 exp(-4 x) = rate**4 / 8


def test_the_product_of_two_bumps_over_their_centre_is_a_gaussian_of_variance_tau_over_8():
    import sympy as sp

    from selfattention import spectrum

    x, y, c, tau = spectrum.x, spectrum.y, spectrum.centre, spectrum.tau
    product = sp.exp(-2 * (x - c) ** 2 / tau - 2 * (y - c) ** 2 / tau)
    gaussian = sp.exp(-((c - (x + y) / 2) ** 2) / (2 * tau / 8))
    ratio = sp.simplify(product / gaussian)
    assert not ratio.has(c)  # the rest depends on p_i, p_j only: a Gaussian in the centre of variance tau / 8


def test_box_grid_is_every_combination_of_the_axes_grids():
    keys = np.array([[0.0, 1.0, 2.0], [1.0, 3.0, 2.5]])
    grid = quadrature.box_grid(3, keys, 0.04)
    assert grid.shape == (27, 3)
    for k in range(3):
        np.testing.assert_array_equal(np.unique(grid[:, k]), quadrature.grid_centres(3, keys[:, k], 0.04))
    assert len({tuple(row) for row in grid}) == 27


def test_box_uniform_lies_in_the_box_and_follows_its_rng():
    keys = np.array([[0.0, 1.0], [1.0, 3.0]])
    drawn = quadrature.box_uniform(500, keys, 0.04, rng=5)
    ends = np.array([quadrature.grid_centres(2, keys[:, k], 0.04) for k in range(2)])
    assert (drawn >= ends[:, 0]).all() and (drawn <= ends[:, 1]).all()
    np.testing.assert_array_equal(drawn, quadrature.box_uniform(500, keys, 0.04, rng=5))


def test_normal_frequencies_have_variance_two_over_tau():
    """40,000 draws: the sample variance's standard error is sqrt(2 / n) of it, 0.7 %; 5 of them allowed."""
    omega = quadrature.normal_frequencies(5000, 8, 0.1, rng=3)
    assert omega.shape == (5000, 8)
    assert omega.var() == pytest.approx(2 / 0.1, rel=5 * np.sqrt(2 / omega.size))


def test_in_one_dimension_the_heads_are_the_packages_heads():
    """Same sums in another order: off by rounding on outputs of size ~1 (n + D terms a row)."""
    keys = P[:, None]
    exact, _ = sa.gaussian_head(S, P, 0.01)
    np.testing.assert_allclose(quadrature.kernel_head(S, keys, 0.01), exact, rtol=0, atol=1e-12)
    centres = spread_centres(30, P, 0.01, rng=2)
    np.testing.assert_allclose(quadrature.bump_head(S, keys, centres[:, None], 0.01),
                               positive_feature_head(S, P, 0.01, centres), rtol=0, atol=1e-12)
    omega = np.abs(np.random.default_rng(4).standard_normal(200)) * np.sqrt(2 / 0.01)
    ours = quadrature.cosine_head(S, keys, omega[:, None])
    theirs, denominators = random_feature_head(S, P, omega)
    # the package centres the positions: the same kernel, rounded differently; the ratio's
    # error is the sums' rounding (about n D EPS) over the smallest denominator
    atol = 1e3 * P.size * omega.size * EPS / np.abs(denominators).min()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=atol)


def test_far_bumps_are_computed_from_their_logarithms_and_underflowing_ones_refused_by_name():
    """A lone bump far away still weighs every key (its logs are finite); one whose logs are -inf is refused."""
    far = quadrature.bump_head(S, P[:, None], np.array([[30.0]]), 0.01)  # exp(-2 * 900 / 0.01) underflows
    assert np.isfinite(far).all()
    with pytest.raises(ValueError, match="centres"):
        quadrature.bump_head(S, P[:, None], np.array([[1e10]]), 1e-300)


def test_the_mean_squared_distance_of_uniform_keys_is_d_over_6():
    """E (u - v)**2 = 1/6 an axis for u, v uniform on [0, 1]; 200,000 pairs: standard error ~0.3 % of it."""
    rng = np.random.default_rng(7)
    d = 8
    u, v = rng.uniform(size=(2, 200_000, d))
    squares = ((u - v) ** 2).sum(axis=1)
    assert squares.mean() == pytest.approx(d / 6, rel=5 * squares.std() / squares.mean() / np.sqrt(squares.size))


def test_per_axis_is_the_largest_whole_root():
    for count, d, m in ((256, 8, 2), (6560, 8, 2), (6561, 8, 3), (1024, 4, 5), (64, 1, 64), (7, 3, 1)):
        assert study._per_axis(count, d) == m
    assert study._per_axis(2**53 + 1, 1) == 2**53 + 1  # the float root rounds it down to 2**53: counted back up


def test_dimension_errors_are_reproducible_and_shaped():
    first = study.dimension_errors([1, 2], [4, 9], draws=2, n=20, rng=3)
    again = study.dimension_errors([1, 2], [4, 9], draws=2, n=20, rng=3)
    for d in (1, 2):
        for key in ("grid", "bumps", "cosines"):
            np.testing.assert_array_equal(first[d][key], again[d][key])
        assert first[d]["bumps"].shape == (2, 2)
    np.testing.assert_array_equal(first[2]["grid_sizes"], [4, 9])


def test_grid_errors_compare_the_grid_with_spread_centres():
    result = study.grid_errors(S, P, 0.01, [8, 32], draws=3, rng=1)
    assert result["random"].shape == (3, 2) and result["grid"].shape == (2,)
    assert result["grid"][1] < 1e-3 < np.median(result["random"][:, 1])


def test_orthogonal_frequencies_are_orthogonal_in_blocks_and_normal_one_by_one():
    """Each row is a normal vector of variance 2 / tau a coordinate: 40,000 coordinates, five standard errors."""
    omega = quadrature.orthogonal_frequencies(5000, 8, 0.1, rng=3)
    assert omega.shape == (5000, 8)
    block = omega[:8]
    gram = block @ block.T
    off = gram - np.diag(np.diag(gram))
    assert np.abs(off).max() < 1e-12 * np.diag(gram).max()  # orthogonal to rounding
    assert omega.var() == pytest.approx(2 / 0.1, rel=5 * np.sqrt(2 / omega.size))
    assert quadrature.orthogonal_frequencies(5, 3, 0.1, rng=1).shape == (5, 3)  # the last block cut


def test_a_bump_and_a_uniform_centre_factor_over_the_axes():
    """Two dimensions: the relative variance of a product is the one-dimensional one's (1 + v)**2 - 1.

    Ten batches of 100,000 centres; five standard errors of the batches' mean.
    """
    tau, ell = 0.05, 1.0
    rng = np.random.default_rng(9)
    ki, kj = np.array([0.45, 0.5]), np.array([0.55, 0.5])
    values = []
    for _ in range(10):
        c = rng.uniform(0, ell, size=(100_000, 2))
        products = np.exp(-2 * ((ki - c) ** 2).sum(axis=1) / tau - 2 * ((kj - c) ** 2).sum(axis=1) / tau)
        values.append(products.var() / products.mean() ** 2)
    one = np.sqrt(2 / np.pi) * ell / np.sqrt(tau) - 1  # the pair lies far from the ends: no tails cut
    values = np.array(values)
    assert values.mean() == pytest.approx((1 + one) ** 2 - 1, abs=5 * values.std(ddof=1) / np.sqrt(values.size))


def test_spread_product_variance_needs_a_pair():
    with pytest.raises(ValueError, match="pair"):
        study.spread_product_variance(P, 0.01, [0.1, 0.2, 0.3], 10, rng=1)


def test_a_random_phase_adds_one_half_even_at_the_origin():
    """At p_i = p_j = 0 the pair's product is 1 always; the phase's, 2 cos(phi)**2, has variance 1/2.

    200,000 draws: the sample variance's standard error is below sqrt(E X**4 / n) <= 4 / sqrt(n); five of them.
    """
    found = study.phase_product_variance([0.0, 0.0], 0.01, 200_000, rng=2)
    assert found["pair"] == 0.0
    assert found["phase"] == pytest.approx(0.5, abs=5 * 4 / np.sqrt(200_000))
    assert found["phase_mean"] == pytest.approx(1.0, abs=5 * 2 / np.sqrt(200_000))
