"""The page "Attention as a weighted average": the worked example and the sqrt(d_k) experiment."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa

STEM = "attention"


@pytest.fixture(scope="module")
def steps(chapter):
    return chapter.namespace["steps"]


def test_worked_example_every_step_is_the_formula(steps):
    np.testing.assert_array_equal(steps["scores"], steps["Q"] @ steps["K"].T)
    np.testing.assert_allclose(steps["scaled"], steps["scores"] / np.sqrt(steps["Q"].shape[1]))
    np.testing.assert_allclose(steps["weights"], sa.softmax(steps["scaled"]))
    np.testing.assert_allclose(steps["output"], steps["weights"] @ steps["V"])
    assert steps["X"].shape == (4, 3) and steps["Q"].shape == (4, 2) and steps["V"].shape == (4, 2)


def test_worked_example_rows_are_weighted_averages(chapter, steps):
    w, V, out = steps["weights"], steps["V"], steps["output"]
    assert chapter.glued["ex-row-sum-error"] < 1e-15
    assert np.all(w > 0) and chapter.glued["ex-min-weight"] == w.min()
    assert np.all(out >= V.min(axis=0)) and np.all(out <= V.max(axis=0))


def test_worked_example_softmax_amplifies_a_small_score_gap(chapter, steps):
    glued, row_weights = chapter.glued, steps["weights"][0]
    top = glued["ex-top-key"] - 1
    others = np.delete(row_weights, top)
    assert 0 < glued["ex-score-gap"] < 1, "beats the others by only a fraction of a unit"
    # ... yet gets exp(gap) times the weight of each of the others, which all get the same.
    np.testing.assert_allclose(glued["ex-top-weight"] / others, np.exp(glued["ex-score-gap"]))
    assert glued["ex-other-weight"] == others.max()
    assert glued["ex-top-weight"] > 2 * glued["ex-other-weight"]


@pytest.fixture(scope="module")
def result(chapter):
    return chapter.namespace["result"]


def test_dot_product_spread_follows_sqrt_d_k(chapter, result):
    assert chapter.glued["scale-worst-ratio"] < 0.05
    assert chapter.glued["scale-std-max"] == pytest.approx(chapter.glued["scale-sqrt-max"], rel=0.05)


def test_without_scaling_softmax_becomes_nearly_one_hot(chapter, result):
    top = result["max_weight_unscaled"]
    assert np.all(np.diff(top) > 0), "the largest weight climbs with d_k"
    assert chapter.glued["scale-max-unscaled"] > 0.95, "almost all the weight on one key"
    assert chapter.glued["scale-entropy-unscaled"] < 0.1 * chapter.glued["scale-entropy-uniform"]


def test_with_scaling_softmax_keeps_its_shape(chapter):
    glued = chapter.glued
    assert glued["scale-max-scaled-high"] - glued["scale-max-scaled-low"] < 0.06
    assert glued["scale-uniform"] < glued["scale-max-scaled-low"] and glued["scale-max-scaled-high"] < 0.3
    assert glued["scale-entropy-scaled"] > 0.8 * glued["scale-entropy-uniform"]
    assert glued["scale-entropy-uniform"] == pytest.approx(np.log(glued["scale-n-keys"]))


def test_temperature_moves_between_picking_and_plain_mean():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((5, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    _, sharp = sa.attention(Q, K, V, 1e-4)
    _, flat = sa.attention(Q, K, V, 1e4)
    np.testing.assert_allclose(sharp.max(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(flat, 1 / 7, atol=1e-3)
