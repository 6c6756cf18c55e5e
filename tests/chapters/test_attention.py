"""The page "Attention as a weighted average": the worked example and the sqrt(d_k) experiment."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import TINY, rounding, softmax_rtol

import selfattention as sa

STEM = "attention"


@pytest.fixture(scope="module")
def steps(chapter):
    return chapter.namespace["steps"]


def test_worked_example_every_step_is_the_formula(steps):
    np.testing.assert_array_equal(steps["scores"], steps["Q"] @ steps["K"].T)  # the same product
    # A root and a division on each side: 2 roundings, relative.
    np.testing.assert_allclose(steps["scaled"], steps["scores"] / np.sqrt(steps["Q"].shape[1]), rtol=rounding(2),
                               atol=0)
    # attention subtracts the maximum before dividing by sqrt(d_k), softmax after: 2 roundings on 2 max|scaled|.
    gap = rounding(2, 2 * np.abs(steps["scaled"]).max())
    np.testing.assert_allclose(steps["weights"], sa.softmax(steps["scaled"]), rtol=softmax_rtol(4, gap), atol=TINY)
    # The same product of the weights and V (n = 4 terms), clipped to V's range by attention.
    np.testing.assert_allclose(steps["output"], steps["weights"] @ steps["V"], rtol=0,
                               atol=rounding(2 * 4, np.abs(steps["V"]).max()))
    assert steps["X"].shape == (4, 3) and steps["Q"].shape == (4, 2) and steps["V"].shape == (4, 2)


def test_worked_example_rows_are_weighted_averages(chapter, steps):
    w, V, out = steps["weights"], steps["V"], steps["output"]
    # Rounding: normalising (n - 1 additions, a division) and summing again (n - 1), n = 4, on at most 1.
    assert chapter.glued["ex-row-sum-error"] <= rounding(2 * 4)
    assert np.all(w > 0) and chapter.glued["ex-min-weight"] == w.min()
    assert np.all(out >= V.min(axis=0)) and np.all(out <= V.max(axis=0))


def test_worked_example_softmax_amplifies_a_small_score_gap(chapter, steps):
    glued, row_weights = chapter.glued, steps["weights"][0]
    top = glued["ex-top-key"] - 1
    others = np.delete(row_weights, top)
    assert 0 < glued["ex-score-gap"] < 1, "beats the others by only a fraction of a unit"
    # ... yet gets exp(gap) times the weight of each of the others, which all get the same: up to 3 roundings
    # of the scaled scores in each weight and in the gap, on 2 max|scaled|, and the ratio's own 8 (three
    # exponentials, two normalisations, the quotient).
    rtol = np.expm1(rounding(9, 2 * np.abs(steps["scaled"]).max())) + rounding(8)
    np.testing.assert_allclose(glued["ex-top-weight"] / others, np.exp(glued["ex-score-gap"]), rtol=rtol, atol=0)
    assert glued["ex-other-weight"] == others.max()
    assert glued["ex-top-weight"] > 2 * glued["ex-other-weight"]


def test_a_score_is_a_bilinear_form_that_need_not_be_symmetric(chapter, steps):
    X, W_Q, W_K = (chapter.namespace[name] for name in ("X", "W_Q", "W_K"))
    W_QK = W_Q @ W_K.T  # (d_model, d_model)
    # e_ij = x_i W_QK x_j^T: d d_k d products of four factors, in another order than (X W_Q)(X W_K)^T.
    terms = np.abs(X) @ np.abs(W_Q) @ np.abs(W_K).T @ np.abs(X).T
    atol = rounding(4 * W_QK.size * W_Q.shape[1], terms)
    np.testing.assert_allclose(X @ W_QK @ X.T, steps["scores"], rtol=0, atol=atol)
    glued = chapter.glued
    i, j = glued["ex-asym-i"] - 1, glued["ex-asym-j"] - 1
    assert glued["ex-asym-ij"] == steps["scores"][i, j] > glued["ex-asym-ji"] == steps["scores"][j, i]
    assert not np.allclose(W_QK, W_QK.T)


def test_only_score_differences_within_a_row_matter(chapter, steps):
    """Adding one number to every score of a row leaves its weights; softmax uses it against overflow."""
    shifted = steps["scaled"] + np.array([[3.0], [-50.0], [700.0], [0.5]])  # one number per row
    # The shift and the subtraction of the row maximum round on max|scaled| + 700, twice each.
    gap = rounding(4, 2 * (np.abs(steps["scaled"]).max() + 700))
    np.testing.assert_allclose(sa.softmax(shifted), steps["weights"], rtol=softmax_rtol(4, gap), atol=TINY)
    limit = chapter.glued["softmax-overflow"]
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(limit + 0.01)) and np.isfinite(np.exp(limit - 0.01))
    # limit + 100 and limit + 99, and their difference, round on 810.
    rtol = softmax_rtol(2, rounding(3, limit + 100))
    np.testing.assert_allclose(sa.softmax([limit + 100, limit + 99]), sa.softmax([1.0, 0.0]), rtol=rtol, atol=TINY)


@pytest.fixture(scope="module")
def result(chapter):
    return chapter.namespace["result"]


def test_dot_product_spread_follows_sqrt_d_k(chapter, result):
    assert chapter.glued["scale-worst-ratio"] < 0.05
    # Not rounding: the spread of the chapter's 4000 pairs, within a few percent (test_dk_scaling's reason).
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
    assert glued["scale-entropy-uniform"] == np.log(glued["scale-n-keys"])  # the chapter glues log n itself


def test_without_scaling_the_softmax_saturates_and_its_derivative_vanishes(chapter, result):
    """The paper's reason: saturated softmax, small gradients; measured as the softmax's derivative."""
    glued = chapter.glued
    assert glued["scale-jacobian-unscaled"] == result["jacobian_unscaled"][-1]
    assert glued["scale-jacobian-unscaled"] < 0.2 * glued["scale-jacobian-scaled"]
    assert np.ptp(result["jacobian_scaled"]) < 0.05, "with scaling it keeps its size at every d_k"


def test_temperature_moves_between_picking_and_plain_mean():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((5, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    _, sharp = sa.attention(Q, K, V, 1e-4)
    _, flat = sa.attention(Q, K, V, 1e4)
    # Not rounding: how near the two limits these temperatures come.
    np.testing.assert_allclose(sharp.max(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(flat, 1 / 7, atol=1e-3)


# --- the exercises -----------------------------------------------------------------------------


def test_ex_a_number_added_to_a_row_changes_no_weight(chapter, steps):
    glued = chapter.glued
    assert glued["ex-attention-shift-by"] != 0
    # Rounding: the shift and the subtraction of the row maximum round on max|scaled| + |shift|, twice each
    # (the weights are at most 1).
    gap = rounding(4, 2 * (np.abs(steps["scaled"][0]).max() + abs(glued["ex-attention-shift-by"])))
    assert glued["ex-attention-shift-weight"] == pytest.approx(glued["ex-top-weight"], rel=softmax_rtol(4, gap), abs=0)
    assert glued["ex-attention-shift-gap"] <= softmax_rtol(4, gap)


def test_ex_the_weights_without_the_scaling(chapter):
    glued, scores = chapter.glued, chapter.namespace["steps"]["scores"][0]
    assert glued["ex-attention-unscaled-high"] - glued["ex-attention-unscaled-low"] == 1, "exp(1) in the solution"
    assert sorted(scores) == [glued["ex-attention-unscaled-low"]] * 3 + [glued["ex-attention-unscaled-high"]]
    e = np.exp(1.0)
    expected = np.where(scores == scores.max(), e, 1.0) / (3 + e)  # the solution's formula
    # The same scores, two softmax formulas (exp(-1) against 1 / exp(1)): the roundings of a softmax of 4.
    np.testing.assert_allclose(glued["ex-attention-unscaled-row"], [expected], rtol=softmax_rtol(4), atol=0)
    assert glued["ex-attention-unscaled-top"] > glued["ex-top-weight"], "the scaling shrinks the top key's lead"
    assert glued["ex-attention-unscaled-other"] == pytest.approx(1 / (3 + e), rel=softmax_rtol(4), abs=0)


def test_ex_fewer_keys(chapter):
    glued = chapter.glued
    assert glued["ex-attention-live-keys"] == chapter.namespace["n_keys"] // 4
    assert glued["ex-attention-live-uniform"] == 1 / glued["ex-attention-live-keys"]
    assert chapter.namespace["n_keys"] == chapter.namespace["N_KEYS"], "the live cell starts from the chapter's"
    assert glued["ex-attention-live-before"] == glued["scale-max-scaled"]
    assert glued["ex-attention-live-after"] > glued["ex-attention-live-before"], "it rises"
    before, after = glued["ex-attention-live-unscaled-before"], glued["ex-attention-live-unscaled"]
    assert before == glued["scale-max-unscaled"]  # the same run
    assert min(before, after) > 0.9, "one key takes nearly everything, with many keys or few"
    # "stays about where it is": within a few hundredths, while the scaled one moves by a tenth or more
    assert abs(after - before) < 0.05 < 0.1 < glued["ex-attention-live-after"] - glued["ex-attention-live-before"]

