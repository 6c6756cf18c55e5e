"""The page "A noisy signal": the book's sine, and why a head on one-number tokens cannot smooth it."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention.metrics import most_attended, rmse
from selfattention.studies.onedim import onedim_head, strength_sweep

STEM = "noisy-signal"


@pytest.fixture(scope="module")
def ns(chapter):
    return chapter.namespace


def test_the_noisy_input_is_off_by_about_sigma(chapter):
    assert chapter.glued["sig-noisy-rmse"] == pytest.approx(chapter.glued["sig-sigma"], rel=0.2)


def test_every_token_attends_most_to_the_largest_or_smallest_value(chapter, ns):
    positions, noisy, top = ns["positions"], ns["noisy"], most_attended(ns["weights"])
    hi, lo = np.argmax(noisy), np.argmin(noisy)
    np.testing.assert_array_equal(top, np.where(noisy > 0, hi, lo))
    assert chapter.glued["one-n-top"] == 2
    assert chapter.glued["one-top-high"] == positions[hi] and chapter.glued["one-top-low"] == positions[lo]
    # "near the crest of the sine ... near the trough"
    assert abs(positions[hi] - 0.25) < 0.1 and abs(positions[lo] - 0.75) < 0.1


def test_onedim_attention_is_hardly_local(chapter):
    local, uniform = chapter.glued["one-local"], chapter.glued["one-local-uniform"]
    assert uniform < local < 2 * uniform, "less than twice what a plain mean puts there"
    assert chapter.glued["one-local-band"] > 0.9


def test_shuffling_the_signal_only_shuffles_the_output(chapter):
    assert chapter.glued["one-shuffle-diff"] < 1e-12


def test_the_onedim_head_makes_the_error_worse(chapter):
    assert chapter.glued["one-rmse"] > chapter.glued["sig-noisy-rmse"]


def test_zero_strength_gives_the_mean_and_negative_strength_is_worse(chapter, ns):
    strengths, errors, noisy, clean = ns["strengths"], ns["errors"], ns["noisy"], ns["clean"]
    zero = np.argmin(np.abs(strengths))
    assert strengths[zero] == 0.0
    assert chapter.glued["sweep-zero-rmse"] == pytest.approx(rmse(np.full_like(noisy, noisy.mean()), clean))
    assert np.all(errors[strengths < 0] > errors[zero])


def test_the_best_strength_barely_beats_the_noisy_input(chapter, ns):
    strengths, errors = ns["strengths"], ns["errors"]
    best = np.argmin(errors)
    assert 0 < best < strengths.size - 1, "an interior minimum: the range covers it"
    wide = strength_sweep(ns["noisy"], ns["clean"], np.linspace(-50.0, 50.0, 401))
    assert wide.min() >= errors[best] - 1e-3, "nothing outside the range does better"
    assert 0 < chapter.glued["sweep-gain"] < 0.3
    assert chapter.glued["sweep-band-rmse"] < chapter.glued["sweep-best-rmse"] / 2


def test_the_best_strength_shrinks_values_towards_the_middle(chapter, ns):
    output, _ = onedim_head(ns["noisy"], w_q=chapter.glued["sweep-best-c"])
    assert np.std(output) < np.std(ns["noisy"])
    order = np.argsort(ns["noisy"])
    assert np.all(np.diff(output[order]) >= 0), "still a function of the own value"

