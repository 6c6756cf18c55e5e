"""The page "Learning the head": the gradient, the two tricks, the leak, the learned band, non-unique projections.

The tests read what the chapter computed (its variables and glued values);
the tests of other noise draws and starts call the package with the
chapter's training settings (its ``common``).
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention import defaults, learning
from selfattention.metrics import mean_attended_distance, rmse
from selfattention.studies import learned_head as lh

STEM = "learning"


def test_the_hand_derived_gradient_matches_finite_differences(chapter):
    assert 0 < chapter.glued["learning-grad-gap"] < 1e-6


def test_the_engineered_scores_must_grow_to_hundreds(chapter):
    """"-(p_i - p_j)^2 / tau reaches -1/tau for the two ends": hundreds at the leave-one-out temperature."""
    assert chapter.glued["learning-inverse-tau"] == 1 / chapter.namespace["reference"].loo_temperature > 100


def test_plain_gradient_descent_needs_the_right_step_size(chapter):
    ns = chapter.namespace
    slow, good, saturated = ns["gd_runs"]
    assert ns["gd_etas"] == [1.0, 10.0, 100.0]
    assert slow.loss > ns["reference"].loo_loss > good.loss > ns["fit"].loss, "Adam ends lower than either"
    assert saturated.loss > 0.5, "stuck far above every other run"


def test_a_large_step_saturates_the_softmax_within_the_first_few_steps(chapter):
    ns = chapter.namespace
    two_steps = lh.learn(ns["positions"], ns["noisy"], optimizer="gd", learning_rate=ns["gd_etas"][-1], steps=2,
                         rng=defaults.SEED)
    assert np.abs(lh.centred_scores(two_steps.W_Q, two_steps.W_K, ns["X"])).max() > 100, "scores reach hundreds"
    assert np.all(ns["stuck_keys"][:-1] == defaults.N - 1), "every query but the last favours the last sample"
    assert chapter.glued["learning-gd-last-key"] == 100 * (defaults.N - 1) / defaults.N
    assert chapter.glued["learning-gd-median-share"] > 0.99


def test_a_saturated_softmax_has_almost_no_gradient(chapter):
    ns = chapter.namespace
    saturated = ns["gd_runs"][-1]
    _, dW_Q, dW_K = learning.loo_loss_and_grad(saturated.W_Q, saturated.W_K, ns["X"], ns["noisy"])
    _, mid_Q, mid_K = learning.loo_loss_and_grad(*ns["fit"].checkpoints[200], ns["X"], ns["noisy"])
    assert max(np.abs(dW_Q).max(), np.abs(dW_K).max()) < 0.01 * max(np.abs(mid_Q).max(), np.abs(mid_K).max())


def test_centring_the_positions_decorrelates_them_and_speeds_training(chapter):
    glued = chapter.glued
    assert glued["learning-corr-raw"] > 0.95, "p and p^2 are almost the same feature"
    pt = chapter.namespace["X"][:, 0]
    # Zero up to rounding: the means, deviations, products and sums, 4 n roundings on at most 1, over the spreads.
    assert glued["learning-corr-centred"] <= rounding(4 * pt.size) / (pt.std() * (pt**2).std()), "zero up to rounding"
    assert 0 < glued["learning-steps-centred"] < glued["learning-steps-raw"] / 2
    raw = chapter.namespace["raw"]
    assert raw.losses[glued["learning-steps-raw"]] <= chapter.namespace["reference"].loo_loss


def test_centred_tokens_express_the_same_heads(chapter):
    """[pt, pt^2, 1] is an invertible linear map of [p, p^2, 1]."""
    p = chapter.namespace["positions"]
    raw = sa.positional_features(np.zeros_like(p), p)[:, 1:]  # (N, 3)
    T = np.linalg.lstsq(raw, chapter.namespace["X"], rcond=None)[0]  # (3, 3)
    # An exact fit: LAPACK's least squares is backward stable, its residual a small multiple of m n eps
    # (m = N, n = 3) of |raw| |T| + |X|; the product raw @ T rounds 6 times more.
    atol = rounding(3 * len(p) * 3 + 6, np.abs(raw) @ np.abs(T) + np.abs(chapter.namespace["X"]))
    np.testing.assert_allclose(raw @ T, chapter.namespace["X"], rtol=0, atol=atol)
    assert abs(np.linalg.det(T)) > 1e-3


def test_an_honest_prediction_cannot_beat_the_noise_variance_on_average():
    """E[(s_i - g)^2] = sigma^2 + (f_i - g)^2 when g does not depend on the noise z_i."""
    rng = np.random.default_rng(0)
    f, g, sigma = 0.3, 0.1, 0.3
    s = f + sigma * rng.standard_normal(400_000)
    # Not rounding: the mean of 400,000 squares, within 0.3% (one standard error) of its expectation.
    assert np.mean((s - g) ** 2) == pytest.approx(sigma**2 + (f - g) ** 2, rel=0.01)


def test_the_leaking_head_goes_far_below_the_noise_variance(chapter):
    glued = chapter.glued
    assert glued["learning-leak-loss"] < 0.05 * glued["learning-engineered-loss"]
    assert glued["learning-leak-loss"] < glued["learning-sigma2"] / 10, "far below the noise variance"
    assert glued["learning-leak-percent"] == 100 * glued["learning-leak-loss"] / glued["learning-engineered-loss"]


def test_the_leaking_head_pairs_the_samples_and_copies_them(chapter):
    ns, glued = chapter.namespace, chapter.glued
    leak = ns["leak"]
    W_QK = leak.W_Q @ leak.W_K.T  # rows and columns [s, pt, pt^2, 1]
    assert np.argmax(np.abs(W_QK)) == 0 and W_QK[0, 0] > 0, "the largest entry pairs s_i with s_j"
    assert glued["learning-leak-copy"] < 0.25 * defaults.SIGMA
    assert glued["learning-leak-truth"] > 0.95 * glued["learning-noisy-truth"], "no better than the samples"
    weights, noisy = ns["leak_weights"], ns["noisy"]
    assert np.all(np.diag(weights) == 0)
    assert mean_attended_distance(weights, ns["positions"]) > 0.15, "keys chosen by value, not neighbours"
    high = noisy > np.median(noisy)
    assert np.mean((weights @ noisy)[high]) > np.mean(noisy[high]) - 0.1, "high samples attend to high samples"


def test_the_band_forms_from_uniform_attention(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["learning-uniform-gap"] < 1e-3
    reach = [mean_attended_distance(ns["weights_by_step"][t], ns["positions"]) for t in ns["checkpoints"]]
    assert all(a > b for a, b in pairwise(reach)), "the band narrows from checkpoint to checkpoint"
    assert reach[1] < reach[0] / 2, "a band has formed at the second checkpoint"


def test_the_starting_loss_is_that_of_uniform_attention(chapter):
    """"every sample predicted by the mean of the others"."""
    noisy = chapter.namespace["noisy"]
    others = (noisy.sum() - noisy) / (len(noisy) - 1)
    # Not rounding: the start is small random projections (0.1 a entry), whose weights are uniform to about 1%.
    assert chapter.glued["learning-loss-start"] == pytest.approx(np.mean((others - noisy) ** 2), rel=1e-3)


def test_the_learned_head_beats_the_best_engineered_head(chapter):
    glued = chapter.glued
    assert glued["learning-loss-end"] < glued["learning-engineered-loss"]
    assert glued["learning-loss-ratio"] == glued["learning-loss-end"] / glued["learning-engineered-loss"]
    assert glued["learning-loss-start"] > 5 * glued["learning-loss-end"]


def test_on_other_draws_the_learned_loss_is_within_the_stated_tolerance(chapter):
    glued = chapter.glued
    assert glued["learning-tolerance"] == 100 * lh.LOSS_TOLERANCE
    assert glued["learning-other-ratio-max"] <= 1 + lh.LOSS_TOLERANCE
    assert glued["learning-other-count"] == len(chapter.namespace["other_draws"])


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_the_tolerance_holds_for_more_noise_draws(chapter, seed):
    positions, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=seed)
    reference = lh.engineered(positions, noisy, defaults.SIGMA)
    fit = lh.learn(positions, noisy, **chapter.namespace["common"])
    assert fit.loss <= (1 + lh.LOSS_TOLERANCE) * reference.loo_loss


def test_every_row_is_a_gaussian_bump(chapter):
    assert chapter.glued["learning-bumps"] == chapter.glued["learning-n"] == defaults.N
    assert np.all(chapter.namespace["tau_rows"] > 0)


def test_the_middle_query_follows_the_engineered_parabola(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["learning-middle-gap"] < 0.25
    assert ns["in_band"].sum() > 10, "the comparison covers the keys where the weight is"
    assert glued["learning-middle-p"] == ns["positions"][ns["middle"]]


def test_the_middle_temperature_lies_between_the_loo_choice_and_the_best(chapter):
    glued = chapter.glued
    assert glued["learning-tau-loo"] < glued["learning-tau-middle"] < glued["learning-tau-star"]


def test_the_learned_temperature_drifts_and_the_end_centres_lie_outside(chapter):
    ns, glued = chapter.namespace, chapter.glued
    tau = ns["tau_rows"]
    assert np.all(np.diff(tau) < 0), "falls steadily from the left end to the right"
    assert glued["learning-tau-max"] == tau[0] and glued["learning-tau-min"] == tau[-1]
    assert glued["learning-centre-left"] < 0 and glued["learning-centre-right"] > 1


def test_other_draws_drift_other_ways(chapter):
    profiles = chapter.namespace["other_taus"]
    assert any(p[-1] > p[0] for p in profiles), "not every draw narrows the band to the right"


def test_the_learned_head_is_a_worse_smoother_than_the_engineered_one(chapter):
    glued = chapter.glued
    assert glued["learning-rmse-learned"] > 1.1 * glued["learning-rmse-engineered"]


def test_a_random_g_changes_the_projections_but_not_the_scores(chapter):
    glued = chapter.glued
    assert glued["learning-g-change"] > 0.5
    assert glued["learning-g-score-gap"] < 1e-12, "rounding error"


def test_two_starts_learn_different_projections_and_the_same_product(chapter):
    glued = chapter.glued
    assert glued["learning-starts-wq"] > 50
    assert glued["learning-starts-wqk"] < 5


def test_the_keys_constant_row_keeps_its_start(chapter):
    """Each row of dL/dE sums to zero, so the last row of W_K gets no gradient."""
    fit, W_QK = chapter.namespace["fit"], chapter.namespace["W_QK"]
    # Not exactly: its gradient is zero but for rounding, which Adam divides by its 1e-8 (test_training's reason);
    # 2000 steps of 0.1 leave it within 1e-6 of its start (7e-8 measured).
    np.testing.assert_allclose(fit.W_K[-1], fit.checkpoints[0][1][-1], rtol=0, atol=1e-6)
    assert np.abs(W_QK[:, -1]).max() < 0.05 * np.abs(W_QK).max(), "the last column of the product stays small"


def test_the_smoothed_output_is_measured_without_the_mask(chapter):
    ns = chapter.namespace
    output, _ = learning.learned_head(ns["fit"].W_Q, ns["fit"].W_K, ns["X"], ns["noisy"])
    assert chapter.glued["learning-rmse-learned"] == rmse(output, ns["clean"])


# --- the exercises -----------------------------------------------------------------------------


def test_ex_g_equals_two_i_halves_w_k(chapter):
    ns = chapter.namespace
    assert chapter.glued["ex-learning-scale-factor"] == 0.5
    np.testing.assert_array_equal(ns["ratios"], 0.5)  # dividing by 2 is exact
    np.testing.assert_array_equal(ns["W_Q_2"], 2 * ns["fit"].W_Q)
    # Rounding at most: every factor is scaled by a power of two, so one order of the products gives the same
    # scores exactly; another order could round within the products' bound, relative to the largest score.
    X = ns["X"]
    terms = (np.abs(X) @ np.abs(ns["fit"].W_Q) @ np.abs(ns["fit"].W_K).T @ np.abs(X).T).max()
    scale = np.abs((X @ ns["fit"].W_Q) @ (X @ ns["fit"].W_K).T).max()
    assert chapter.glued["ex-learning-scale-gap"] <= rounding(4 * X.shape[1] ** 2 * 3, terms) / scale


def test_ex_a_tenth_of_the_step_learns_less_in_as_many_steps(chapter):
    glued, ns = chapter.glued, chapter.namespace
    # the solution starts where the live cell does, and the live cell leaves the chapter's steps and eta alone
    assert (ns["live_steps"], ns["live_eta"]) == (ns["short_steps"], ns["eta"]) == (200, glued["learning-eta"])
    assert ns["steps"] == len(ns["fit"].losses) and glued["ex-learning-live-steps"] == ns["short_steps"]
    assert ns["short"].loss == glued["ex-learning-live-fast"]  # the live cell's run is the solution's first
    assert glued["learning-loss-start"] > glued["ex-learning-live-slow"] > glued["ex-learning-live-fast"]
    for name, rate in ns["rates"].items():
        run = ns["runs"][name]
        start_Q, start_K = run.checkpoints[0]
        reach = glued[f"ex-learning-live-reach-{name}"]
        assert reach == rate * ns["short_steps"]
        # "Adam moves each entry by at most about eta a step": no entry of either projection moved further
        assert max(np.abs(run.W_Q - start_Q).max(), np.abs(run.W_K - start_K).max()) <= reach
        assert glued[f"ex-learning-live-move-{name}"] == np.linalg.norm(run.W_Q - start_Q)
        assert glued[f"ex-learning-live-score-{name}"] == np.abs(lh.centred_scores(run.W_Q, run.W_K, ns["X"])).max()
    # "a tenth as far" at most (eta / 10 against eta, times the same steps: a rounding of the division and product)
    assert glued["ex-learning-live-reach-slow"] == pytest.approx(glued["ex-learning-live-reach-fast"] / 10,
                                                                 rel=rounding(3), abs=0)
    # but W_Q actually travels well over a tenth as far ("about 0.38")
    ratio = glued["ex-learning-live-move-ratio"]
    assert ratio == glued["ex-learning-live-move-slow"] / glued["ex-learning-live-move-fast"] and 0.2 < ratio < 0.6
    # the scores: far smaller with the small step, and both below what the band needs, which is hundreds
    assert glued["ex-learning-live-score-slow"] < glued["ex-learning-live-score-fast"] / 3
    assert glued["ex-learning-live-score-fast"] < glued["learning-inverse-tau"]


def test_ex_a_causal_mask_leaves_the_query_its_own_sample(chapter):
    """"with s_i in q_i, the head can still weigh the keys before i by the product s_i s_j ... so its output still
    moves with its own noise z_i": the leaking head, given the causal mask with the diagonal masked (rows 2 to N)."""
    ns = chapter.namespace
    leak, positions, clean, noisy = ns["leak"], ns["positions"], ns["clean"], ns["noisy"]
    X = lh.features_of(leak, positions, noisy)  # (N, 4): [s, pt, pt^2, 1]
    W_QK = leak.W_Q @ leak.W_K.T
    assert np.abs(W_QK[0, 0]) == np.abs(W_QK).max(), "the product s_i s_j weighs most"
    n = len(positions)
    before = np.tril(np.ones((n, n), dtype=bool), k=-1)[1:]  # (N - 1, N): keys j < i
    output, _ = sa.attention(X[1:] @ leak.W_Q, X @ leak.W_K, noisy[:, None], 1.0, mask=before)
    # Not rounding: over the N - 1 queries, the output's error follows the query's own noise (0.53 measured).
    assert np.corrcoef(output[:, 0] - clean[1:], noisy[1:] - clean[1:])[0, 1] > 0.3
