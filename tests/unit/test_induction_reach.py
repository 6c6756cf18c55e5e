"""selfattention.studies.induction_reach: the circuit's reach, its second head alone, and ablation along training."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import circuit_learning as cl
from selfattention import induction, tokens, training
from selfattention.studies import induction as si
from selfattention.studies import induction_reach as reach


def test_knockout_by_vocabulary_is_the_accuracy_of_the_circuit_built_for_each_vocabulary():
    both, knocked = reach.knockout_by_vocabulary([2, 26], 6, 300, rng=1)
    gen = np.random.default_rng(1)
    for k, vocabulary in enumerate((2, 26)):
        seqs = tokens.repeated_sequences(300, 6, vocabulary, rng=gen)
        circuit = cl.projections(induction.hand_built_circuit(vocabulary, 13))
        assert both[k] == si.accuracy(circuit, seqs, vocabulary, 6)[1]
        assert knocked[k] == si.accuracy(circuit, seqs, vocabulary, 6, knocked_out=[0])[1]
    # Two letters: the most frequent so far is a good guess; 26: little better than chance, 1500 rows each.
    assert knocked[0] > 0.5 and knocked[1] < 0.25


def test_accuracy_by_half_draws_enough_sequences_and_falls_with_the_half():
    repeat, ambiguous = reach.accuracy_by_half([6, 40], 26, 1000, rng=2)
    gen = np.random.default_rng(2)
    for k, half in enumerate((6, 40)):
        seqs = tokens.repeated_sequences(-(-1000 // (half - 1)), half, 26, rng=gen)
        assert seqs.shape[0] * (half - 1) >= 1000
        circuit = cl.projections(induction.hand_built_circuit(26, 2 * half + 1))
        assert repeat[k] == si.accuracy(circuit, seqs, 26, half)[1]
        assert ambiguous[k] == si.ambiguity(seqs, half).mean()
    assert repeat[0] > repeat[1] + 0.2 and ambiguous[0] < ambiguous[1]


@pytest.mark.parametrize("length", [3, 12, 300])
def test_the_weight_of_the_one_match_is_exp_margin_over_exp_margin_plus_n(length):
    """At a margin of 8 or more the first layer's rows are one-hot to within 2 exp(-margin), 7e-4, and so are the
    keys' scores to within that of a margin; a relative 1e-2 covers it. (At a margin of 2 the first layer is blunt,
    0.79 on the row before, and the formula does not hold.)"""
    for margin in (8.0, 12.0):
        expected = np.exp(margin) / (np.exp(margin) + length)
        assert reach.match_weight(26, length, margin) == pytest.approx(expected, rel=1e-2)


def test_the_match_is_the_row_after_the_one_earlier_occurrence():
    """A sequence 0, 1, 2, ..., 0 (or 0, 1, 1, ..., 0 with two symbols): key 2 follows the one earlier 0."""
    weight = reach.match_weight(4, 10)
    assert weight > 0.99
    assert reach.match_weight(2, 10) == pytest.approx(np.exp(8) / (np.exp(8) + 10), rel=1e-2)


def test_knockout_along_training_measures_each_checkpoint_whole_and_knocked_out():
    batches = si.training_batches(4, 4, 12, [4, 5, 6], 26, rng=1)
    fit = training.fit_circuit(batches, 26, rng=2, checkpoints=(0, 4))
    held_out = tokens.repeated_sequences(20, 6, 26, rng=3)
    steps, both, knocked = reach.knockout_along_training(fit.checkpoints, held_out, 26, 6)
    np.testing.assert_array_equal(steps, [0, 4])
    for k, step in enumerate((0, 4)):
        assert both[k] == si.accuracy(fit.checkpoints[step], held_out, 26, 6)[1]
        assert knocked[k] == si.accuracy(fit.checkpoints[step], held_out, 26, 6, knocked_out=[0])[1]


def test_drop_starts_is_the_steepest_drop_of_each_seeds_training():
    starts = reach.drop_starts([5, 6], 12, 3)
    for seed, start in zip((5, 6), starts, strict=True):
        data, init = np.random.SeedSequence(seed).spawn(2)
        batches = si.training_batches(12, si.BATCH, 2 * si.HALF, si.PERIODS, si.VOCABULARY,
                                      rng=np.random.default_rng(data))
        fit = training.fit_circuit(batches, si.VOCABULARY, learning_rate=si.LEARNING_RATE,
                                   rng=np.random.default_rng(init))
        assert start == si.steepest_drop(fit.losses, 3)[0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: reach.drop_starts([1], 5, 3), "steps must be at least 2 window"),
        (lambda: reach.knockout_along_training({}, np.zeros((2, 12), int), 26, 6), "checkpoints must be"),
        (lambda: reach.match_weight(26, 2), "length must be at least 3"),
        (lambda: reach.knockout_by_vocabulary([1], 6, 2), "vocabularies must be at least 2"),
        (lambda: reach.accuracy_by_half([1], 26, 2), "halves must be at least 2"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
