"""The page "Turning the knobs": the temperature's two limits, large noise and more samples."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import defaults
from selfattention.studies.noise_and_samples import error_vs_samples, noise_sweep

STEM = "knobs"


def test_the_smallest_temperature_gives_the_identity_and_no_smoothing(chapter):
    glued = chapter.glued
    assert glued["knobs-nearest-score"] < -50, "e to that power is negligible next to e^0 = 1"
    assert glued["knobs-identity-gap"] < 1e-30
    assert glued["knobs-input-gap"] == 0.0, "the output zigzags through every dot"


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
    np.testing.assert_allclose(ns["samples_in"], defaults.SIGMA, rtol=0.1)  # the input's does not
    assert glued["knobs-samples-last"] > 0.01, "the blur of a fixed bump stays"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_more_samples_sharpen_the_result_for_other_seeds(chapter, seed):
    _, rmse_output = error_vs_samples([20, 100, 500], defaults.SIGMA, defaults.TEMPERATURE, n_draws=10, rng=seed)
    assert np.all(np.diff(rmse_output) < 0)
