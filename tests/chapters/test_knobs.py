"""The page "Turning the knobs": the temperature's two limits, large noise and more samples."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention import defaults, head
from selfattention.metrics import distance_from_identity, effective_neighbours
from selfattention.studies import noise_and_samples
from selfattention.studies.noise_and_samples import error_vs_samples, noise_sweep

STEM = "knobs"


def test_the_smallest_temperature_underflows_to_exactly_the_identity(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["knobs-tiny"] == np.finfo(float).smallest_subnormal > 0
    assert glued["knobs-tiny-exponent"] == np.log(glued["knobs-tiny"])  # the chapter glues this logarithm
    assert glued["knobs-nearest-score"] < glued["knobs-tiny-exponent"] - 1, "far below: exp underflows"
    assert np.exp(glued["knobs-nearest-score"]) == 0.0
    assert glued["knobs-offdiagonal-zeros"] == defaults.N * (defaults.N - 1), "all off-diagonal weights exactly 0"
    np.testing.assert_array_equal(ns["w_small"], np.eye(defaults.N))
    assert distance_from_identity(ns["w_small"]) == 0.0, "both distances are exactly 0"
    assert glued["knobs-output-equals-input"] is True
    np.testing.assert_array_equal(ns["out_small"], ns["noisy"])


def test_the_largest_temperature_flattens_the_signal_onto_its_mean(chapter):
    glued = chapter.glued
    assert glued["knobs-uniform-gap"] < 1e-3
    assert glued["knobs-mean-gap"] < 0.05
    assert glued["knobs-output-range"] < 0.05 * glued["knobs-clean-range"]
    assert abs(glued["knobs-input-mean"]) < 0.1, "close to zero here"


def test_the_limits_are_approached_steadily(chapter):
    sweep = chapter.namespace["sweep"]
    assert np.all(np.diff(sweep["identity"]) >= 0)
    assert np.all(np.diff(sweep["uniform"]) <= 0)
    assert np.all(np.diff(sweep["mean_gap"]) <= 0)
    assert sweep["identity"][0] < 1e-30 and sweep["input_gap"][0] == 0
    assert sweep["uniform"][-1] < 1e-5 and sweep["mean_gap"][-1] < 1e-3


def test_large_noise_is_recovered_at_a_moderate_temperature(chapter):
    glued = chapter.glued
    assert glued["knobs-sigma-max"] > 1, "larger than the sine's own amplitude"
    assert glued["knobs-noise-ratio"] > 3
    assert glued["knobs-tau-moderate"] == 2 * defaults.TEMPERATURE, "twice the book's default"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_large_noise_is_recovered_on_other_noise_draws(chapter, seed):
    ns = chapter.namespace
    rmse_input, rmse_output = noise_sweep(defaults.N, ns["sigmas"][-1:], ns["tau_moderate"], rng=seed)
    assert rmse_output[0] < rmse_input[0] / 3


def test_more_samples_sharpen_the_result(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert np.all(np.diff(ns["samples_out"]) < 0), "the output's error falls as N grows"
    assert glued["knobs-samples-last"] < glued["knobs-samples-first"] / 3
    # The input's does not: not rounding, the RMSE of N draws is sigma to about 1 / sqrt(2 N) relative.
    np.testing.assert_allclose(ns["samples_in"], defaults.SIGMA, rtol=0.1)
    assert glued["knobs-samples-last"] > 0.01, "the blur of a fixed bump stays"


def test_the_bump_covers_hardly_one_token_at_few_samples_and_more_in_proportion_to_n(chapter):
    glued, counts, neighbours = chapter.glued, chapter.namespace["sample_counts"], chapter.namespace["neighbours"]
    assert glued["knobs-neighbours-first"] < 2, "hardly more than one token"
    assert (glued["knobs-neighbours-first"], glued["knobs-neighbours-last"]) == (neighbours[0], neighbours[-1])
    per_gap = neighbours / (np.asarray(counts) - 1)  # about in proportion to N: to N - 1, from N = 20 on
    assert np.all(np.diff(neighbours) > 0) and per_gap[1:].max() < 1.01 * per_gap[1:].min()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_more_samples_sharpen_the_result_for_other_seeds(chapter, seed):
    _, rmse_output = error_vs_samples([20, 100, 500], defaults.SIGMA, defaults.TEMPERATURE, n_draws=10, rng=seed)
    assert np.all(np.diff(rmse_output) < 0)


# --- the exercises -----------------------------------------------------------------------------


def test_ex_the_uniform_limit_is_one_over_n(chapter):
    assert chapter.glued["ex-knobs-uniform-n"] == defaults.N
    # The mean of N**2 weights whose rows sum to 1 within 2 N roundings: N**2 more in the mean, relative.
    n = defaults.N
    assert chapter.glued["ex-knobs-uniform-weight"] == pytest.approx(1 / n, rel=rounding(2 * n + n**2), abs=0)


def test_ex_the_identity_begins_where_the_nearest_neighbour_underflows(chapter):
    glued, ns = chapter.glued, chapter.namespace
    n = defaults.N
    assert glued["ex-knobs-underflow-tau"] == glued["knobs-spacing"] ** 2 / -glued["knobs-tiny-exponent"]  # as glued
    assert glued["ex-knobs-underflow-zeros-below"] == n * (n - 1), "every off-diagonal weight is exactly 0"
    assert glued["ex-knobs-underflow-zeros-above"] < n * (n - 1)
    w_above = ns["w_above"]
    nearest = [w_above[i, i + 1] for i in range(n - 1)] + [w_above[i + 1, i] for i in range(n - 1)]
    assert min(nearest) > 0, "every nearest neighbour has a weight above 0"
    assert glued["ex-knobs-underflow-below"] < glued["ex-knobs-underflow-tau"] < glued["ex-knobs-underflow-above"]
    # The exact edge: the nearest neighbour's exponential is half the smallest double (which rounds to 0, to even).
    exact = glued["ex-knobs-underflow-exact"]
    assert exact == glued["knobs-spacing"] ** 2 / (np.log(2) - glued["knobs-tiny-exponent"])  # as glued
    assert glued["ex-knobs-underflow-lower"] == 100 * (1 - exact / glued["ex-knobs-underflow-tau"])
    assert 0 < glued["ex-knobs-underflow-lower"] < 0.1
    # Between the two edges every nearest neighbour still has a weight; a little below the exact one none has.
    # The margins move the nearest scaled score by about 0.35 (an exponential of 0.7 or 0.35 of the smallest
    # double), far beyond the scores' rounding (the head's bound, 1e-6).
    positions, noisy = ns["positions"], ns["noisy"]
    _, w_between = sa.gaussian_head(noisy, positions, (exact + glued["ex-knobs-underflow-tau"]) / 2)
    _, w_under = sa.gaussian_head(noisy, positions, exact * (1 - 5e-4))
    assert min(w_between[i, i + 1] for i in range(n - 1)) > 0, "the weight is not yet 0 between the edges"
    assert np.all(w_under[ns["off_diagonal"]] == 0.0), "exactly 0 below the exact edge"


def test_ex_four_times_the_samples_four_times_the_neighbours(chapter):
    glued = chapter.glued
    assert chapter.namespace["counts"] == [defaults.N]
    assert glued["ex-knobs-live-factor"] == glued["ex-knobs-live-after"] / glued["ex-knobs-live-before"]
    _, weights = sa.gaussian_head(chapter.namespace["noisy"], chapter.namespace["positions"], defaults.TEMPERATURE)
    # The same weights (they depend on the positions only), through the same function.
    assert glued["ex-knobs-live-before"] == effective_neighbours(weights)[defaults.N // 2]
    # Not rounding: "about" four times, and its root about 2.
    assert glued["ex-knobs-live-factor"] == pytest.approx(4, rel=0.05), "about four times as many"
    assert np.sqrt(glued["ex-knobs-live-factor"]) == pytest.approx(2, rel=0.03), "the noise left about halved"


def test_ex_the_floor_is_the_blur(chapter):
    glued = chapter.glued
    assert chapter.namespace["sample_counts"][-1] == glued["knobs-n-last"]
    assert 0 < glued["ex-knobs-open-floor"] < glued["knobs-samples-last"]
    assert glued["ex-knobs-open-floor"] > 0.5 * glued["knobs-samples-last"], "close to the error measured with noise"


def test_ex_a_bump_narrowing_with_the_spacing_keeps_its_neighbours_a_slower_one_gains_them():
    """"as fast as the spacing 1/(N-1), a temperature falling as 1/N**2, keeps the same number of neighbours";
    "more slowly than the spacing still gains neighbours" (here tau falling as N**(-2/5), the next chapter's)."""
    n, tau = defaults.N, defaults.TEMPERATURE
    four = 4 * n
    with_spacing = noise_and_samples.neighbours_vs_samples([four], tau * ((n - 1) / (four - 1)) ** 2)[0]
    slower = noise_and_samples.neighbours_vs_samples([four], tau * (four / n) ** (-2 / 5))[0]
    before = noise_and_samples.neighbours_vs_samples([n], tau)[0]
    # Equal in exact arithmetic: the same bump in units of the spacing. Each head's rounding moves a row by at most
    # ROUNDING_TOLERANCE in total, so its sum of squares by at most 2 ROUNDING_TOLERANCE max_j a_ij, relative
    # 2 ROUNDING_TOLERANCE / max_j a_ij <= 2 ROUNDING_TOLERANCE N_eff (since sum a**2 <= max a); for both heads, twice.
    assert with_spacing == pytest.approx(before, rel=4 * head.ROUNDING_TOLERANCE * before, abs=0)
    assert slower > 2 * before, "gains neighbours"
