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
    assert 1.8 < g["circ-comp-learned-K"] / g["circ-comp-random-K"] < 2  # "nearly twice"
    for kind in "QV":  # "within a fifth of it"
        assert abs(g[f"circ-comp-learned-{kind}"] / g[f"circ-comp-random-{kind}"] - 1) < 0.2
    assert g["circ-comp-learned-V"] > g["circ-comp-random-V"]  # "V-composition a little above"


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
    chance = 100 / 26
    shorter, longer = ns["untrained"][:2], ns["untrained"][2:]
    assert max(shorter) < min(study.PERIODS) and min(longer) > max(study.PERIODS)  # "shorter and longer"
    for k in (0, 1):
        assert g[f"circ-period-learned-{k}"] > 10 * chance  # far above a guess
    longer_learned = [g[f"circ-period-learned-{k}"] for k in (2, 3, 4)]
    assert longer_learned == sorted(longer_learned, reverse=True)  # "less often the longer they are"
    assert g["circ-period-learned-4"] < g["circ-period-hand-4"] - 20  # it falls, where the hand-built one stays
    assert min(g[f"circ-period-hand-{k}"] for k in range(5)) > 85  # the hand-built circuit stays


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
    assert np.array_equal(ns["trained_losses"], ns["sc"].row_losses(ns["learned"], ns["held_out"], 26))
    # per-token losses of those rows, for the sampling error of their means
    S = paths.ablated_scores(ns["learned"], ns["held_out"], 26)[:, :first]  # (count, first, d_vocab)
    log_p = S - S.max(axis=-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(axis=-1, keepdims=True))
    losses = -np.take_along_axis(log_p, ns["held_out"][:, :first, None], -1)[..., 0]  # (count, first)
    error = losses.std(axis=0) / np.sqrt(len(losses))
    # "at least log d_vocab on average": no mean more than four standard errors (p < 1e-4) below it
    assert (losses.mean(axis=0) > np.log(26) - 4 * error).all()
    assert g["circ-unpredictable-min"] == pytest.approx(losses.mean(axis=0).min(), rel=1e-9)  # regrouped sums
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
