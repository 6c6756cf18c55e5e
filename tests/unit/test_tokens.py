"""selfattention.tokens: the residual stream's layout and rows, the sequences, letters, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfattention import tokens
from selfattention.tokens import Stream


def stream_by_hand(ids, vocabulary):
    """The stream written row by row from its definition (no shared code)."""
    N = len(ids) + 1
    rows = []
    for i in range(N):
        one_hot = [0.0] * vocabulary
        if i > 0:
            one_hot[ids[i - 1]] = 1.0
        p = i / (N - 1) - 0.5
        rows.append(one_hot + [p, p * p, 1.0] + [0.0] * (2 * vocabulary))
    return np.array(rows)


def test_the_layout_names_four_subspaces_that_tile_the_stream():
    s = Stream(5)
    covered = [range(d)[sl] for sl in (s.token, s.position, s.previous, s.prediction) for d in [s.d_model]]
    assert [len(r) for r in covered] == [5, 3, 5, 5]
    assert sorted(i for r in covered for i in r) == list(range(s.d_model)) == list(range(18))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7).flatmap(lambda v: st.tuples(st.just(v), st.lists(st.integers(0, v - 1), min_size=1,
                                                                            max_size=9))))
def test_the_stream_is_its_definition(case):
    vocabulary, ids = case
    # Exact but for the centring: i / (N - 1) - 1/2 here, linspace then a shift there: a few roundings on 1.
    np.testing.assert_allclose(tokens.residual_stream(ids, vocabulary), stream_by_hand(ids, vocabulary),
                               rtol=0, atol=8 * np.finfo(float).eps)


def test_a_batch_is_its_sequences_one_by_one():
    """Each sequence of a batch gets its own one-hot rows (and no other sequence's)."""
    batch = tokens.random_sequences(5, 7, 4, rng=3)
    X = tokens.residual_stream(batch, 4)
    assert X.shape == (5, 8, 15)
    for k, ids in enumerate(batch):
        np.testing.assert_array_equal(X[k], tokens.residual_stream(ids, 4))
        assert X[k, :, :4].sum() == 7  # one symbol per token, none at the start marker


def test_positions_run_from_minus_a_half_to_a_half():
    p = tokens.positions(13)
    assert p[0] == -0.5 and p[-1] == 0.5 and p[6] == 0
    np.testing.assert_allclose(np.diff(p), 1 / 12, rtol=0, atol=4 * np.finfo(float).eps)


def test_the_repeat_repeats_and_the_draws_are_uniform():
    seqs = tokens.repeated_sequences(4000, 6, 5, rng=1)
    np.testing.assert_array_equal(seqs[:, :6], seqs[:, 6:])
    counts = np.bincount(seqs[:, :6].ravel(), minlength=5)
    # 24,000 draws of 5 symbols: each count has standard deviation sqrt(24000 * 0.2 * 0.8) = 62.
    assert np.abs(counts - 4800).max() < 5 * 62
    np.testing.assert_array_equal(tokens.repeated_sequences(3, 4, 5, rng=2), tokens.repeated_sequences(3, 4, 5, rng=2))


def test_periodic_sequences_repeat_with_one_of_the_periods():
    seqs = tokens.periodic_sequences(300, 12, [2, 5], 26, rng=4)
    seen = set()
    for s in seqs:
        period = next(h for h in (2, 5) if np.array_equal(s[h:], s[:-h]))
        seen.add(period)
    assert seen == {2, 5}


def test_letters_round_trip():
    ids = tokens.from_text("abcz")
    np.testing.assert_array_equal(ids, [0, 1, 2, 25])
    assert tokens.to_text(ids, start=True) == ["^", "a", "b", "c", "z"]
    assert "".join(tokens.to_text(tokens.from_text("hello"))) == "hello"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tokens.residual_stream([0, 5], 5), r"tokens must lie in \[0, 5\)"),
        (lambda: tokens.residual_stream([-1], 5), r"tokens must lie in \[0, 5\)"),
        (lambda: tokens.residual_stream([], 5), "tokens must be a non-empty"),
        (lambda: tokens.residual_stream([1.0, 2.0], 5), "tokens must hold integer token ids"),
        (lambda: tokens.residual_stream([True], 5), "tokens must hold integer token ids"),
        (lambda: tokens.residual_stream("ab", 5), "tokens must be an array"),
        (lambda: tokens.residual_stream([1], 0), "vocabulary must be at least 1"),
        (lambda: tokens.residual_stream([1], 2**62), "vocabulary"),
        (lambda: tokens.repeated_sequences(3, 0, 5), "half must be at least 1"),
        (lambda: tokens.repeated_sequences(2**62, 2**62, 5), "half"),
        (lambda: tokens.periodic_sequences(3, 4, [0], 5), "periods must be at least 1"),
        (lambda: tokens.from_text("aB"), "text must use the letters"),
        (lambda: tokens.from_text("abc", 2), "text must use the letters 'ab'"),
        (lambda: tokens.from_text(""), "text must hold at least one letter"),
        (lambda: tokens.from_text("a", 27), "vocabulary must be at most 26"),
        (lambda: tokens.positions(1), "n_positions must be at least 2"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
