"""Memory: the n x n computations are refused before they allocate, with n, the memory needed and the limit.

The package reads ``selfattention.memory`` lazily in each test, so that the
refusals themselves can be run against a version of the package without it.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import selfattention as sa
from selfattention import bilateral, decoding, head, learning, positional
from selfattention.head import gaussian_head_weights
from selfattention.studies import alibi, causal, noise_and_samples, sinusoidal
from selfattention.studies import content_attention as ca
from selfattention.studies import noise2noise as n2n
from tools.measure import peak_bytes

N = 20_000  # 20,000**2 weights: 3.2 GB each, about 9.6 GB at attention's peak


def refused(call, *words, max_bytes=50 * 2**20):
    """Run ``call``: it must raise a ValueError naming ``words`` while allocating under ``max_bytes``."""
    refusals = []

    def refuse():
        with pytest.raises(ValueError) as caught:
            call()
        refusals.append(caught.value)

    peak = peak_bytes(refuse)
    message = str(refusals[0])
    for word in words:
        assert word in message, message
    assert peak < max_bytes, f"allocated {peak} bytes before refusing"
    return message


def test_attention_on_20000_tokens_is_refused_before_allocating():
    x = np.zeros((N, 1))
    message = refused(lambda: sa.attention(x, x, x), "Q and K", f"{N} x {N}", "GiB", "memory limit of 4 GiB")
    assert "8.94 GiB" in message  # 24 bytes x 20000**2


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("positions", lambda p: sa.gaussian_head(np.zeros(N), p, 0.01)),
        ("positions and temperatures", lambda p: head.attention_matrices(p, [0.01])),
        ("positions", lambda p: sa.choose_temperature(np.zeros(N), p)),
        ("x_query and x", lambda p: sa.nadaraya_watson(p, p, np.zeros(N), 0.1)),
        ("n", lambda p: sa.noisy_sine(2**40, 0.3)),
        ("positions", lambda p: bilateral.bilateral_head(np.zeros(N), p, 0.01, 1.0)),
        ("X", lambda p: decoding.decode_recomputed(np.zeros((N, 4)), *gaussian_head_weights(), 0.01)),
        ("sample_counts", lambda p: noise_and_samples.neighbours_vs_samples([10, N], 0.01)),
        ("X", lambda p: learning.attention_loss_and_grad(np.ones((3, 2)), np.ones((3, 2)),
                                                            learning.token_features(p), np.zeros(N))),
        ("signals", lambda p: n2n.train_position_head(ca.step_signals(2, N, 0.2, rng=0), steps=1)),
        ("signals", lambda p: ca.gaussian_outputs(ca.step_signals(2, N, 0.2, rng=0), 0.01)),
        ("signals", lambda p: ca.bilateral_outputs(ca.step_signals(2, N, 0.2, rng=0), 0.01, 1.0)),
        ("signals", lambda p: n2n.best_temperatures(ca.step_signals(2, N, 0.2, rng=0), [0.01], [1.0])),
        ("X", lambda p: learning.learned_head(np.ones((3, 2)), np.ones((3, 2)), learning.token_features(p),
                                                 np.zeros(N))),
    ],
)
def test_what_is_built_on_attention_is_refused_naming_the_callers_argument(name, call):
    refused(lambda: call(np.linspace(0, 1, N)), f"{name}:", "memory limit", max_bytes=4 * N * 8 + 50 * 2**20)


def test_the_limit_is_a_setting_for_a_block_or_a_thread():
    from selfattention import memory

    p = np.linspace(0, 1, 300)
    with memory.limit(2**20):  # 1 MiB: 300**2 * 24 bytes = 2.1 MB is too much, 100**2 * 24 is not
        assert memory.get_limit() == 2**20
        refused(lambda: sa.gaussian_head(np.zeros(300), p, 0.01), "n = 300", "memory limit of 1 MiB")
        sa.gaussian_head(np.zeros(100), p[:100], 0.01)
    assert memory.get_limit() == memory.DEFAULT_LIMIT
    seen = []
    thread = threading.Thread(target=lambda: (memory.set_limit(10), seen.append(memory.get_limit())))
    thread.start()
    thread.join()
    assert seen == [10] and memory.get_limit() == memory.DEFAULT_LIMIT, "a thread's setting stays in the thread"


@pytest.mark.parametrize("n", [300, 600])
def test_bytes_per_entry_bounds_the_measured_peak_of_attention_and_the_head(n):
    from selfattention import memory

    p = np.linspace(0, 1, n)
    budget = memory.BYTES_PER_ENTRY * n * n
    x = np.random.default_rng(1).normal(size=(n, 3))
    mask = np.ones((n, n), bool)
    for call in (lambda: sa.attention(x, x, x), lambda: sa.gaussian_head(p, p, 0.01, mask=mask)):
        peak = peak_bytes(call)
        assert 8 * n * n <= peak <= budget, (peak, budget)  # at least the weights; within the estimate


def test_leave_one_out_stays_within_what_it_asks_for(monkeypatch):
    from selfattention import kernel, memory

    n = 600
    p, _, y = sa.noisy_sine(n, 0.3, rng=1)
    asked = []
    real_require = memory.require
    monkeypatch.setattr(memory, "require", lambda nbytes, *args: asked.append(nbytes) or real_require(nbytes, *args))
    peak = peak_bytes(lambda: kernel.leave_one_out_scores(y, p))
    assert asked and peak <= max(asked), (peak, asked)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("positions", lambda p: positional.sinusoidal_head(np.zeros(N), p, [np.pi], [1.0])),
        ("positions", lambda p: positional.rotary_head(np.zeros(N), p, [np.pi], [1.0])),
        ("positions", lambda p: positional.alibi_head(np.zeros(N), p, 3.0)),
        ("positions", lambda p: positional.alibi_bias(p, 3.0)),
        ("positions", lambda p: alibi.score_ranks(p, np.pi)),
        ("positions", lambda p: causal.offset_sweep(np.zeros(N), np.zeros(N), p, 0.01, [0.0])),
        ("positions", lambda p: sinusoidal.cosine_scores(p, [np.pi], [1.0])),
    ],
)
def test_the_positional_heads_and_studies_are_refused_naming_the_callers_argument(name, call):
    refused(lambda: call(np.linspace(0, 1, N)), f"{name}:", "memory limit", max_bytes=4 * N * 8 + 50 * 2**20)


@pytest.mark.parametrize("n", [300, 600])
def test_bytes_per_entry_bounds_attention_with_a_bias_and_the_alibi_head(n):
    from selfattention import memory

    p = np.linspace(0, 1, n)
    x = np.random.default_rng(1).normal(size=(n, 3))
    bias = positional.alibi_bias(p, 3.0)  # the caller's: not counted below
    budget = memory.BYTES_PER_ENTRY * n * n
    assert 8 * n * n <= peak_bytes(lambda: sa.attention(x, x, x, bias=bias)) <= budget
    assert 8 * n * n <= peak_bytes(lambda: positional.alibi_head(p, p, 3.0)) <= budget + 8 * n * n  # + its bias
