"""selfattention.studies.induction: accuracy by halves, ambiguity, composition, the positional shortcut, tracking."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

from selfattention import circuit_learning as cl
from selfattention import induction, tokens, training
from selfattention.studies import induction as si

HAND = cl.projections(induction.hand_built_circuit(26, 13))


def test_the_halves_leave_out_the_rows_no_circuit_can_predict():
    hits = np.arange(12.0)
    assert si.halves(hits, 6) == (np.mean([1, 2, 3, 4, 5]), np.mean([7, 8, 9, 10, 11]))


def test_ambiguity_by_loops():
    seqs = tokens.repeated_sequences(50, 6, 5, rng=3)
    twice = si.ambiguity(seqs, 6)
    for s, row in zip(seqs, twice, strict=True):
        # Row r (r = 7 .. 11) holds token r - 1 = 6 .. 10, a repeat of token r - 7 = 0 .. 4.
        assert list(row) == [list(s[:6]).count(s[r - 1]) > 1 for r in range(7, 12)]


def test_the_hand_built_circuit_is_right_wherever_the_symbol_came_once():
    seqs = tokens.repeated_sequences(500, 6, 26, rng=4)
    once, more = si.split_by_ambiguity(HAND, seqs, 26, 6)
    assert once == 1.0 and more < 0.6
    first, repeat = si.accuracy(HAND, seqs, 26, 6)
    # 2500 guesses at 1 in 26: standard deviation sqrt(2500 / 26 * 25 / 26) / 2500 = 0.0038.
    assert abs(first - 1 / 26) < 4 * 0.0038
    assert repeat > 0.8


def test_the_composed_scores_of_the_hand_built_circuit_are_the_margin_on_the_diagonal():
    M = si.composed_scores(HAND, 26)
    np.testing.assert_allclose(M, induction.MARGIN * np.eye(26), rtol=0, atol=rounding(4, induction.MARGIN))


def test_the_positional_shortcut_solves_one_period_only():
    shortcut = cl.projections([si.positional_shortcut(26, 6)])
    repeated = tokens.repeated_sequences(300, 6, 26, rng=5)
    assert si.accuracy(shortcut, repeated, 26, 6)[1] == 1.0
    other = tokens.periodic_sequences(300, 12, [4], 26, rng=6)
    assert si.hits(shortcut, other, 26)[:, 5:].mean() < 0.1  # chance, 1 in 26, give or take
    assert si.hits(HAND, other, 26)[:, 5:].mean() > 0.8


def test_tracking_measures_each_checkpoint():
    batches = si.training_batches(5, 4, 12, [4, 5, 6], 26, rng=1)
    assert batches.shape == (5, 4, 12)
    fit = training.fit_circuit(batches, 26, rng=2, checkpoints=(0, 5))
    test = tokens.repeated_sequences(20, 6, 26, rng=3)
    tracked = si.track(fit.checkpoints, test, 26, 6)
    np.testing.assert_array_equal(tracked.steps, [0, 5])
    predicted, A = cl.circuit_forward(fit.checkpoints[5], test, 26)
    assert tracked.previous[1] == induction.previous_token_score(A[0])
    assert tracked.prefix[1] == induction.prefix_matching_score(A[1], 6)
    assert tracked.repeat[1] == si.halves((predicted[:, :-1] == test).mean(axis=0), 6)[1]


def test_the_steepest_drop_is_found():
    losses = np.concatenate([np.full(30, 3.0), np.linspace(3.0, 1.0, 10), np.full(30, 1.0)])
    start, before, after = si.steepest_drop(losses, 10)
    assert 25 <= start <= 35 and before - after > 1.5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: si.halves(np.ones(11), 6), "hits must hold 2 half = 12"),
        (lambda: si.ambiguity(np.zeros((3, 10), int), 6), "sequences must have 2 half = 12"),
        (lambda: si.composed_scores(HAND[:1], 26), "weights must hold two layers"),
        (lambda: si.steepest_drop(np.ones(5), 3), "losses must hold at least 2 window"),
        (lambda: si.track({}, np.zeros((2, 12), int), 26, 6), "checkpoints must be a non-empty mapping"),
        (lambda: si.training_batches(2**62, 2**62, 12, [4], 26), "steps, batch and length"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_module_docstring_names_only_functions_that_exist():
    """Every :func:`name` the module's docstring refers to is a function of the package (it named a train_induction
    that never existed)."""
    import importlib
    import re

    for name in re.findall(r":func:`~?([\w.]+)`", si.__doc__):
        module, _, function = name.rpartition(".")
        owner = importlib.import_module(module) if module else si
        assert callable(getattr(owner, function, None)), name
