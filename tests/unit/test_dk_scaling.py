"""The sqrt(d_k) study: spread of dot products and softmax sharpness."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention.studies import dk_scaling


@pytest.mark.parametrize("d_k", [1, 4, 64, 400])
def test_dot_product_std_is_sqrt_d_k(d_k):
    std = dk_scaling.dot_product_std(d_k, n_pairs=20000, rng=0)
    # Not rounding: the spread of 20000 draws, off by sqrt((E x**4 / sigma**4 - 1) / (4 * 20000)) relative, 1% at
    # d_k = 1 (E (q k)**4 = 9) and less beyond.
    assert std == pytest.approx(np.sqrt(d_k), rel=0.03)


def test_standard_normal_vectors_have_unit_variance_and_follow_the_seed():
    z = dk_scaling.standard_normal_vectors(50000, 2, rng=3)
    assert z.shape == (50000, 2)
    np.testing.assert_allclose(z.var(axis=0), 1.0, rtol=0.03)  # not rounding: 50000 draws, sqrt(2 / 50000) = 0.6%
    np.testing.assert_array_equal(z, dk_scaling.standard_normal_vectors(50000, 2, rng=3))  # the same draws


def test_unscaled_softmax_approaches_one_hot_as_d_k_grows():
    small, h_small, j_small = dk_scaling.softmax_sharpness(1, scaled=False, rng=0)
    large, h_large, j_large = dk_scaling.softmax_sharpness(1024, scaled=False, rng=0)
    assert large > 0.9 > small
    assert h_large < 0.2 < h_small
    assert j_large < 0.2 < j_small, "saturated: the weights stop responding to the softmax's input"


def test_scaled_softmax_keeps_its_shape_as_d_k_grows():
    runs = np.array([dk_scaling.softmax_sharpness(d, scaled=True, rng=0) for d in (1, 16, 1024)])  # (3, 3)
    assert np.ptp(runs[:, 0]) < 0.1
    assert np.ptp(runs[:, 2]) < 0.05, "the softmax's derivative keeps its size"


def test_dk_scaling_experiment_uses_the_same_draws_with_and_without_scaling():
    r = dk_scaling.dk_scaling_experiment([1, 8], n_queries=50, n_pairs=100, rng=5)
    # At d_k = 1, sqrt(d_k) = 1: scaling changes nothing, so the two runs agree exactly.
    assert r["max_weight_scaled"][0] == r["max_weight_unscaled"][0]
    assert r["entropy_scaled"][0] == r["entropy_unscaled"][0]
    assert r["jacobian_scaled"][0] == r["jacobian_unscaled"][0]
    assert r["max_weight_scaled"][1] != r["max_weight_unscaled"][1]
    assert set(r) == {"d_k", "std", "max_weight_unscaled", "max_weight_scaled",
                      "entropy_unscaled", "entropy_scaled", "jacobian_unscaled", "jacobian_scaled"}


def test_dk_scaling_experiment_is_reproducible():
    a = dk_scaling.dk_scaling_experiment([2, 32], n_queries=20, n_pairs=50, rng=7)
    b = dk_scaling.dk_scaling_experiment([2, 32], n_queries=20, n_pairs=50, rng=7)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])  # the same draws through the same operations


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dk_scaling.dot_product_std(0), "d_k must be at least 1"),
        (lambda: dk_scaling.dot_product_std(4, n_pairs=1), "n_pairs must be at least 2"),
        (lambda: dk_scaling.softmax_sharpness(4, scaled=True, n_keys=1), "n_keys must be at least 2"),
        (lambda: dk_scaling.dk_scaling_experiment([]), "d_ks must be a non-empty"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
