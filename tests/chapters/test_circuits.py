"""The page "Reading the induction circuit": QK and OV circuits, composition, paths, ablations, periods, training.

The tests read what the chapter computed (its variables and glued values)
and hold each sentence of the text to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import circuit_learning as cl
from selfattention import circuit_paths as paths
from selfattention import circuits, induction, tokens
from selfattention.studies import induction as study

STEM = "circuits"


def test_the_learned_model_is_the_one_heads_together_trains(chapter, chapter_run):
    theirs = chapter_run("heads-together").namespace["fit"]
    for ours, other in zip(chapter.namespace["fit"].weights, theirs.weights, strict=True):
        for a, b in zip(ours, other, strict=True):
            assert np.array_equal(a, b)  # the same training, from the same seeds, on one machine


def test_the_hand_built_induction_head_copies_and_matches_the_symbol_layer_1_wrote(chapter):
    g = chapter.glued
    assert g["circ-ov-hand-diag"] == 1.0 and g["circ-ov-hand-off"] == 0.0
    assert g["circ-ov-hand-argmax"] == g["circ-vocab"] == 26
    assert g["circ-copying-hand"] == pytest.approx(1.0, abs=1e-12)  # eigenvalues of the identity, one rounding
    assert g["circ-qk-hand-diag"] == pytest.approx(g["circ-margin"], rel=1e-12)  # margin / temperature
    assert g["circ-qk-hand-argmax"] == 26


def test_the_learned_ov_circuit_is_a_scaled_copy_that_lowers_the_others(chapter):
    g = chapter.glued
    assert g["circ-ov-learned-argmax"] == 26
    assert g["circ-ov-learned-diag"] > 1 and g["circ-ov-learned-off"] < 0
    assert 0.9 < g["circ-copying-learned"] <= 1.0


def test_the_learned_first_layer_writes_into_the_previous_subspace_but_no_copy(chapter, chapter_run):
    g, ns = chapter.glued, chapter.namespace
    assert g["circ-qk-learned-argmax"] < 26 / 2  # "in only ... rows"
    shares = {name: g[f"circ-l1-writes-{name}"] for name in paths.SUBSPACES}
    assert sum(shares.values()) == pytest.approx(100.0, rel=1e-12)  # the subspaces split the stream
    assert abs(shares["previous"] - shares["prediction"]) < 2  # "about as much as"
    assert min(shares["previous"], shares["prediction"]) > max(shares["token"], shares["position"])
    # "no copy of the symbol": the diagonal is smaller than the entries off it, and rarely tops its row
    assert abs(g["circ-ov1-learned-prev"]) < g["circ-ov1-learned-off-abs"] / 2
    assert g["circ-ov1-learned-argmax"] < 26 / 4
    first_ov = circuits.ov_circuit(ns["learned"], 0, 26, write="previous")
    assert g["circ-ov1-learned-argmax"] == (first_ov.argmax(axis=1) == np.arange(26)).sum()
    assert g["circ-k-learned-argmax"] == 26  # through its OV circuit, the match is there
    assert g["circ-k-learned-diag"] > 0 > g["circ-k-learned-off"]
    # the learned weight on the row before is the one the previous chapter reports (the same model)
    assert g["circ-l1-back"] == pytest.approx(chapter_run("heads-together").glued["heads-learned-prev"], rel=1e-12)
    assert 0 < g["circ-l1-back"] < 1


def test_every_head_runs_at_temperature_one_the_hand_built_w_q_divided_by_its_tau():
    layers = induction.hand_built_circuit(26, 13)
    for layer, (W_Q, W_K, _, _) in zip(layers, cl.projections(layers), strict=True):
        assert np.array_equal(W_Q, layer.head.W_Q / layer.head.temperature) and np.array_equal(W_K, layer.head.W_K)


def test_k_composition_stands_above_the_random_baseline_and_q_and_v_near_it(chapter):
    g = chapter.glued
    assert g["circ-comp-hand-Q"] == 0.0 and g["circ-comp-hand-V"] == 0.0
    assert g["circ-comp-hand-K"] == pytest.approx(1 / np.sqrt(26), rel=1e-12)  # norms of identity blocks
    for kind in "QKV":  # the glued ratios are the table's scores over the baseline
        assert g[f"circ-comp-ratio-{kind}"] == g[f"circ-comp-learned-{kind}"] / g[f"circ-comp-random-{kind}"]
    assert 1.8 < g["circ-comp-ratio-K"] < 2  # "nearly twice"
    assert abs(g["circ-comp-ratio-Q"] - 1) < 0.1  # "near it"
    assert 1.1 < g["circ-comp-ratio-V"] < 1.25  # "a little above it"


def test_the_path_shares(chapter):
    g = chapter.glued
    assert g["circ-share-hand-direct"] == g["circ-share-learned-direct"] == 0.0  # the prediction starts empty
    assert g["circ-share-hand-two"] == pytest.approx(100.0, rel=1e-12)
    assert g["circ-share-hand-one"] == 0.0 and g["circ-share-hand-both"] == 0.0
    assert g["circ-share-learned-two"] > 50 and g["circ-share-learned-both"] > 5  # "most", "adds", "a share"
    assert 0 < g["circ-share-learned-one"] < g["circ-share-learned-both"] / 100  # "nearly all ... virtual head"
    shares = chapter.namespace["shares"]
    for name in shares:  # the four shares make the whole
        assert sum(shares[name].values()) == pytest.approx(1.0, rel=1e-9)


def test_the_ablations_say_what_the_text_says(chapter):
    g = chapter.glued
    hand = {how: g[f"circ-ablate-hand-{how}"] for how in paths.ABLATIONS}
    learned = {how: g[f"circ-ablate-learned-{how}"] for how in paths.ABLATIONS}
    assert hand["keys"] == hand["zero"]  # the patch does all the zero ablation does
    assert hand["queries-values"] == hand["none"]  # and hiding it from the rest changes nothing
    assert abs(hand["mean"] - hand["zero"]) < 3  # "close"
    assert learned["zero"] < learned["mean"] < learned["none"]  # part of what zero destroys is the mean
    assert learned["keys"] < learned["none"] - 30
    # given layer 1's mean, the keys keep part of what they lose: part of the loss is the average
    assert learned["keys"] + 10 < learned["keys-mean"] < learned["none"] - 10
    assert hand["keys-mean"] - hand["keys"] < 3 and hand["keys-mean"] == hand["mean"]  # "little", "as under"
    assert learned["none"] - learned["queries-values"] < 2
    assert g["ex-circuits-drop-points"] == pytest.approx(learned["none"] - learned["keys"], rel=1e-9)


def test_untrained_periods(chapter):
    g, ns = chapter.glued, chapter.namespace
    untrained = ns["untrained"]
    shorter, longer = untrained[:2], untrained[2:]
    assert max(shorter) < min(study.PERIODS) and min(longer) > max(study.PERIODS)  # "shorter and longer"
    learned = [g[f"circ-period-learned-{k}"] for k in range(5)]
    knocked = [g[f"circ-period-knocked-{k}"] for k in range(5)]
    for k in range(5):  # the knocked-out row is the learned model without layer 1
        period, out = untrained[k], ns["runs"]["knocked out"]
        assert out[0] is ns["learned"] and list(out[1]) == [0]
        hits = study.hits(ns["learned"], ns["periodic"][period], 26, knocked_out=[0])[:, period + 1:]
        assert knocked[k] == 100 * hits.mean()
    # Without layer 1, "much of the answer" at the shorter periods, "little" at the longer ones
    assert min(knocked[:2]) > 40 and max(knocked[2:]) < 30
    assert abs(knocked[0] - learned[0]) < 5 and knocked[1] > learned[1] / 2  # "about as much", "more than half"
    assert knocked[2:] == sorted(knocked[2:], reverse=True)  # the Summary's range: period 9's to period 7's
    assert learned[2] > 3 * knocked[2]  # "most of what it predicts needs layer 1"
    rows = ns["periodic"][untrained[0]].shape[1] - 1  # each counted row's letter came before, then the answer
    for period in untrained:
        seqs = ns["periodic"][period]
        assert all((seqs[:, r - 1] == seqs[:, r - 1 - period]).all() and (seqs[:, r] == seqs[:, r - period]).all()
                   for r in range(period + 1, rows + 1))
    assert learned[2:] == sorted(learned[2:], reverse=True)  # "it falls as the period grows"
    assert g["circ-period-learned-4"] < g["circ-period-hand-4"] - 20  # where the hand-built one stays
    assert min(g[f"circ-period-hand-{k}"] for k in range(5)) > 85


def _follower_counts(ids, r, vocabulary):
    """How often each symbol follows the letter row r holds (token r - 1) among the tokens before it."""
    letter = ids[r - 1]
    before = [ids[j + 1] for j in range(r - 1) if ids[j] == letter]
    return np.bincount(before, minlength=vocabulary)


def test_why_the_hand_built_circuit_misses_at_the_longer_periods(chapter):
    ns = chapter.namespace
    hand, found = ns["hand"], {"outright": 0, "tipped": 0, "exact": 0}
    margin = induction.MARGIN
    sharper = cl.projections(induction.hand_built_circuit(26, 2 * study.HALF + 1, margin=4 * margin))
    for period in ns["untrained"][2:]:
        seqs = ns["periodic"][period]
        S = paths.ablated_scores(hand, seqs, 26)[:, :-1]  # (count, n, d_vocab): row r's scores of token r
        predicted = cl.circuit_forward(hand, seqs, 26)[0][:, :-1]  # the chapter's predictions, argmax
        S_sharp = paths.ablated_scores(sharper, seqs, 26)[:, :-1]
        for s, r in zip(*np.nonzero(predicted != seqs), strict=True):
            if r <= period:
                continue  # rows of the first period: not in the table
            counts = _follower_counts(seqs[s], r, 26)
            right, wrong = seqs[s, r], predicted[s, r]
            assert (counts > 0).sum() > 1  # every miss: the letter came before, followed by different letters
            # "scores each follower by how often it follows": the weight off the matching keys, at most
            # (n - 1) e^-margin in layer 2 plus what layer 1 leaks, moves the shares by less than 1e-2
            assert np.abs(S[s, r] - counts / counts.sum()).max() < 1e-2
            if counts[wrong] > counts[right]:
                found["outright"] += 1
                continue
            assert counts[wrong] == counts[right]  # a wrong follower never wins on fewer
            gap = S[s, r, wrong] - S[s, r, right]
            if gap == 0:  # "on an exact tie the letter earlier in the alphabet wins"
                found["exact"] += 1
                assert wrong < right
            else:  # decided by the weight off the matching keys: it shrinks as e^-margin
                found["tipped"] += 1
                assert 0 < gap < 1e-2
                assert abs(S_sharp[s, r, wrong] - S_sharp[s, r, right]) < 1e-8 * gap
    assert min(found.values()) > 0  # all three happen


def test_in_context_learning_falls_from_the_first_checkpoint(chapter):
    g, ns = chapter.glued, chapter.namespace
    icl = ns["icl"]
    assert abs(g["circ-icl-start"]) < 0.1 and icl[1] < icl[0] - 0.1  # no plateau
    assert g["circ-icl-end"] < -2 and g["circ-icl-steps"] == 600
    settled = list(ns["steps_kept"]).index(g["circ-icl-settled"])
    assert icl[settled] <= 0.9 * icl[-1] and (icl[:settled] > 0.9 * icl[-1]).all()
    assert g["circ-icl-end"] < g["circ-icl-patched"] < 0


def test_the_tokens_before_any_repeat_cost_log_d_vocab(chapter):
    g, ns = chapter.glued, chapter.namespace
    first = g["circ-unpredictable"]
    assert first == min(study.PERIODS) and g["circ-log-vocab"] == np.log(26)
    assert g["circ-held-out"] == len(ns["held_out"]) == 500
    assert np.array_equal(ns["trained_losses"], ns["sc"].row_losses(ns["learned"], ns["held_out"], 26))
    # per-token losses of those rows, computed apart, for the sampling error of their means
    S = paths.ablated_scores(ns["learned"], ns["held_out"], 26)[:, :first]  # (count, first, d_vocab)
    log_p = S - S.max(axis=-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(axis=-1, keepdims=True))
    losses = -np.take_along_axis(log_p, ns["held_out"][:, :first, None], -1)[..., 0]  # (count, first)
    error = losses.std(axis=0, ddof=1) / np.sqrt(len(losses))
    assert np.allclose(ns["errors"], error, rtol=1e-9, atol=0)  # the same sums, regrouped
    assert g["circ-unpredictable-error"] == ns["errors"].max()
    means = losses.mean(axis=0)
    assert g["circ-unpredictable-min"] == pytest.approx(means.min(), rel=1e-9)  # regrouped sums
    assert g["circ-unpredictable-max"] == pytest.approx(means.max(), rel=1e-9)
    # "at or above log d_vocab to within the sampling error of such a mean": no mean more than one error below
    assert (means >= np.log(26) - error).all()
    assert g["circ-unpredictable-max"] < np.log(26) + 0.1  # near the floor: the model learned nothing there


def test_the_learned_second_layer_rests_on_the_start_marker(chapter):
    g, ns = chapter.glued, chapter.namespace
    weights = ns["learned_weights"][1]  # (count, N, N)
    assert g["circ-sink"] == pytest.approx(weights[:, 1:study.HALF, 0].mean(), rel=1e-12)  # rows 1 .. half - 1
    assert g["circ-sink"] > 0.5


def test_the_exercises(chapter):
    g = chapter.glued
    assert g["ex-circuits-flat-vocab"] == 9
    assert g["ex-circuits-flat-score"] == pytest.approx(1 / 3, rel=1e-12)
    hand9 = cl.projections(induction.hand_built_circuit(9, 13))
    assert circuits.composition_scores(hand9, 9)["K"] == g["ex-circuits-flat-score"]
    # the solution's premise: W_OV^[1] the identity from the token into the previous subspace, W_QK^[2] the
    # margin times the identity from the token to the previous subspace, nothing else
    (_, _, V1, O1), (Q2, K2, _, _) = hand9
    stream = tokens.Stream(9)
    expected_ov, expected_qk = np.zeros((stream.d_model,) * 2), np.zeros((stream.d_model,) * 2)
    expected_ov[stream.token, stream.previous] = np.eye(9)
    expected_qk[stream.token, stream.previous] = induction.MARGIN * np.eye(9)
    assert np.array_equal(V1 @ O1, expected_ov)  # products of one-hot columns: exact
    assert np.allclose(Q2 @ K2.T, expected_qk, rtol=1e-12, atol=0)  # margin / temperature, one rounding
    assert g["ex-circuits-live-qv"] == g["circ-ablate-hand-queries-values"] == g["circ-ablate-hand-none"]
    assert g["ex-circuits-open-width"] == 13
