"""The measurements behind chapters 4-6: every behaviour the text claims."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention import knobs, settings
from selfattention.kernel import temperature_to_bandwidth

TAU_SMALL, TAU_LARGE = settings.TEMPERATURE_RANGE


@pytest.fixture
def book_signal():
    return sa.noisy_sine(settings.N, settings.SIGMA, rng=settings.SEED)


# --- the band of chapter 4 ------------------------------------------------------


@pytest.mark.parametrize("tau", [0.001, settings.TEMPERATURE, 0.02])
def test_each_row_is_the_predicted_gaussian(tau):
    positions = np.linspace(0.0, 1.0, settings.N)
    measured, predicted = knobs.attention_row(positions, tau, settings.N // 2)
    np.testing.assert_allclose(measured, predicted, rtol=0, atol=1e-12)


@pytest.mark.parametrize("tau", [0.0005, settings.TEMPERATURE])
def test_row_width_is_sqrt_tau_over_2(tau):
    positions = np.linspace(0.0, 1.0, 1001)  # dense, so the sum approximates the integral
    row = 500
    measured, _ = knobs.attention_row(positions, tau, row)
    sd = np.sqrt(np.sum(measured * (positions - positions[row]) ** 2))
    assert sd == pytest.approx(temperature_to_bandwidth(tau), rel=1e-3)


def test_row_width_check_can_fail():
    positions = np.linspace(0.0, 1.0, 1001)
    measured, _ = knobs.attention_row(positions, 4 * settings.TEMPERATURE, 500)
    sd = np.sqrt(np.sum(measured * (positions - 0.5) ** 2))
    assert sd == pytest.approx(2 * temperature_to_bandwidth(settings.TEMPERATURE), rel=1e-3)
    assert sd != pytest.approx(temperature_to_bandwidth(settings.TEMPERATURE), rel=0.1)


# --- chapter 5: smoothing removes noise -------------------------------------------


def test_book_settings_output_beats_input():
    rmse_in, rmse_out = knobs.smoothing_errors(settings.N, settings.SIGMA, settings.TEMPERATURE, rng=settings.SEED)
    assert rmse_out < rmse_in / 2
    assert rmse_in == pytest.approx(settings.SIGMA, rel=0.2)


@pytest.mark.parametrize("seed", range(5))
def test_output_beats_input_on_other_draws(seed):
    rmse_in, rmse_out = knobs.smoothing_errors(settings.N, settings.SIGMA, settings.TEMPERATURE, rng=seed)
    assert rmse_out < rmse_in / 2


def test_noise_free_signal_keeps_only_the_blur():
    _, rmse_out = knobs.smoothing_errors(settings.N, 0.0, settings.TEMPERATURE, rng=settings.SEED)
    assert 0 < rmse_out < 0.1


def test_effective_neighbours_limits():
    n = 7
    np.testing.assert_allclose(knobs.effective_neighbours(np.eye(n)), 1.0)
    np.testing.assert_allclose(knobs.effective_neighbours(np.full((n, n), 1 / n)), n)


def test_rmse():
    assert knobs.rmse([1.0, 3.0], [1.0, 1.0]) == pytest.approx(np.sqrt(2.0))
    with pytest.raises(ValueError, match="estimate and truth"):
        knobs.rmse([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="estimate"):
        knobs.rmse([], [])


# --- chapter 6: the temperature's two limits --------------------------------------


def test_small_temperature_gives_identity_and_no_smoothing(book_signal):
    positions, _, noisy = book_signal
    output, weights = sa.gaussian_head(noisy, positions, TAU_SMALL)
    assert knobs.distance_from_identity(weights) < 1e-30
    np.testing.assert_array_equal(output, noisy)


def test_large_temperature_gives_uniform_and_flat_output(book_signal):
    positions, clean, noisy = book_signal
    output, weights = sa.gaussian_head(noisy, positions, TAU_LARGE)
    assert knobs.distance_from_uniform(weights) < 1e-3
    assert np.max(np.abs(output - noisy.mean())) < 0.05
    assert np.ptp(output) < 0.05 * np.ptp(clean)


def test_the_limits_are_approached_steadily(book_signal):
    positions, _, noisy = book_signal
    taus = np.logspace(-6, 4, 21)
    sweep = knobs.temperature_sweep(noisy, positions, taus)
    assert np.all(np.diff(sweep["identity"]) >= 0)
    assert np.all(np.diff(sweep["uniform"]) <= 0)
    assert np.all(np.diff(sweep["mean_gap"]) <= 0)
    assert sweep["identity"][0] < 1e-30 and sweep["input_gap"][0] == 0
    assert sweep["uniform"][-1] < 1e-5 and sweep["mean_gap"][-1] < 1e-3


def test_distances_can_fail():
    n = 5
    assert knobs.distance_from_identity(np.full((n, n), 1 / n)) == pytest.approx(1 - 1 / n)
    assert knobs.distance_from_uniform(np.eye(n)) == pytest.approx(1 - 1 / n)


# --- chapter 6: large noise, more samples ----------------------------------------


@pytest.mark.parametrize("seed", [settings.SEED, 0, 1, 2])
def test_large_noise_is_recovered_at_a_moderate_temperature(seed):
    sigma_max = settings.SIGMA_RANGE[1]
    rmse_in, rmse_out = knobs.noise_sweep(settings.N, [sigma_max], 2 * settings.TEMPERATURE, rng=seed)
    assert rmse_out[0] < rmse_in[0] / 3


def test_noise_sweep_scales_the_same_draws():
    sigmas = [0.0, 0.5, 1.0]
    rmse_in, _ = knobs.noise_sweep(settings.N, sigmas, settings.TEMPERATURE, rng=settings.SEED)
    np.testing.assert_allclose(rmse_in, np.array(sigmas) * rmse_in[-1])
    single_in, single_out = knobs.smoothing_errors(settings.N, 0.5, settings.TEMPERATURE, rng=settings.SEED)
    assert rmse_in[1] == pytest.approx(single_in)


def test_error_goes_down_with_more_samples():
    counts = [10, 20, 50, 100, 200, 500, 1000]
    rmse_in, rmse_out = knobs.error_vs_samples(
        counts, settings.SIGMA, settings.TEMPERATURE, n_draws=20, rng=settings.SEED
    )
    assert np.all(np.diff(rmse_out) < 0)
    assert rmse_out[-1] < rmse_out[0] / 3
    np.testing.assert_allclose(rmse_in, settings.SIGMA, rtol=0.1)  # input noise does not shrink


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_error_goes_down_with_more_samples_for_other_seeds(seed):
    _, rmse_out = knobs.error_vs_samples([20, 100, 500], settings.SIGMA, settings.TEMPERATURE, n_draws=10, rng=seed)
    assert np.all(np.diff(rmse_out) < 0)


def test_measurements_are_reproducible():
    a = knobs.error_vs_samples([20, 50], 0.5, 0.01, n_draws=3, rng=5)
    b = knobs.error_vs_samples([20, 50], 0.5, 0.01, n_draws=3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    c = knobs.error_vs_samples([20, 50], 0.5, 0.01, n_draws=3, rng=6)
    assert not np.array_equal(a, c)


# --- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: knobs.temperature_sweep([0.0, 1.0], [0.0, 1.0], []), "temperatures"),
        (lambda: knobs.temperature_sweep([0.0, 1.0], [0.0, 1.0], [0.1, -1.0]), "temperatures"),
        (lambda: knobs.noise_sweep(10, [-0.1], 0.01), "sigmas"),
        (lambda: knobs.noise_sweep(10, [0.1], 0.0), "temperature"),
        (lambda: knobs.error_vs_samples([1, 10], 0.3, 0.01), "sample_counts"),
        (lambda: knobs.error_vs_samples([10], 0.3, 0.01, n_draws=0), "n_draws"),
        (lambda: knobs.smoothing_errors(10, -1.0, 0.01), "sigma"),
        (lambda: knobs.attention_row([0.0, 1.0], 0.01, 2), "row"),
        (lambda: knobs.attention_row([0.0, 1.0], -0.01, 0), "temperature"),
        (lambda: knobs.distance_from_identity(np.ones((2, 3))), "weights"),
        (lambda: knobs.distance_from_uniform(np.ones(3)), "weights"),
        (lambda: knobs.effective_neighbours([[np.nan]]), "weights"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
