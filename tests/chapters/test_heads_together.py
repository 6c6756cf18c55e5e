"""The page "Heads that work together": the stream, the hand-built circuit, its ablation, training, the learned circuit.

The tests read what the chapter computed (its variables and glued values);
the few that need more call the package with the chapter's arguments.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from chapters.book import source
from tolerances import TINY, assert_close, rounding, softmax_rtol

from selfattention import circuit_learning as cl
from selfattention import defaults, induction, tokens, training
from selfattention.core import softmax
from selfattention.head import gaussian_head_weights
from selfattention.studies import induction as study
from selfattention.studies import induction_reach as reach
from selfattention.tokens import Stream

STEM = "heads-together"


def sd_of_share(p, count):
    """The standard deviation of a share of ``count`` independent draws that each succeed with probability p."""
    return float(np.sqrt(p * (1 - p) / count))


# --- from signals to tokens -------------------------------------------------------------------


def test_the_vocabulary_is_the_letters_and_the_stream_has_four_subspaces(chapter):
    g, ns = chapter.glued, chapter.namespace
    assert g["heads-vocab"] == len(tokens.LETTERS) == 26
    s = Stream(g["heads-vocab"])
    assert [len(range(s.d_model)[sl]) for sl in (s.token, s.position, s.previous, s.prediction)] \
        == [26, 3, 26, 26]
    assert g["heads-width"] == s.d_model == 3 * 26 + 3
    assert g["heads-rows"] == 2 * g["heads-half"] + 1 == ns["X"].shape[0]
    example = ns["example"]
    np.testing.assert_array_equal(example[:6], example[6:])
    assert g["heads-example"] == "".join(tokens.to_text(example))
    np.testing.assert_array_equal(example, tokens.repeated_sequences(1, 6, 26, rng=defaults.SEED)[0])
    assert not ns["X"][0, s.token].any(), "the start marker holds no symbol"


def test_row_i_is_token_i_at_position_i_over_n(chapter):
    """N tokens, N + 1 rows: row 0 is the start marker; row i holds token i (o_i, one-hot) at p_i = i / N, and the
    stream holds p_i - 1/2, in [-1/2, 1/2]. N counts the tokens, as on the notation page."""
    ns, g = chapter.namespace, chapter.glued
    X, example, s = ns["X"], ns["example"], Stream(26)
    N = len(example)
    assert X.shape[0] == N + 1 and g["heads-tokens"] == N == 2 * g["heads-half"]
    np.testing.assert_array_equal(X[1:, s.token].argmax(axis=1), example)
    assert_close(X[:, s.position][:, 0] + 0.5, np.arange(N + 1) / N, rounding(2))
    assert X[:, s.position][:, 0].min() == -0.5 and X[:, s.position][:, 0].max() == 0.5
    text = source(STEM)
    assert "p_i = i/N" in text and "N - 1" not in text and "N-1" not in text


def test_each_layer_adds_its_output_to_the_stream(chapter):
    ns = chapter.namespace
    run, layers = ns["run"], ns["layers"]
    for k, layer in enumerate(layers):
        added, _ = layer(run.streams[k])
        np.testing.assert_array_equal(run.streams[k + 1], run.streams[k] + added)


def test_each_layer_adds_its_weights_times_its_values_times_w_o(chapter):
    """X^[k] = X^[k-1] + A^[k] X^[k-1] W_V^[k] W_O^[k]: the bracketed superscript numbers the layer, one head each.
    The notation page's head_1, ..., head_M are the heads of one layer, so the chapter writes no head_k for a
    layer, nor a parenthesised superscript, which numbers the heads of one layer."""
    ns = chapter.namespace
    run = ns["run"]
    for k, layer in enumerate(ns["layers"]):
        X, A = run.streams[k], run.weights[k]
        assert_close(run.streams[k + 1], X + A @ X @ layer.head.W_V @ layer.W_O, rounding(4 * X.shape[0], 1))
    assert "\\text{head}_" not in source(STEM) and "^{(" not in source(STEM)


# --- the previous-token head ------------------------------------------------------------------


def test_the_previous_token_head_is_the_offset_head_one_token_back(chapter):
    ns, g = chapter.namespace, chapter.glued
    head, N = ns["layers"][0].head, ns["n_rows"]
    s = Stream(26)
    np.testing.assert_array_equal(head.W_Q[s.position], gaussian_head_weights(offset=-1 / (N - 1))[0][1:])
    assert head.temperature == (1 / (N - 1)) ** 2 / g["heads-margin"]
    X = ns["X"]
    scores = (X @ head.W_Q) @ (X @ head.W_K).T  # -(p_i + delta - p_j)**2
    rows = np.arange(2, N)
    masked = np.where(np.tri(N, dtype=bool), scores, -np.inf)
    np.testing.assert_array_equal(masked[rows].argmax(axis=1), rows - 1)
    # The keys on either side of i - 1 score (1/(N-1))**2 less: the expanded square rounds on P**2, P = 0.6.
    gap = scores[rows, rows - 1] - scores[rows, rows]
    assert_close(gap, (1 / (N - 1)) ** 2, rounding(24, 0.6**2))
    assert_close(scores[rows, rows - 1] - scores[rows, rows - 2], (1 / (N - 1)) ** 2, rounding(24, 0.6**2))


def test_the_first_layer_writes_the_previous_symbol(chapter):
    ns, g = chapter.namespace, chapter.glued
    run, s, N = ns["run"], Stream(26), ns["n_rows"]
    written = run.streams[1][:, s.previous]
    predecessor = np.vstack([np.zeros(26), ns["X"][:-1, s.token]])  # o_{i-1}
    A1 = run.weights[0]
    assert_close(written, predecessor, (1 - np.append(1.0, A1[np.arange(1, N), np.arange(N - 1)]))[:, None] + 1e-15)
    rows = np.arange(2, N)
    assert g["heads-prev-min"] == A1[rows, rows - 1].min() > 0.999


# --- the induction head -----------------------------------------------------------------------


def test_the_induction_head_scores_the_query_symbol_against_the_previous_symbol(chapter):
    ns, g = chapter.namespace, chapter.glued
    head, run, s = ns["layers"][1].head, ns["run"], Stream(26)
    X1 = run.streams[1]
    scaled = (X1 @ head.W_Q) @ (X1 @ head.W_K).T / head.temperature
    assert_close(scaled, g["heads-margin"] * X1[:, s.token] @ X1[:, s.previous].T, rounding(60, 8))
    assert head.temperature == 1 / g["heads-margin"]


def test_for_one_hot_rows_the_dot_product_is_the_bilateral_score_up_to_a_constant():
    eye = np.eye(26)
    half_squared = -0.5 * ((eye[:, None, :] - eye[None, :, :]) ** 2).sum(axis=2)  # -||o_a - o_b||^2 / 2
    np.testing.assert_array_equal(half_squared, eye @ eye.T - 1)
    e = np.array([[0.3, 8.0, -1.0]])
    assert_close(softmax(e - 1), softmax(e), softmax_rtol(3, rounding(2, 8)))


def test_the_gaussian_in_the_symbols_is_the_dot_product_less_one_but_for_the_first_two_keys(chapter):
    """-||o_i - prev_j||^2 / 2 - (o_i . prev_j - 1) = (1 - ||prev_j||^2) / 2: 1/2 where the first layer wrote no
    symbol (keys 0 and 1), within layer 1's leak of 0 where it wrote one (prev_j holds prev_min of o_{j-1} at least)."""
    ns, g = chapter.namespace, chapter.glued
    run, s = ns["run"], Stream(26)
    query, key = ns["X"][1:, s.token], run.streams[1][:, s.previous]  # o_i; what layer 1 wrote, ~o_{j-1}
    gauss = -0.5 * ((query[:, None, :] - key[None, :, :]) ** 2).sum(axis=2)
    gap = gauss - (query @ key.T - 1)
    assert_close(gap[:, :2], 0.5, 1 - g["heads-prev-min"] + 1e-15)
    assert np.abs(gap[:, 2:]).max() < 1 - g["heads-prev-min"] + 1e-15


def test_the_example_shows_both_heads_at_work(chapter):
    ns, g = chapter.namespace, chapter.glued
    run, half, N, example = ns["run"], 6, ns["n_rows"], ns["example"]
    A2 = run.weights[1]
    rows = np.arange(half + 1, N)
    assert g["heads-prefix-min"] == A2[rows, rows - half + 1].min() > 0.99
    # The first half holds six different letters: no letter has come before, and layer 2's rows are nearly
    # uniform. Nearly: layer 1 gives at most 1 - prev_min of a row to symbols other than o_{i-1}, so a key's
    # score is off its exact 0 by at most margin (1 - prev_min); each weight moves by expm1(2 that) at most.
    assert len(set(example[:half])) == half
    leak = g["heads-margin"] * (1 - run.weights[0][np.arange(1, N), np.arange(N - 1)].min())
    for i in range(1, half + 1):
        assert_close(A2[i, :i + 1], 1 / (i + 1), (np.expm1(2 * leak) + softmax_rtol(N)) / (i + 1))
        assert not np.allclose(A2[i, :i + 1], 1 / (i + 1), rtol=0, atol=1e-9)
    right = run.predicted[half + 1:-1] == example[half + 1:]
    assert g["heads-example-right"] == right.sum() == g["heads-example-count"] == N - half - 2
    assert run.predicted[half] != example[half], "the repeat's first letter is out of reach"


def test_the_stream_figure_shows_what_each_layer_wrote(chapter):
    ns = chapter.namespace
    picked, used, half = ns["picked"], ns["used"], 6
    k = used.size
    token, previous, prediction = picked[:, :k], picked[:, k + 3:2 * k + 3], picked[:, 2 * k + 3:]
    np.testing.assert_array_equal(previous[2:].argmax(axis=1), token[1:-1].argmax(axis=1))  # moved down a row
    np.testing.assert_array_equal(prediction[half + 1:-1].argmax(axis=1), token[half + 2:].argmax(axis=1))


# --- it works, and it is the composition ------------------------------------------------------


def test_the_circuit_predicts_the_repeat_and_the_first_half_at_chance(chapter):
    g, ns = chapter.glued, chapter.namespace
    count = g["heads-count"]
    assert count == len(ns["sequences"]) == 2000
    chance = 1 / 26
    assert g["heads-chance"] == pytest.approx(100 * chance)
    assert abs(g["heads-first"] / 100 - chance) < 4 * sd_of_share(chance, 5 * count)
    assert 80 < g["heads-repeat"] < 100
    assert g["heads-once"] == 100.0 and g["heads-more"] < 50
    share = g["heads-ambiguous"] / 100
    # repeat accuracy = once share + more share: the two kinds of rows make up the repeat
    assert g["heads-repeat"] == pytest.approx((1 - share) * g["heads-once"] + share * g["heads-more"], abs=1e-9)


def test_knocking_out_the_first_layer_makes_every_key_score_the_same(chapter):
    g, ns = chapter.glued, chapter.namespace
    hand, seqs = ns["hand"], ns["sequences"][:50]
    _, A = cl.circuit_forward(hand, seqs, 26, knocked_out=[0])
    N = seqs.shape[1] + 1
    assert_close(A[1], np.tril(np.ones((N, N))) / np.arange(1, N + 1)[:, None], softmax_rtol(N))
    assert g["heads-knocked-repeat"] < 20 and g["heads-knocked-repeat"] == 100 * ns["knocked"][1]
    # The first layer alone predicts nothing: it writes nothing into the prediction subspace, so every row
    # predicts the first letter, right by chance.
    first_only = study.accuracy(hand[:1], ns["sequences"], 26, 6)[1]
    assert abs(first_only - 1 / 26) < 4 * sd_of_share(1 / 26, 5 * 2000)
    predicted, _ = cl.circuit_forward(hand[:1], ns["sequences"], 26)
    assert (predicted == 0).all(), "the argmax of the empty prediction subspace is the first letter"
    # The second alone beats chance (it predicts the most frequent letter so far): 5 x 2000 rows of the repeat,
    # so 4 standard deviations of a share near 1/26 are under 1 point.
    assert g["heads-knocked-repeat"] / 100 > 1 / 26 + 4 * sd_of_share(1 / 26, 5 * 2000)
    # ... and on the row just before the repeat (2000 rows), far above chance.
    before = g["heads-knocked-before-repeat"]
    assert before == 100 * ns["alone"][:, 6].mean() == g["ex-heads-live-before-repeat"]
    assert before / 100 > 1 / 26 + 4 * sd_of_share(1 / 26, 2000)


def test_the_second_head_alone_keeps_most_of_the_accuracy_when_the_vocabulary_is_small(chapter):
    """The claim that the composition is what finds the repeat holds when the half is much shorter than the
    vocabulary: with two letters the second head alone keeps most of the accuracy, with 26 it keeps little."""
    g, ns = chapter.glued, chapter.namespace
    assert [g["heads-few-0"], g["heads-few-1"]] == ns["few"] == [2, 3]
    both, knocked = reach.knockout_by_vocabulary([2, 3], 6, 2000, rng=defaults.SEED + 7)
    assert [g["heads-few-both-0"], g["heads-few-both-1"]] == list(100 * both)
    assert [g["heads-few-knocked-0"], g["heads-few-knocked-1"]] == list(100 * knocked)
    assert g["heads-few-chance-0"] == 50.0 and g["heads-few-chance-1"] == pytest.approx(100 / 3)
    # 10,000 rows each: a share's standard deviation is under half a point.
    assert knocked[0] > 0.8 * both[0] and knocked[0] > 0.5 + 4 * sd_of_share(0.5, 10_000)
    assert knocked[1] > 1 / 3 + 4 * sd_of_share(1 / 3, 10_000)
    assert g["heads-knocked-repeat"] < 0.2 * g["heads-repeat"]
    # "most of that is the 50 % of a guess": chance is more than half of what the second head alone keeps.
    assert g["heads-few-chance-0"] > g["heads-few-knocked-0"] / 2


def test_the_reach_of_the_circuit_falls_with_the_half_and_the_weight_of_a_match_with_n(chapter):
    g, ns = chapter.glued, chapter.namespace
    halves = [g[f"heads-long-half-{k}"] for k in range(3)]
    assert halves == ns["halves_tried"] == [6, 30, 100]
    repeat = [g[f"heads-long-repeat-{k}"] for k in range(3)]
    ambiguous = [g[f"heads-long-ambiguous-{k}"] for k in range(3)]
    assert repeat == list(100 * ns["by_half"]) and ambiguous == list(100 * ns["ambiguous_by_half"])
    # At least 5000 rows each: the accuracies' standard deviations are under 0.8 points.
    assert abs(repeat[0] - g["heads-repeat"]) < 3 and repeat[0] > repeat[1] + 20 > repeat[2] + 40
    assert ambiguous[0] < 25 < 60 < ambiguous[1] < 90 < ambiguous[2]
    # "(the 18 % above, on another sample)": two estimates of one share near 0.18 from at least 5000 rows each,
    # each with a standard deviation under 0.6 points, so they differ by under 3 points (about 4 sd).
    assert abs(ambiguous[0] - g["heads-ambiguous"]) < 3
    margin = induction.MARGIN
    assert g["heads-match-n"] == 12 and g["heads-match-long-n"] == 2000
    assert g["heads-match-formula"] == np.exp(margin) / (np.exp(margin) + 12)
    assert g["heads-match-long"] == np.exp(margin) / (np.exp(margin) + 2000)
    # The circuit's own weight: the first layer's rows are not exactly one-hot, each key's score is off the
    # formula's by about exp(-margin) of the margin, so the weight is within a percent of the formula's.
    assert g["heads-match-long-run"] == pytest.approx(g["heads-match-long"], rel=0.01)
    assert reach.match_weight(26, 12) == pytest.approx(g["heads-match-formula"], rel=0.01)
    # "A margin that grows with log N" keeps it: margin + log N gives exp(margin) / (exp(margin) + 1) at any N.
    for n in (12, 2000):
        assert reach.match_weight(26, n, margin + np.log(n)) == pytest.approx(
            np.exp(margin) / (np.exp(margin) + 1), rel=0.01)


def test_the_accuracy_figure_draws_both_circuits(chapter):
    ns = chapter.namespace
    per_row = ns["per_row"]
    assert study.halves(per_row["both layers"], 6)[1] == ns["repeat"]
    assert study.halves(per_row["first knocked out"], 6)[1] == ns["knocked"][1]
    # The alt text: knocked out, the shaded rows (those predicting the repeat's letters after its first) are
    # two to four times chance, and the curve peaks just before them, on the row predicting the first letter.
    alone = per_row["first knocked out"]
    shaded = alone[7:12] * 26
    assert 2 < shaded.min() and shaded.max() < 4
    assert int(np.argmax(alone)) == 6
    # ... and the first half's last row (it predicts the repeat's first letter): about six times chance
    # knocked out, about three times with both layers; every row before it on chance (within 1.5 times)
    both = per_row["both layers"]
    assert 5 < alone[6] * 26 < 7 and 2.5 < both[6] * 26 < 3.5
    assert (both[:6] * 26 < 1.5).all() and (alone[:6] * 26 < 1.5).all()


# --- the gradient, the data, training -----------------------------------------------------------


def test_the_hand_built_circuit_is_a_point_of_the_trained_space_once_padded(chapter):
    """Its first layer has d_k = 3; padded with zero columns to d_vocab, that layer attends the same, and the
    second layer is already d_vocab wide."""
    hand, seqs = chapter.namespace["hand"], chapter.namespace["sequences"][:50]
    W_Q, W_K, W_V, W_O = hand[0]
    assert W_Q.shape == W_K.shape == (81, 3) and all(w.shape == (81, 26) for w in hand[1][:3])
    pad = ((0, 0), (0, 23))
    padded = [(np.pad(W_Q, pad), np.pad(W_K, pad), W_V, W_O), hand[1]]
    _, A = cl.circuit_forward(hand, seqs, 26)
    _, padded_A = cl.circuit_forward(padded, seqs, 26)
    # The zero columns add exact zero products to every score; only the order of the sums may change: each
    # score is a dot product of 26 terms (2 * 26 roundings) on the scores' size, in each computation.
    X = tokens.residual_stream(seqs, 26)
    scores = (X @ W_Q) @ (X @ W_K).transpose(0, 2, 1)
    gap = 2 * rounding(2 * 26, scores)
    N = seqs.shape[1] + 1
    assert_close(padded_A[0], A[0], softmax_rtol(N, gap) * A[0] + TINY)


def test_the_gradient_agrees_with_finite_differences(chapter):
    # As for chapter 8's head: central differences are off by step**2 |L'''| / 6 and the loss's rounding over
    # the step, some 1e-10 of the gradient's scale here.
    assert chapter.glued["heads-grad-gap"] < 1e-6


def test_both_paths_reach_the_first_layer(chapter):
    """With the second layer's projections zero, no gradient comes back through its head; the first layer still
    learns, straight down the residual connection, from what it writes into the prediction subspace."""
    ns = chapter.namespace
    small, batch = ns["small"], ns["batch"]
    silent = [small[0], tuple(np.zeros_like(w) for w in small[1])]
    _, (first, _) = cl.circuit_loss_and_grad(silent, batch, 3)
    _, (alone,) = cl.circuit_loss_and_grad(small[:1], batch, 3)
    for g, h in zip(first, alone, strict=True):
        assert np.abs(g).max() > 1e-3
        np.testing.assert_array_equal(g, h)  # the one-layer model's gradient: the same path, the same sums
    s = Stream(3)
    outside = np.ones(s.d_model, dtype=bool)
    outside[s.prediction] = False
    assert not first[3][:, outside].any(), "down the residual path only the prediction columns count"


def test_the_positional_shortcut_solves_one_period_only(chapter):
    g = chapter.glued
    assert g["heads-shortcut-repeat"] == 100.0 > g["heads-repeat"]
    assert g["heads-shortcut-other"] < 10 < 90 < g["heads-hand-other"]
    assert g["heads-periods"] == "4, 5, 6"


def test_the_row_the_scores_follow_is_the_same_letter_half_a_sequence_earlier(chapter):
    """Not the row after the letter's first occurrence: in xbqxcr xbqxcr the repeat's second x (row 10) is
    followed by c, after the x of row 4, half a sequence earlier; the row after the first x (row 2) holds b."""
    sequence = tokens.from_text("xbqxcr" * 2)
    N, row = 13, 10
    assert tokens.to_text(sequence, start=True)[row] == "x"
    shortcut = study.positional_shortcut(26, 6)
    predicted = induction.run_circuit(sequence, [shortcut]).predicted
    assert tokens.to_text(predicted)[row] == "c" == tokens.to_text(sequence, start=True)[row - 6 + 1]
    one_hot = np.eye(N)[np.r_[0, np.arange(N - 1)]]  # each row on the one before it
    for key, score in ((row - 6 + 1, 1.0), (2, 5 / 6)):  # the same letter half back; the first x's successor
        A = one_hot.copy()
        A[7:] = np.eye(N)[np.arange(7, N) - 6 + 1]
        A[row] = np.eye(N)[key]
        assert induction.prefix_matching_score(A, 6) == pytest.approx(score, rel=1e-15)


def test_trained_on_one_period_gradient_descent_takes_the_shortcut():
    """"Trained on one period, gradient descent is free to find the shortcut": and it does."""
    batches = study.training_batches(400, 32, 12, [6], 26, rng=defaults.SEED + 3)
    fit = training.fit_circuit(batches, 26, learning_rate=study.LEARNING_RATE, rng=defaults.SEED + 4)
    own = study.accuracy(fit.weights, tokens.repeated_sequences(500, 6, 26, rng=1), 26, 6)[1]
    other = study.hits(fit.weights, tokens.periodic_sequences(500, 12, [4], 26, rng=2), 26)[:, 5:].mean()
    assert own > 0.8 and other < own - 0.3


def test_training_starts_from_a_uniform_guess_and_falls_from_the_first_steps(chapter):
    g, ns = chapter.glued, chapter.namespace
    fit = ns["fit"]
    assert (g["heads-steps"], g["heads-batch"], g["heads-eta"]) == (study.STEPS, study.BATCH, study.LEARNING_RATE)
    assert abs(g["heads-loss-start"] - np.log(26)) < 0.1 and g["heads-log-vocab"] == np.log(26)
    means = fit.losses[:100].reshape(5, 20).mean(axis=1)
    assert np.all(np.diff(means) < 0), "no plateau: every 20 steps lower than the last"
    loss_panel = re.search(r":name: fig-heads-training\n:alt: (.+)", source(STEM))[1].split("Right,")[0]
    assert "falling from the first steps" in loss_panel and "slowly" not in loss_panel, "alt: it falls at once"
    assert g["heads-loss-first"] == means[0] and g["heads-loss-second"] == means[1]
    # The two windows of 20 steps: losses[start .. start + 19] and losses[start + 20 .. start + 39].
    start, w = g["heads-drop-start"], g["heads-window"]
    assert (g["heads-drop-first-end"], g["heads-drop-second"], g["heads-drop-end"]) == (
        start + w - 1, start + w, start + 2 * w - 1)
    assert g["heads-drop-before"] == pytest.approx(fit.losses[start:start + w].mean(), rel=1e-12)
    assert g["heads-drop-after"] == pytest.approx(fit.losses[start + w:start + 2 * w].mean(), rel=1e-12)
    assert g["heads-drop-before"] - g["heads-drop-after"] > 0.2
    assert g["heads-drop-start"] <= g["heads-prefix-half-step"] <= g["heads-drop-end"]
    # "passes one half between steps a and b", measured every b - a steps: below at a, at or above at b.
    tracked = ns["tracked"]
    assert np.all(np.diff(tracked.steps) == g["heads-track-every"])
    below, above = g["heads-prefix-below-step"], g["heads-prefix-half-step"]
    assert above - below == g["heads-track-every"]
    assert np.all(tracked.prefix[tracked.steps <= below] < 0.5) and tracked.prefix[tracked.steps == above][0] >= 0.5
    before = tracked.repeat[tracked.steps <= g["heads-drop-start"]][-1]
    after = tracked.repeat[tracked.steps >= g["heads-drop-end"]][0]
    assert before < 0.5 < after, "the accuracy on the repeat climbs with the prefix-matching score"
    assert g["heads-loss-end"] > g["heads-loss-floor"] == pytest.approx(5 / 12 * np.log(26))


def test_the_steepest_fall_is_one_runs_and_other_seeds_put_it_elsewhere(chapter):
    g, ns = chapter.glued, chapter.namespace
    starts = ns["starts"]
    assert g["heads-drop-seeds"] == len(ns["seeds"]) == len(starts) == 4
    assert g["heads-drop-starts"] == ", ".join(map(str, starts))
    assert g["heads-drop-start"] not in set(starts), "the other runs' falls start elsewhere"
    assert len(set(starts)) > 1


def test_knocking_out_the_learned_first_layer_along_training_shows_the_composition_forming(chapter):
    """Before, during and after the steepest fall: the second layer alone gains little; what it gets through the
    first layer grows from a few points to most of the accuracy."""
    g, ns = chapter.glued, chapter.namespace
    at, both, knocked = ns["at"], ns["with_first"], ns["without_first"]
    np.testing.assert_array_equal(at, ns["tracked"].steps)
    np.testing.assert_array_equal(both, ns["tracked"].repeat)  # the same measure, whole
    k = int(np.flatnonzero(at == 100)[0])
    weights, held_out = ns["fit"].checkpoints[100], ns["sequences"][:200]
    assert knocked[k] == study.accuracy(weights, held_out, 26, 6, knocked_out=[0])[1]
    steps = [g[f"heads-ablate-{name}-step"] for name in ("before", "during", "after")]
    start, end = g["heads-drop-start"], g["heads-drop-end"]
    assert steps[0] <= start < steps[1] <= end < steps[2] and steps[2] - steps[0] <= 80
    for name, step in zip(("before", "during", "after"), steps, strict=True):
        j = int(np.flatnonzero(at == step)[0])
        assert g[f"heads-ablate-{name}-both"] == 100 * both[j]
        assert g[f"heads-ablate-{name}-knocked"] == 100 * knocked[j]
    gain = {name: g[f"heads-ablate-{name}-both"] - g[f"heads-ablate-{name}-knocked"] for name in ("before", "after")}
    for name in gain:  # 100 (a - b) against 100 a - 100 b: rounding of numbers below 100, some 1e-14
        assert g[f"heads-ablate-{name}-gain"] == pytest.approx(gain[name], rel=0, abs=1e-12)
    # 200 sequences, 1000 rows of the repeat: a share's standard deviation is at most 1.6 points.
    assert gain["before"] < 30 and gain["after"] > 60 and gain["after"] > 3 * gain["before"]
    assert g["heads-ablate-after-knocked"] - g["heads-ablate-before-knocked"] < 15, "alone it gains little"
    assert g["heads-ablate-during-both"] - g["heads-ablate-during-knocked"] > gain["before"]


def test_training_is_deterministic(chapter):
    ns = chapter.namespace
    again = training.fit_circuit(ns["batches"][:30], 26, learning_rate=study.LEARNING_RATE, rng=defaults.SEED + 4,
                                 checkpoints=(30,))
    for a, b in zip(again.checkpoints[30], ns["fit"].checkpoints[20], strict=False):
        assert a[0].shape == b[0].shape
    np.testing.assert_array_equal(again.losses, ns["fit"].losses[:30])


# --- what gradient descent found --------------------------------------------------------------


def test_the_scores_of_both_circuits(chapter):
    g = chapter.glued
    assert g["heads-hand-prev"] > 0.999 and g["heads-hand-prefix"] > 0.85
    assert 0.3 < g["heads-learned-prev"] < 0.8 and g["heads-learned-prefix"] > 0.75
    assert abs(g["heads-learned-first"] / 100 - 1 / 26) < 4 * sd_of_share(1 / 26, 5 * 2000)
    assert g["heads-learned-repeat"] > g["heads-repeat"]


def test_the_learned_composition_matches_symbols_like_the_hand_built(chapter):
    g, ns = chapter.glued, chapter.namespace
    M = ns["composed"]
    # "largest on its diagonal for every symbol (26 of 26)": a count the reader reads, not a glued True
    assert g["heads-composed-argmax"] == (M.argmax(axis=1) == np.arange(26)).sum() == g["heads-vocab"]
    assert type(g["heads-composed-argmax"]) is int
    assert g["heads-composed-diag-min"] == np.diag(M).min() > 0
    assert g["heads-composed-off-mean"] < 0 < g["heads-composed-diag-min"]
    assert_close(study.composed_scores(ns["hand"], 26), g["heads-margin"] * np.eye(26), rounding(4, 8))


def test_the_learned_first_layer_is_a_softer_previous_token_head(chapter):
    g, ns = chapter.glued, chapter.namespace
    assert g["heads-l1-back"] > g["heads-l1-self"] > g["heads-l1-two"] > 0.05
    assert g["heads-l1-back"] < 0.8
    rows = ns["mean_weights"][0]
    assert np.all(rows[2:].argmax(axis=1) == np.arange(1, rows.shape[0] - 1))  # the row before, most


def test_the_learned_second_layer_uses_position_and_its_stripe_is_the_induction_stripe(chapter):
    g, ns = chapter.glued, chapter.namespace
    assert g["heads-knocked-repeat"] + 10 < g["heads-learned-knocked"] < g["heads-learned-repeat"] - 30
    assert (g["heads-band-near"], g["heads-band-far"]) == (3, 5)
    assert g["heads-knocked-band"] > 1.3 * g["heads-band-uniform"]
    assert g["heads-learned-more"] > g["heads-more"] + 20
    assert g["heads-learned-once"] > 95 and g["heads-once"] == 100
    A2 = ns["mean_weights"][1]
    rows = np.arange(7, 13)
    np.testing.assert_array_equal(A2[rows].argmax(axis=1), rows - 6 + 1)
    # In the first half the learned second head looks at the start marker, more than a uniform row would.
    first = np.arange(1, 6)  # the rows that predict the first half's letters
    assert g["heads-learned-sink"] == pytest.approx(ns["learned_weights"][1][:, first, 0].mean(), abs=rounding(12000))
    assert g["heads-learned-sink"] > 2 * np.mean(1 / (first + 1))
    np.testing.assert_array_equal(A2[first].argmax(axis=1), 0)


# --- exercises ---------------------------------------------------------------------------------


def test_exercise_how_sharp_the_previous_token_head_is(chapter):
    g = chapter.glued
    assert g["ex-heads-sharp-weight"] == pytest.approx(1 / (1 + 2 * np.exp(-8)), rel=1e-15)
    # The run adds exp(-32) and farther terms, 1.3e-14 of the weight, and its rounding.
    assert g["ex-heads-sharp-run"] == pytest.approx(g["ex-heads-sharp-weight"], abs=1e-12)


def test_exercise_a_letter_that_came_twice(chapter):
    g = chapter.glued
    keys = g["ex-heads-twice-keys"]
    assert keys == 8 and g["ex-heads-twice-text"] == "xbqxcrx"
    assert g["ex-heads-twice-others"] == keys - 2 == 6, "the keys besides the two that follow an x"
    expected = np.exp(8) / (2 * np.exp(8) + keys - 2)
    assert g["ex-heads-twice-formula"] == pytest.approx(expected, rel=1e-15)
    # The scores are off 8 and 0 by layer 1's leak, at most 8 * 7e-4 (its rows' weight elsewhere): 1.2 % at most.
    for name in ("ex-heads-twice-weight", "ex-heads-twice-c"):
        assert g[name] == pytest.approx(expected, rel=np.expm1(2 * 8 * 7e-4))
    assert g["ex-heads-twice-weight"] == pytest.approx(g["ex-heads-twice-c"], rel=1e-12)
    assert g["ex-heads-twice-predicted"] in ("b", "c")


def answer_box_accepts(name, answer, expected):
    """Whether the chapter's answer box ``name`` takes ``answer`` for ``expected``, as the page does.

    A box with ``:decimals: d`` takes what rounds to the answer's d decimals (within half a unit of
    the last, and the page's relative 1e-9 of slack); one with ``:rtol:`` and ``:atol:``, numpy's isclose.
    """
    box = re.search(rf"^```{{answer-box}} {re.escape(name)}\n(.*?)^```", source(STEM), re.S | re.M).group(1)
    decimals = re.search(r"^:decimals: (\d+)$", box, re.M)
    if decimals:
        d = int(decimals.group(1))
        return abs(answer - round(expected, d)) <= 0.5 * 10.0**-d * (1 + 1e-9)
    rtol, atol = (float(re.search(rf"^:{key}: (\S+)", box, re.M).group(1)) for key in ("rtol", "atol"))
    return bool(np.isclose(answer, expected, rtol=rtol, atol=atol))


def test_exercise_a_letter_that_came_twice_box_takes_the_weight_and_not_the_usual_slips(chapter):
    g = chapter.glued
    weight = g["ex-heads-twice-weight"]
    for right in (round(weight, 4), g["ex-heads-twice-formula"], g["ex-heads-twice-c"]):
        assert answer_box_accepts("ex-heads-twice-weight", right, weight)
    keys = g["ex-heads-twice-keys"]
    slips = (0.5,  # the two matches alone, the other keys forgotten
             round(1 / (2 + (keys - 3) * np.exp(-8)), 4),  # the start marker forgotten
             round(1 / (2 + keys * np.exp(-8)), 4))  # every key counted as a non-match too
    for wrong in slips:
        assert not answer_box_accepts("ex-heads-twice-weight", wrong, weight), wrong


def test_exercise_the_first_layer_knocked_out(chapter):
    g = chapter.glued
    assert g["ex-heads-live-knocked"] == g["heads-knocked-repeat"]
    assert g["ex-heads-live-knocked"] > g["heads-chance"]
    assert g["ex-heads-live-histogram"] == 100.0
    # "unless it came more than once in the first half, and then it is often, not always, among the most frequent"
    sequences, half, among, rows = chapter.namespace["sequences"], 6, 0, 0
    for s in sequences:
        for r in range(half + 1, 2 * half):  # row r predicts token r (0-based), s[r]
            if (s[:half] == s[r]).sum() > 1:
                counts = np.bincount(s[:r], minlength=26)
                rows, among = rows + 1, among + (counts[s[r]] == counts.max())
    assert g["ex-heads-live-leads"] == pytest.approx(100 * among / rows, rel=1e-12)
    assert 50 < g["ex-heads-live-leads"] < 100
    # Fig. 12.3's knocked-out point just before the repeat is that rule's: right when the repeat's first letter
    # leads the letters so far, above one in six (each of six letters first in the alphabet as often), far above 1/26.
    before = g["ex-heads-live-before-repeat"]
    assert before == pytest.approx(100 * chapter.namespace["per_row"]["first knocked out"][6], rel=1e-12)
    assert 100 / 6 < before < 50 and before > 4 * g["heads-chance"]


def test_exercise_a_longer_sequence(chapter):
    g = chapter.glued
    assert g["ex-heads-open-tokens"] == 2 * g["ex-heads-open-half"] == 20
    assert g["ex-heads-open-ambiguous"] > g["heads-ambiguous"]
    assert g["ex-heads-open-prev"] < g["heads-learned-prev"]
    assert g["ex-heads-open-learned-once"] < g["heads-learned-once"] - 2
    assert g["ex-heads-open-hand-once"] == 100.0
    assert g["ex-heads-open-learned"] > g["ex-heads-open-hand"]
