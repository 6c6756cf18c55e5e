"""The head's weights as a matrix of low rank (selfattention.low_rank, studies.low_rank)."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention import low_rank
from selfattention.random_features import gaussian_frequencies
from selfattention.studies.low_rank import rank_sweep

P = np.linspace(0.0, 1.0, 120)


def test_singular_values_are_those_of_the_heads_weights():
    _, weights = sa.gaussian_head(np.zeros_like(P), P, 0.01)
    values = low_rank.singular_values(P, 0.01)
    np.testing.assert_array_equal(values, np.linalg.svd(weights, compute_uv=False))
    assert (np.diff(values) <= 0).all()
    assert values[0] >= 1 - 1e-12  # rows sum to 1: A has the eigenvalue 1, and sv_1 bounds every eigenvalue


def test_numerical_rank_counts_above_a_relative_tolerance():
    assert low_rank.numerical_rank([10.0, 1.0, 1e-5, 1e-7], 1e-6) == 3
    assert low_rank.numerical_rank([1e-3, 1e-4, 1e-9, 1e-10], 1e-6) == 2  # relative, not absolute
    with pytest.raises(ValueError, match="tolerance"):
        low_rank.numerical_rank([1.0], 1.0)
    with pytest.raises(ValueError, match="values"):
        low_rank.numerical_rank([0.0, 0.0])


def test_feature_weights_have_rank_at_most_2d_and_rows_summing_to_one():
    for count in (2, 5, 9):
        omega = gaussian_frequencies(count, 0.01, rng=count)
        weights = low_rank.feature_weights(P, omega)
        assert np.linalg.matrix_rank(weights) <= 2 * count
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-9)


def test_no_matrix_of_rank_2d_comes_closer_than_the_next_singular_value():
    """Eckart and Young: the features' weights, of rank <= 2 D, differ from A by at least sv_{2D+1}."""
    _, exact = sa.gaussian_head(np.zeros_like(P), P, 0.01)
    values = low_rank.singular_values(P, 0.01)
    for count in (3, 6, 12):
        weights = low_rank.feature_weights(P, gaussian_frequencies(count, 0.01, rng=count))
        assert np.linalg.norm(weights - exact, 2) >= values[2 * count] * (1 - 1e-9)


def test_the_rank_falls_as_the_temperature_grows():
    sweep = rank_sweep(P, [0.002, 0.008, 0.032])
    assert (np.diff(sweep["ranks"]) < 0).all()
    assert -0.6 < sweep["slope"] < -0.3
    with pytest.raises(ValueError, match="temperatures"):
        rank_sweep(P, [0.01, 0.005])
