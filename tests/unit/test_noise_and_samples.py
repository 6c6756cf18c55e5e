"""The head's error as the noise and the number of samples change."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention.metrics import rmse
from selfattention.studies import noise_and_samples as nas


def test_smoothed_sine_is_the_head_on_noisy_sine():
    result = nas.smoothed_sine(50, 0.4, 0.01, periods=2, rng=3)
    positions, clean, noisy = sa.noisy_sine(50, 0.4, periods=2, rng=3)
    output, weights = sa.gaussian_head(noisy, positions, 0.01)
    for got, want in zip(result[:5], (positions, clean, noisy, output, weights), strict=True):
        np.testing.assert_array_equal(got, want)  # the same calls of the package
    assert (result.rmse_input, result.rmse_output) == (rmse(noisy, clean), rmse(output, clean))
    assert nas.smoothing_errors(50, 0.4, 0.01, periods=2, rng=3) == (result.rmse_input, result.rmse_output)


@pytest.mark.parametrize("rng", [7, np.random.default_rng(7)])
def test_noise_levels_scale_the_same_draws(rng):
    levels = nas.noise_levels(60, [0.0, 0.5, 1.0], 0.005, rng=rng)
    np.testing.assert_array_equal(levels[0].noisy, levels[0].clean)  # clean + 0 * z, exactly
    z = levels[2].noisy - levels[2].clean  # the draws, at sigma = 1
    # clean + sigma z - clean on either side: 2 roundings on 1 + max|z| (halving is exact).
    added = rounding(2, 1 + np.abs(z).max())
    np.testing.assert_allclose(levels[1].noisy - levels[1].clean, 0.5 * z, rtol=0, atol=added)
    rmse_input, rmse_output = nas.noise_sweep(60, [0.0, 0.5, 1.0], 0.005, rng=7)
    # The same, through an RMSE of 60 errors (60 + 3 roundings on its size).
    np.testing.assert_allclose(rmse_input, np.array([0.0, 0.5, 1.0]) * rmse_input[-1], rtol=0,
                               atol=added + rounding(60 + 3, rmse_input[-1]))
    assert rmse_output[0] == levels[0].rmse_output, "sigma = 0 leaves only the blur"


def test_error_goes_down_with_more_samples():
    rmse_input, rmse_output = nas.error_vs_samples([10, 100, 1000], 0.3, 0.005, n_draws=5, rng=1)
    assert np.all(np.diff(rmse_output) < 0)
    # Not rounding: the RMSE of N normal draws is sigma to about 1 / sqrt(2 N) relative (0.1 for the mean of
    # 5 draws at N = 10).
    np.testing.assert_allclose(rmse_input, 0.3, rtol=0.2)


def test_error_vs_samples_averages_independent_draws_reproducibly():
    a = nas.error_vs_samples([20, 50], 0.5, 0.01, n_draws=3, rng=5)
    b = nas.error_vs_samples([20, 50], 0.5, 0.01, n_draws=3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)  # the same draws through the same operations
    c = nas.error_vs_samples([20, 50], 0.5, 0.01, n_draws=3, rng=6)
    assert not np.array_equal(a, c)
    one = nas.error_vs_samples([20], 0.5, 0.01, n_draws=1, rng=5)
    assert not np.array_equal(one[1], a[1][:1]), "three draws are averaged, not one repeated"


def test_neighbours_vs_samples_is_the_middle_row_of_the_head():
    for n in (2, 11, 40):
        positions, _, noisy = sa.noisy_sine(n, 0.3, rng=1)
        _, weights = sa.gaussian_head(noisy, positions, 0.01)
        (got,) = nas.neighbours_vs_samples([n], 0.01)
        # The same weights (they depend on the positions only); n squares summed in another order, a reciprocal.
        assert got == pytest.approx(1 / np.sum(weights[n // 2] ** 2), rel=rounding(n + 2), abs=0)


def test_neighbours_grow_in_proportion_to_the_samples():
    """A Gaussian row of standard deviation h, on a grid of spacing 1 / (N - 1): 1 / sum a**2 = 2 sqrt(pi) h (N - 1)."""
    counts = np.array([20, 100, 1000])
    h = np.sqrt(0.005 / 2)
    # Not rounding: a sum over the grid for the integral of a Gaussian at least 3 spacings wide (N = 20).
    np.testing.assert_allclose(nas.neighbours_vs_samples(counts, 0.005), 2 * np.sqrt(np.pi) * h * (counts - 1),
                               rtol=0.01)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: nas.noise_sweep(10, [-0.1], 0.01), "sigmas"),
        (lambda: nas.noise_sweep(10, [], 0.01), "sigmas"),
        (lambda: nas.noise_sweep(10, [0.1], 0.0), "temperature"),
        (lambda: nas.error_vs_samples([1, 10], 0.3, 0.01), "sample_counts"),
        (lambda: nas.error_vs_samples([10], 0.3, 0.01, n_draws=0), "n_draws"),
        (lambda: nas.smoothing_errors(10, -1.0, 0.01), "sigma"),
        (lambda: nas.smoothed_sine(0, 0.1, 0.01), "n"),
        (lambda: nas.neighbours_vs_samples([1, 10], 0.01), "sample_counts"),
        (lambda: nas.neighbours_vs_samples([10], -1.0), "temperature"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
