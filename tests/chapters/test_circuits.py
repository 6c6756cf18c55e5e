"""The page "Reading the induction circuit": QK and OV circuits, composition, paths, ablations, periods, training.

The tests read what the chapter computed (its variables and glued values)
and hold each sentence of the text to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import circuit_learning as cl
from selfattention import circuit_paths as paths
from selfattention import circuits, induction
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


def test_the_learned_first_layer_hardly_writes_into_the_previous_subspace(chapter):
    g = chapter.glued
    assert g["circ-qk-learned-argmax"] < 26 / 2  # "in only ... rows"
    assert abs(g["circ-ov1-learned-prev"]) < 0.1 < g["circ-ov-learned-diag"]
    assert g["circ-k-learned-argmax"] == 26  # through its OV circuit, the match is there
    assert g["circ-k-learned-diag"] > 0 > g["circ-k-learned-off"]


def test_k_composition_stands_above_the_random_baseline_and_q_and_v_near_it(chapter):
    g = chapter.glued
    assert g["circ-comp-hand-Q"] == 0.0 and g["circ-comp-hand-V"] == 0.0
    assert g["circ-comp-hand-K"] == pytest.approx(1 / np.sqrt(26), rel=1e-12)  # norms of identity blocks
    assert 1.8 < g["circ-comp-learned-K"] / g["circ-comp-random-K"] < 2  # "nearly twice"
    for kind in "QV":  # "within a fifth of it"
        assert abs(g[f"circ-comp-learned-{kind}"] / g[f"circ-comp-random-{kind}"] - 1) < 0.2


def test_the_path_shares(chapter):
    g = chapter.glued
    assert g["circ-share-hand-direct"] == g["circ-share-learned-direct"] == 0.0  # the prediction starts empty
    assert g["circ-share-hand-two"] == pytest.approx(100.0, rel=1e-12)
    assert g["circ-share-hand-one"] == 0.0 and g["circ-share-hand-both"] == 0.0
    assert g["circ-share-learned-two"] > 50 and g["circ-share-learned-both"] > 0  # "most", "adds"
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


def test_the_learned_second_layer_rests_on_the_start_marker(chapter):
    assert chapter.glued["circ-sink"] > 0.5


def test_the_exercises(chapter):
    g = chapter.glued
    assert g["ex-circuits-flat-vocab"] == 9
    assert g["ex-circuits-flat-score"] == pytest.approx(1 / 3, rel=1e-12)
    hand9 = cl.projections(induction.hand_built_circuit(9, 13))
    assert circuits.composition_scores(hand9, 9)["K"] == g["ex-circuits-flat-score"]
    assert g["ex-circuits-live-qv"] == g["circ-ablate-hand-queries-values"] == g["circ-ablate-hand-none"]
    assert g["ex-circuits-open-width"] == 13
