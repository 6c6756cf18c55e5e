"""What chapters 1-3 claim, asserted against the package with the book's settings.

Each test computes what the chapter computes (same functions, same arguments)
and checks the sentence of the text that describes it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import selfattention as sa
from selfattention import settings
from selfattention.knobs import rmse
from selfattention.onedim import local_share, most_attended, onedim_head, strength_sweep
from selfattention.scaling import scaling_experiment
from selfattention.worked import attention_steps, example_tokens

ROOT = Path(__file__).resolve().parents[1]


# Chapter 1: introduction --------------------------------------------------------


def test_introduction_links_every_later_chapter_of_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    chapters = re.findall(r"file:\s*book/([\w-]+)", toc)
    intro = (ROOT / "book" / "introduction.md").read_text()
    linked = set(re.findall(r"\{doc\}`([\w-]+)`", intro))
    assert set(chapters) - {"introduction"} <= linked


# Chapter 2: attention as a weighted average -------------------------------------


@pytest.fixture(scope="module")
def steps():
    return attention_steps(*example_tokens())


def test_worked_example_every_step_is_the_formula(steps):
    X, W_Q, W_K, W_V = example_tokens()
    np.testing.assert_array_equal(steps["Q"], X @ W_Q)
    np.testing.assert_array_equal(steps["K"], X @ W_K)
    np.testing.assert_array_equal(steps["V"], X @ W_V)
    np.testing.assert_array_equal(steps["scores"], steps["Q"] @ steps["K"].T)
    np.testing.assert_allclose(steps["scaled"], steps["scores"] / np.sqrt(2))
    np.testing.assert_allclose(steps["weights"], sa.softmax(steps["scaled"]))
    np.testing.assert_allclose(steps["output"], steps["weights"] @ steps["V"])
    assert steps["X"].shape == (4, 3) and steps["Q"].shape == (4, 2) and steps["V"].shape == (4, 2)


def test_worked_example_rows_are_weighted_averages(steps):
    w, V, out = steps["weights"], steps["V"], steps["output"]
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-15)
    assert np.all(w > 0)
    assert np.all(out >= V.min(axis=0)) and np.all(out <= V.max(axis=0))


def test_worked_example_softmax_amplifies_a_small_score_gap(steps):
    row_scores, row_weights = steps["scaled"][0], steps["weights"][0]
    top = np.argmax(row_scores)
    others = np.delete(np.arange(4), top)
    # The top key wins by less than one unit of score ...
    gap = row_scores[top] - np.max(row_scores[others])
    assert 0 < gap < 1
    # ... yet gets about twice the weight of each of the others (exp(gap) times).
    np.testing.assert_allclose(row_weights[top] / row_weights[others], np.exp(gap))
    assert np.all(row_weights[top] > 2 * row_weights[others])


@pytest.fixture(scope="module")
def scaling_result():
    return scaling_experiment(n_keys=16, rng=settings.SEED)


def test_dot_product_spread_follows_sqrt_d_k(scaling_result):
    ratio = scaling_result["std"] / np.sqrt(scaling_result["d_k"])
    assert np.max(np.abs(ratio - 1)) < 0.05
    assert scaling_result["d_k"][-1] == 1024


def test_without_scaling_softmax_becomes_nearly_one_hot(scaling_result):
    top = scaling_result["max_weight_unscaled"]
    assert np.all(np.diff(top) > 0)
    assert top[-1] > 0.95
    assert scaling_result["entropy_unscaled"][-1] < 0.1 * np.log(16)


def test_with_scaling_softmax_keeps_its_shape(scaling_result):
    top = scaling_result["max_weight_scaled"]
    assert top.max() - top.min() < 0.06
    assert top.max() < 0.3  # far from one-hot, well above uniform 1/16
    assert top.min() > 1 / 16
    assert np.all(scaling_result["entropy_scaled"] > 0.8 * np.log(16))


def test_temperature_moves_between_picking_and_plain_mean():
    rng = np.random.default_rng(settings.SEED)
    Q, K, V = rng.standard_normal((5, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    _, sharp = sa.attention(Q, K, V, 1e-4)
    _, flat = sa.attention(Q, K, V, 1e4)
    np.testing.assert_allclose(sharp.max(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(flat, 1 / 7, atol=1e-3)


# Chapter 3: a noisy signal ------------------------------------------------------


@pytest.fixture(scope="module")
def book_signal():
    return sa.noisy_sine(settings.N, settings.SIGMA, rng=settings.SEED)


@pytest.fixture(scope="module")
def onedim(book_signal):
    _, _, noisy = book_signal
    return onedim_head(noisy, w_q=1.0, w_k=1.0, w_v=1.0)


def test_noisy_input_is_off_by_about_sigma(book_signal):
    _, clean, noisy = book_signal
    assert rmse(noisy, clean) == pytest.approx(settings.SIGMA, rel=0.2)


def test_every_token_attends_most_to_the_largest_or_smallest_value(book_signal, onedim):
    positions, _, noisy = book_signal
    _, weights = onedim
    top = most_attended(weights)
    hi, lo = np.argmax(noisy), np.argmin(noisy)
    np.testing.assert_array_equal(top, np.where(noisy > 0, hi, lo))
    assert np.unique(top).size == 2
    # The two are near the crest (p = 1/4) and the trough (p = 3/4) of the sine.
    assert abs(positions[hi] - 0.25) < 0.1 and abs(positions[lo] - 0.75) < 0.1


def test_onedim_attention_is_hardly_local(book_signal, onedim):
    positions, _, noisy = book_signal
    _, weights = onedim
    _, band = sa.gaussian_head(noisy, positions, settings.TEMPERATURE)
    uniform = np.full_like(weights, 1 / settings.N)
    share = local_share(weights, positions, 0.1)
    assert local_share(uniform, positions, 0.1) < share < 2 * local_share(uniform, positions, 0.1)
    assert local_share(band, positions, 0.1) > 0.9


def test_shuffling_the_book_signal_only_shuffles_the_output(book_signal, onedim):
    _, _, noisy = book_signal
    output, _ = onedim
    shuffle = np.random.default_rng(settings.SEED).permutation(settings.N)
    shuffled_output, _ = onedim_head(noisy[shuffle])
    assert np.max(np.abs(shuffled_output - output[shuffle])) < 1e-12


def test_default_onedim_head_makes_the_error_worse(book_signal, onedim):
    _, clean, noisy = book_signal
    output, _ = onedim
    assert rmse(output, clean) > rmse(noisy, clean)


@pytest.fixture(scope="module")
def sweep(book_signal):
    _, clean, noisy = book_signal
    strengths = np.linspace(-2.0, 8.0, 201)
    return strengths, strength_sweep(noisy, clean, strengths)


def test_zero_strength_gives_the_mean_and_negative_strength_is_worse(book_signal, sweep):
    _, clean, noisy = book_signal
    strengths, errors = sweep
    zero = np.argmin(np.abs(strengths))
    assert strengths[zero] == 0.0
    assert errors[zero] == pytest.approx(rmse(np.full_like(noisy, noisy.mean()), clean))
    assert np.all(errors[strengths < 0] > errors[zero])


def test_best_strength_barely_beats_the_noisy_input(book_signal, sweep):
    positions, clean, noisy = book_signal
    strengths, errors = sweep
    best = np.argmin(errors)
    assert 0 < best < strengths.size - 1  # an interior minimum: the range covers it
    wide = strength_sweep(noisy, clean, np.linspace(-50.0, 50.0, 401))
    assert wide.min() >= errors[best] - 1e-3  # nothing outside the range does better
    gain = 1 - errors[best] / rmse(noisy, clean)
    assert 0 < gain < 0.3
    band_output, _ = sa.gaussian_head(noisy, positions, settings.TEMPERATURE)
    assert rmse(band_output, clean) < errors[best] / 2


def test_best_strength_shrinks_values_towards_the_middle(book_signal, sweep):
    _, _, noisy = book_signal
    strengths, errors = sweep
    output, _ = onedim_head(noisy, w_q=strengths[np.argmin(errors)])
    assert np.std(output) < np.std(noisy)
    order = np.argsort(noisy)
    assert np.all(np.diff(output[order]) >= 0)  # still a function of the own value
