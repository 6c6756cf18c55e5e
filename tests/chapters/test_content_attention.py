"""The page "Attention that looks at content": the blurred jump, the bilateral head, Noise2Noise targets, learned heads.

The tests read what the chapter computed (its variables and glued values);
the few that need more call the package with the chapter's arguments.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from tolerances import rounding, square_gap

import selfattention as sa
from selfattention import defaults, training
from selfattention.metrics import mean_attended_distance
from selfattention.studies import content_attention as ca
from selfattention.studies import noise2noise as n2n

STEM = "content-attention"


def test_the_gaussian_head_blurs_the_jump(chapter):
    glued = chapter.glued
    assert glued["content-gauss-near"] > 2 * glued["content-gauss-away"]


def test_the_jump_narrows_the_leave_one_out_band(chapter):
    ns = chapter.namespace
    assert chapter.glued["content-tau-loo"] < chapter.glued["content-tau-sine"]
    same_noise = ca.without_steps(ns["book"])[0]  # (N,): the book's noisy draw, the jump taken out
    # The step taken out (clean - sine, noisy - step) and the difference here: 4 roundings on the signals' size.
    scale = np.abs(ns["noisy"]).max() + np.abs(ns["clean"]).max()
    np.testing.assert_allclose(same_noise - ns["noisy"], -ns["jump"] * (ns["positions"] >= ns["at"]), rtol=0,
                               atol=rounding(4, scale))
    assert chapter.glued["content-tau-sine"] == sa.choose_temperature(same_noise, ns["positions"])[0]


def test_on_other_draws_the_jump_never_widens_the_band(chapter):
    ns = chapter.namespace
    ratios = []
    for seed in range(1, 8):
        signal = ca.step_signal(defaults.N, defaults.SIGMA, jump=ns["jump"], at=ns["at"], rng=seed)
        with_jump, _ = sa.choose_temperature(signal.noisy[0], signal.positions)
        without, _ = sa.choose_temperature(ca.without_steps(signal)[0], signal.positions)
        ratios.append(with_jump / without)
    assert max(ratios) <= 1 and np.median(ratios) < 0.8


def test_sympy_derives_the_bilateral_score(chapter):
    assert chapter.glued["content-identity-holds"] is True
    parts = chapter.namespace["parts"]
    assert set(parts) == {"position", "signal"}


def test_leave_one_out_cannot_choose_the_signal_temperature(chapter):
    """The masked bilateral head "predicts" a sample better the smaller tau_s: the leak of the learned head."""
    ns = chapter.namespace
    p, s = ns["positions"], ns["noisy"]
    losses = []
    for tau_s in (10.0, 1.0, 0.1, 0.01, 0.001):
        e = -((p[:, None] - p) ** 2) / ns["tau_p"] - (s[:, None] - s) ** 2 / tau_s  # (N, N), written out
        np.fill_diagonal(e, -np.inf)
        a = np.exp(e - e.max(axis=1, keepdims=True))
        losses.append(np.mean((a @ s / a.sum(axis=1) - s) ** 2))
    assert all(a > b for a, b in pairwise(losses)) and losses[-1] < defaults.SIGMA**2 / 2


def test_the_second_draw_adds_sigma_squared_to_the_expected_error():
    rng = np.random.default_rng(1)
    f, output, sigma = 1.2, 0.9, 0.3
    second = f + sigma * rng.standard_normal(400_000)
    # Not rounding: the mean of 400,000 squares, within sqrt(2 / 400000) = 0.2% of sigma**2 (one standard error).
    assert np.mean((output - second) ** 2) == pytest.approx((output - f) ** 2 + sigma**2, rel=0.01)


def test_the_bilateral_head_pinches_at_the_jump(chapter):
    glued = chapter.glued
    assert glued["content-across-bilateral"] < 0.6 * glued["content-across-gauss"]
    assert glued["content-bilateral-near"] < 0.7 * glued["content-gauss-near"]
    assert glued["content-bilateral-away"] > glued["content-gauss-away"], "away from the jump it rises"


def test_the_chosen_signal_temperature_does_not_cut_the_other_side_completely(chapter):
    glued = chapter.glued
    assert glued["content-jump-factor"] == np.exp(-chapter.namespace["jump"] ** 2 / glued["content-tau-s"])
    assert 0.1 < glued["content-jump-factor"] < 0.5


def test_two_draws_of_one_value_differ_by_root_two_sigma():
    rng = np.random.default_rng(2)
    a, b = 0.3 * rng.standard_normal((2, 400_000))
    # Not rounding: the root mean square of 400,000 differences, within 0.1% (one standard error).
    assert np.sqrt(np.mean((a - b) ** 2)) == pytest.approx(np.sqrt(2) * 0.3, rel=0.01)


def test_the_signals_are_as_described(chapter):
    ns = chapter.namespace
    for signals in (ns["train"], ns["test"]):
        assert np.all((signals.jumps >= ns["low"]) & (signals.jumps <= ns["high"]))
    assert len(ns["train"].jumps) == ns["train_count"] and len(ns["test"].jumps) == ns["test_count"]
    assert not set(ns["train"].jumps) & set(ns["test"].jumps), "the held-out signals are others"


def test_one_pair_is_not_enough(chapter):
    glued = chapter.glued
    assert glued["content-one-loss"] < glued["content-one-position-loss"]
    assert glued["content-one-content"] > glued["content-one-position"]
    many = max(glued["content-content-test-whole"], glued["content-position-test-whole"])
    assert glued["content-one-position"] > 2 * many, "both far above the heads trained on many pairs"


def test_a_random_start_never_forms_a_band(chapter):
    glued = chapter.glued
    assert glued["content-random-distance"] > 5 * glued["content-learned-distance"]
    assert glued["content-random-whole"] > 1.3 * glued["content-content-test-whole"]


@pytest.mark.slow
def test_the_random_start_settles_without_a_band(chapter):
    """Four times the training leaves it where it was: attending by value across the whole signal."""
    ns = chapter.namespace
    longer = n2n.train_content_head(ns["train"], steps=4 * ns["content_steps"], rng=defaults.SEED)
    _, weights = n2n.learned_outputs(longer, ns["test"], content=True)
    assert mean_attended_distance(weights, ns["positions"]) > 5 * chapter.glued["content-learned-distance"]
    assert longer.loss == pytest.approx(ns["random_start"].loss, rel=0.01)  # not rounding: "where it was", to 1%


def test_held_out_errors_near_and_away_from_the_jumps(chapter):
    glued = chapter.glued
    near = {head: glued[f"content-{head}-test-near"] for head in ("gauss", "position", "bilateral", "content")}
    away = {head: glued[f"content-{head}-test-away"] for head in near}
    assert near["content"] < near["bilateral"] < min(near["gauss"], near["position"])
    assert min(away, key=away.get) == "position"
    assert away["gauss"] > max(away["bilateral"], away["content"])
    assert glued["content-learned-vs-bilateral"] < 0.01


def test_the_second_draws_noise_is_a_floor(chapter):
    assert chapter.glued["content-train-loss"] > chapter.glued["content-sigma2"] == defaults.SIGMA**2


def test_the_gaussian_heads_band_is_narrow_because_of_the_jumps(chapter):
    assert chapter.glued["content-tau-gauss"] < chapter.glued["content-tau-sine"]


def test_the_learned_head_has_the_bilateral_entries(chapter):
    glued = chapter.glued
    for key, engineered in (("s-ss", "tau-s"), ("s-1s2", "tau-s"), ("p-pp", "tau-p"), ("p-1p2", "tau-p")):
        assert 1 / 1.5 < glued[f"content-read-{key}"] / glued[f"content-{engineered}"] < 1.5, key


def test_a_higher_sample_moves_the_band_to_larger_positions(chapter):
    head = chapter.namespace["content_head"]
    W_QK = head.W_Q @ head.W_K.T  # rows and columns [s, s^2, pt, pt^2, 1]
    assert W_QK[0, 2] > 0 and W_QK[0, 3] > 0, "the query's s meets the key's pt and pt^2 with positive entries"
    centres = []
    for s_i in (-1.0, 0.0, 2.0):  # a query in the middle (pt = 0) with a low, a middle and a high sample
        x_i = np.array([s_i, s_i**2, 0.0, 0.0, 1.0])
        lam1, lam2 = x_i @ W_QK[:, 2], x_i @ W_QK[:, 3]  # coefficients of pt_j and pt_j^2
        assert lam2 < 0
        centres.append(-lam1 / (2 * lam2))
    assert centres == sorted(centres)
    assert chapter.namespace["jump"] > 0, "in every training signal the jump goes up"


def test_sinusoidal_encodings_dot_products_depend_on_the_distance_only():
    p_i, p_j, omega = np.random.default_rng(2).uniform(0, 1, (3, 50))
    lhs = np.sin(omega * p_i) * np.sin(omega * p_j) + np.cos(omega * p_i) * np.cos(omega * p_j)
    # Four sines and cosines of 1 ulp (2 roundings each), their arguments, two products and a sum, on at most 1;
    # the right side rounds 4 times.
    np.testing.assert_allclose(lhs, np.cos(omega * (p_i - p_j)), rtol=0, atol=rounding(13))


def test_the_book_signal_jumps_where_the_text_says(chapter):
    ns = chapter.namespace
    assert ca.near_jump(ns["positions"], [ns["at"]]).sum() > 5, "the region near the jump has tokens"
    step = np.diff(ns["clean"])
    assert np.argmax(step) == np.searchsorted(ns["positions"], ns["at"]) - 1


@pytest.mark.parametrize("content", [False, True])
def test_the_heads_train_with_chapter_8s_adam_settings(chapter, chapter_run, content):
    """"the optimiser is the same Adam, with the same step size and the same scale of the random start"."""
    common = chapter_run("learning").namespace["common"]  # chapter 8's training settings
    train = chapter.namespace["train"]
    ours = (n2n.train_content_head if content else n2n.train_position_head)(train, steps=3, rng=common["rng"])
    theirs = training.fit_head(n2n.head_features(train, content=content), train.noisy, targets=train.second, steps=3,
                               learning_rate=common["learning_rate"], init_scale=common["init_scale"],
                               rng=common["rng"])
    np.testing.assert_array_equal(ours.losses, theirs.losses)  # the same training, call for call
    np.testing.assert_array_equal(ours.W_Q, theirs.W_Q)


# --- the exercises -----------------------------------------------------------------------------


def test_ex_the_cost_of_half_a_jump(chapter):
    glued = chapter.glued
    jump, tau_s = glued["content-jump"], glued["content-tau-s"]
    expected = np.exp(-((jump / 2) ** 2) / tau_s)  # the solution's formula
    # The head's ratio of two weights, exp of a difference of scores: the expanded square of the centred values
    # (+-J/4) against the square written out, and 4 roundings more (1 / tau_s folded into W_Q, the two terms
    # added); the ratio's exponentials, normalisations and quotient, and the formula's exponential: 7.
    gap = square_gap(jump / 4, tau_s) + rounding(4, jump**2 / tau_s)
    assert glued["ex-content-factor-value"] == pytest.approx(expected, rel=np.expm1(2 * gap) + rounding(7), abs=0)
    assert glued["ex-content-factor-value"] > glued["content-jump-factor"]


def test_ex_a_larger_signal_temperature_moves_towards_the_gaussian_head(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert ns["signal_tau"] == glued["content-tau-s"]
    np.testing.assert_array_equal(ns["live_book"].noisy, ns["book"].noisy)  # the chapter's step sine
    assert glued["ex-content-live-near-before"] == glued["content-bilateral-near"]  # the same head on the same draw
    assert glued["ex-content-live-near-after"] > glued["ex-content-live-near-before"]
    assert glued["ex-content-live-away-after"] < glued["ex-content-live-away-before"]


def test_ex_a_repeated_share_of_the_noise_gives_a_fixed_head_minus_two_sigma_squared_a_ii(chapter):
    """"For a head with fixed weights ... the last term is -2 sigma^2 a_ii E[z_i z'_i]": the Gaussian head's weights,
    a second draw repeating half of the first one's noise, over many draws."""
    ns = chapter.namespace
    positions, clean, sigma, share = ns["positions"], ns["clean"], defaults.SIGMA, 0.5
    _, A = sa.gaussian_head(clean, positions, ns["tau_gauss"])  # (N, N): fixed weights
    rng = np.random.default_rng(7)
    z, fresh = rng.standard_normal((2, 20_000, len(positions)))  # (2, R, N)
    second = clean + sigma * (share * z + np.sqrt(1 - share**2) * fresh)  # E[z_i z'_i] = share, and z'_i ~ N(0, 1)
    error = np.mean(((clean + sigma * z) @ A.T - second) ** 2, axis=0)  # (N,): over the draws
    expected = (A @ clean - clean) ** 2 + sigma**2 * np.sum(A**2, axis=1) + sigma**2 - 2 * sigma**2 * share * np.diag(A)
    # Not rounding: a mean over 20,000 draws of squares about 2 sigma**2 in size, one standard error about 1% of
    # sigma**2 per token; averaged over the N tokens, far less.
    assert np.mean(error) == pytest.approx(np.mean(expected), rel=0.01)


def test_ex_a_repeated_share_of_the_noise_moves_the_choice_to_a_smaller_signal_temperature(chapter):
    """"The bilateral head keeps more of its own sample as tau_s shrinks ... its minimum moves to a smaller tau_s"."""
    ns = chapter.namespace
    train, tau_p, taus_s = ns["train"], ns["tau_p"], ns["signal_temperatures"]
    # how closely the output follows the noise of its own sample, over the training signals: the mean of
    # (output_i - f(p_i)) sigma z_i, larger at every smaller tau_s
    kept = [np.mean((ca.bilateral_outputs(train, tau_p, tau_s) - train.clean) * (train.noisy - train.clean))
            for tau_s in taus_s]
    assert all(a > b for a, b in pairwise(kept))
    # a second draw that repeats half of the first one's noise (and stays standard normal): a smaller tau_s wins
    half = train.clean + 0.5 * (train.noisy - train.clean) + np.sqrt(0.75) * (train.second - train.clean)
    faulty = ca.StepSignals(train.positions, train.jumps, train.clean, train.noisy, half)
    _, (_, faulty_tau_s) = n2n.best_temperatures(faulty, ns["temperatures"], taus_s)
    assert faulty_tau_s < ns["tau_s"]
