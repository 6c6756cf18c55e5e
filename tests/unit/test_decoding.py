"""selfattention.decoding: a key-value cache gives the outputs of recomputing every step, for a fraction of the work.

Both decoders are checked against the causal head run once on the whole
sequence (its row ``t`` sees tokens ``1..t``, as step ``t`` does), with
tolerances derived from the computation (``tests/tolerances.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import EPS, average_atol

import selfattention as sa
from selfattention import cost, decoding
from selfattention.core import attention, causal_mask
from selfattention.head import gaussian_head_weights, positional_features


def score_gap(Q, K, temperature) -> float:
    """How far two computations of one scaled score q_t . k_j / tau can be apart, in any order of the d_k terms.

    Each computation rounds the projections (a dot product of d_model terms, at most ``2 d_model`` roundings on
    the sum of their sizes) and the score's own ``2 d_k`` products and additions on ``sum_r |q_tr k_jr|``; the
    row's maximum is subtracted and the difference divided by tau (two more roundings on twice the largest
    score). Bounded here by ``4 (d_model + d_k + 1) EPS`` times the largest ``sum_r |q_tr| |k_jr|``, both
    computations, over tau.
    """
    largest = float(np.max(np.abs(Q) @ np.abs(K).T))
    return 2 * 4 * (4 + Q.shape[1] + 1) * EPS * largest / temperature


def book_tokens(n=60, tau=0.005):
    positions, _, noisy = sa.noisy_sine(n, 0.3, rng=7)
    return positional_features(noisy, positions), gaussian_head_weights(), tau


def test_both_decoders_give_the_causal_heads_rows():
    X, (W_Q, W_K, W_V), tau = book_tokens()
    causal, _ = attention(X @ W_Q, X @ W_K, X @ W_V, tau, mask=causal_mask(X.shape[0]))
    atol = average_atol(X.shape[0], X @ W_V, score_gap(X @ W_Q, X @ W_K, tau))
    for decode in (decoding.decode_recomputed, decoding.decode_cached):
        outputs, _ = decode(X, W_Q, W_K, W_V, tau)
        np.testing.assert_allclose(outputs, causal, rtol=0, atol=atol, err_msg=decode.__name__)


@given(st.integers(1, 8), st.integers(1, 3), st.integers(1, 3), st.data())
def test_the_cache_changes_no_output_for_any_projections(n, d_k, d_v, data):
    elements = st.floats(-3, 3)
    X = data.draw(hnp.arrays(np.float64, (n, 4), elements=elements))
    W_Q, W_K = (data.draw(hnp.arrays(np.float64, (4, d_k), elements=elements)) for _ in range(2))
    W_V = data.draw(hnp.arrays(np.float64, (4, d_v), elements=elements))
    tau = data.draw(st.floats(0.1, 10))
    recomputed, _ = decoding.decode_recomputed(X, W_Q, W_K, W_V, tau)
    cached, _ = decoding.decode_cached(X, W_Q, W_K, W_V, tau)
    atol = 2 * average_atol(n, X @ W_V, score_gap(X @ W_Q, X @ W_K, tau))
    np.testing.assert_allclose(cached, recomputed, rtol=0, atol=atol)


def test_an_earlier_row_does_not_change_when_a_token_is_added():
    """Why the cache works: under the causal mask, row t of the head on t + 1 tokens is row t on t tokens."""
    X, (W_Q, W_K, W_V), tau = book_tokens(20)
    shorter, _ = decoding.decode_recomputed(X[:-1], W_Q, W_K, W_V, tau)
    longer, _ = decoding.decode_recomputed(X, W_Q, W_K, W_V, tau)
    np.testing.assert_array_equal(longer[:-1], shorter)


@pytest.mark.parametrize("n", [1, 7, 30])
def test_the_decoders_tally_the_closed_form_costs(n):
    X, (W_Q, W_K, W_V), tau = book_tokens(n)
    _, recomputed = decoding.decode_recomputed(X, W_Q, W_K, W_V, tau)
    _, cached = decoding.decode_cached(X, W_Q, W_K, W_V, tau)
    assert recomputed == cost.decoding_cost(n, cached=False)
    assert cached == cost.decoding_cost(n, cached=True)


def test_the_cached_decoder_never_scores_a_future_token():
    """A token placed after step t cannot change output t: change the last token, every earlier output stays."""
    X, (W_Q, W_K, W_V), tau = book_tokens(15)
    changed = X.copy()
    changed[-1] = [5.0, 0.99, 0.99**2, 1.0]
    before, _ = decoding.decode_cached(X, W_Q, W_K, W_V, tau)
    after, _ = decoding.decode_cached(changed, W_Q, W_K, W_V, tau)
    np.testing.assert_array_equal(after[:-1], before[:-1])
    assert after[-1] != before[-1]


@pytest.mark.parametrize(("change", "word"), [
    ({"X": np.zeros((0, 4))}, "X"),
    ({"W_Q": np.zeros((3, 3))}, "W_Q"),
    ({"W_K": np.zeros((4, 2))}, "W_Q and W_K"),
    ({"temperature": 0.0}, "temperature"),
    ({"X": np.full((3, 4), 1e200)}, "X"),
])
def test_bad_input_is_refused_by_name(change, word):
    X, (W_Q, W_K, W_V), tau = book_tokens(3)
    kwargs = {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "temperature": tau, **change}
    for decode in (decoding.decode_recomputed, decoding.decode_cached):
        with pytest.raises(ValueError, match=word):
            decode(**kwargs)
