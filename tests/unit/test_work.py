"""Work: computations whose pairs of tokens grow as n**2 or faster are refused, by name, before they start.

Each test lowers the limit for its block (``work.work_limit``), so that the
refusals are of calls that would take a fraction of a second: the same
checks stop ``window_head`` and ``decode_cached`` at ``n = 10**6`` under the
default limit, where they would run for hours.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import selfattention as sa
from selfattention import decoding, training, window, work
from selfattention.head import gaussian_head_weights, positional_features

LIMIT = 10**6


def tokens(n: int) -> np.ndarray:
    positions, _, noisy = sa.noisy_sine(n, 0.3, rng=1)
    return positional_features(noisy, positions)  # (n, 4)


def test_the_window_head_is_refused_when_its_windows_would_score_too_many_pairs():
    p, _, s = sa.noisy_sine(2000, 0.3, rng=1)
    with work.work_limit(LIMIT):
        with pytest.raises(ValueError, match=r"^positions and half_width: a window head on 2000 tokens with "
                                             r"windows of up to 2000 keys would score 4\.00e6 pairs of tokens, "
                                             r"more than the work limit of 1\.00e6"):
            window.window_head(s, p, 0.01, 1.0)  # every key: 2000 x 2000 pairs
        _, keys = window.window_head(s, p, 0.01, 0.05)  # about 200 keys a query: 4e5 pairs
    assert 2000 * keys.max() <= LIMIT


def test_the_decoders_are_refused_when_their_steps_would_score_too_many_pairs():
    W = gaussian_head_weights()
    with work.work_limit(LIMIT):
        with pytest.raises(ValueError, match=r"^X: decoding 2000 tokens with a cache would score 2\.00e6 pairs"):
            decoding.decode_cached(tokens(2000), *W, 0.01)  # 2000 x 2001 / 2 pairs
        decoding.decode_cached(tokens(1000), *W, 0.01)  # 500,500 pairs
        with pytest.raises(ValueError, match=r"^X: decoding 200 tokens, recomputing every step would score 2\.69e6"):
            decoding.decode_recomputed(tokens(200), *W, 0.01)  # 200 x 201 x 401 / 6 pairs
        decoding.decode_recomputed(tokens(100), *W, 0.01)  # 338,350 pairs


def test_training_a_circuit_is_refused_when_its_steps_would_score_too_many_pairs():
    batches = np.zeros((20, 4, 99), int)  # 20 steps of 4 sequences of 100 rows
    with work.work_limit(LIMIT), pytest.raises(ValueError, match=r"^batches and layers: 20 steps of 3 layers on 4 "
                                                             r"sequences of 100 rows would score 2\.40e6 pairs"):
        training.fit_circuit(batches, 3, layers=3)  # 20 x 3 x 4 x 100**2 pairs
    with work.work_limit(LIMIT):
        training.fit_circuit(batches[:8], 3, layers=3)  # 960,000 pairs


def test_the_limit_is_a_setting_for_a_block_or_a_thread():
    assert work.get_work_limit() == work.DEFAULT_LIMIT
    with work.work_limit(10):
        assert work.get_work_limit() == 10
        with pytest.raises(ValueError, match="work limit of 10 "):
            work.require_work(11, "n", "eleven pairs")
        work.require_work(10, "n", "ten pairs")
    assert work.get_work_limit() == work.DEFAULT_LIMIT
    seen = []
    thread = threading.Thread(target=lambda: (work.set_work_limit(10), seen.append(work.get_work_limit())))
    thread.start()
    thread.join()
    assert seen == [10] and work.get_work_limit() == work.DEFAULT_LIMIT, "a thread's setting stays in the thread"


def test_the_default_limit_lets_the_books_largest_decoding_through_and_stops_a_million_tokens():
    """The benchmark decodes up to 1024 tokens, recomputing (3.6e8 pairs); 10**6 tokens are refused at once."""
    W = gaussian_head_weights()
    assert 1024 * 1025 * 2049 // 6 <= work.DEFAULT_LIMIT
    huge = np.zeros((10**6, 4))
    with pytest.raises(ValueError, match=r"^X: decoding 1000000 tokens with a cache would score 5\.00e11"):
        decoding.decode_cached(huge, *W, 0.01)
    p = np.linspace(0.0, 1.0, 10**6)
    with pytest.raises(ValueError, match=r"^positions and half_width: a window head on 1000000 tokens"):
        window.window_head(np.zeros(10**6), p, 0.01, 1.0)
