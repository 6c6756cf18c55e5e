"""The online head (``selfattention.online_softmax``): exact attention a block of keys at a time, in memory linear in n.

Its outputs are the exact head's to rounding (the same sums in another
order, bounded by ``tolerances.average_atol``), for any block; it holds one
block of weights at a time, so its peak memory doubles with n where the exact
head's quadruples; it answers the package's memory and work limits and the
exact head's rounding refusal; sympy checks its rules.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from tolerances import average_atol

import selfattention as sa
from selfattention import defaults, memory, online_softmax, work
from selfattention.online_softmax import BLOCK, BYTES_PER_ENTRY, online_attention, online_gaussian_head
from tools.measure import peak_bytes


def _sine(n):
    positions, _, noisy = sa.noisy_sine(n, defaults.SIGMA, rng=defaults.SEED)
    return positions, noisy


@pytest.mark.parametrize("n", [100, 1000])
@pytest.mark.parametrize("block", [1, 7, BLOCK, 5000])
def test_the_online_head_is_the_exact_head_to_rounding_for_any_block(n, block):
    positions, noisy = _sine(n)
    exact, _ = sa.gaussian_head(noisy, positions, defaults.TEMPERATURE)
    online = online_gaussian_head(noisy, positions, defaults.TEMPERATURE, block=block)
    bound = online_softmax.rounding_bound(noisy, positions, defaults.TEMPERATURE, block=block)
    assert np.max(np.abs(online - exact)) <= bound


def test_the_rounding_bound_is_the_derived_one_and_the_pages_1e_12_holds_on_its_head():
    """g = 24 eps P**2 / tau on the scaled scores (see rounding_bound), and eps (3 n + 3 blocks + 2) besides."""
    positions, noisy = _sine(100)
    eps, tau = np.finfo(float).eps, defaults.TEMPERATURE
    g = 24 * eps * 0.5**2 / tau  # P = 0.5: positions from 0 to 1
    expected = np.max(np.abs(noisy)) * (np.expm1(2 * g) + eps * (3 * 100 + 3 * 7 + 2))
    bound = online_softmax.rounding_bound(noisy, positions, tau, block=16)
    assert bound == pytest.approx(expected, rel=1e-12)
    assert bound < 1e-12


def test_online_attention_is_attention_with_and_without_a_temperature():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(9, 4)), rng.normal(size=(23, 4)), rng.normal(size=(23, 3))
    for temperature in (None, 0.3):
        exact, _ = sa.attention(Q, K, V, temperature)
        scores = np.abs(Q @ K.T).max() / (temperature or 2.0)
        # scaled scores of size ~ `scores`: one rounding each for the product, the shift and the division
        atol = average_atol(2 * K.shape[0], V, 8 * np.finfo(float).eps * scores)
        np.testing.assert_allclose(online_attention(Q, K, V, temperature, block=5), exact, rtol=0, atol=atol)


def test_a_wrong_rescaling_is_caught_by_the_pages_tolerance(monkeypatch):
    """Without rescaling the old sums (the rules' factor), the output is off by far more than 1e-12."""
    positions, noisy = _sine(100)
    exact, _ = sa.gaussian_head(noisy, positions, defaults.TEMPERATURE)

    def forgetful(scores, values, tau, top, total, weighted):
        new_top = np.maximum(top, scores.max(axis=1))
        block = np.exp((scores - new_top[:, None]) / tau)
        return new_top, total + block.sum(axis=1), weighted + block @ values

    monkeypatch.setattr(online_softmax, "_absorb", forgetful)
    wrong = online_gaussian_head(noisy, positions, defaults.TEMPERATURE, block=16)
    assert np.max(np.abs(wrong - exact)) > 1e-3


def test_its_peak_memory_doubles_with_n_where_the_exact_heads_quadruples():
    peaks = {}
    for n in (1024, 2048):
        positions, noisy = _sine(n)
        peaks["online", n] = peak_bytes(lambda p=positions, s=noisy: online_gaussian_head(s, p, defaults.TEMPERATURE))
        peaks["exact", n] = peak_bytes(lambda p=positions, s=noisy: sa.gaussian_head(s, p, defaults.TEMPERATURE))
    assert 1.8 < peaks["online", 2048] / peaks["online", 1024] < 2.2
    assert 3.6 < peaks["exact", 2048] / peaks["exact", 1024] < 4.4
    # within the memory guard's budget for one block (which holds the few n-long arrays besides)
    assert peaks["online", 2048] <= BYTES_PER_ENTRY * 2048 * BLOCK


def test_it_runs_where_the_memory_guard_refuses_the_exact_head():
    positions, noisy = _sine(512)
    with memory.limit(2**21):  # 2 MiB: 512 x 512 x 24 bytes is 6 MiB; 512 x 64 x 16 is 0.5 MiB
        with pytest.raises(ValueError, match="memory limit"):
            sa.gaussian_head(noisy, positions, defaults.TEMPERATURE)
        online = online_gaussian_head(noisy, positions, defaults.TEMPERATURE, block=64)
        with pytest.raises(ValueError, match=r"^positions and block: a 512 x 512 attention matrix"):
            online_gaussian_head(noisy, positions, defaults.TEMPERATURE, block=512)
    exact, _ = sa.gaussian_head(noisy, positions, defaults.TEMPERATURE)
    assert np.max(np.abs(online - exact)) < 1e-12


def test_the_work_limit_counts_every_pair_it_scores():
    positions, noisy = _sine(100)
    with work.work_limit(100 * 100):
        online_gaussian_head(noisy, positions, defaults.TEMPERATURE)
    with work.work_limit(100 * 100 - 1), pytest.raises(ValueError, match=r"^positions: .* 10000 pairs"):
        online_gaussian_head(noisy, positions, defaults.TEMPERATURE)
    with work.work_limit(10), pytest.raises(ValueError, match=r"^Q and K: "):
        online_attention(np.ones((4, 2)), np.ones((3, 2)), np.ones((3, 1)))


def test_it_refuses_what_the_exact_head_refuses_for_rounding():
    positions = np.linspace(0.0, 1e4, 50)
    for head in (sa.gaussian_head, online_gaussian_head):
        with pytest.raises(ValueError, match="too small for positions"):
            head(np.zeros(50), positions, 1e-6)


def test_huge_values_and_overflowing_scores():
    positions = np.linspace(0.0, 1.0, 30)
    signal = np.full(30, np.finfo(float).max) * np.where(np.arange(30) % 2, 1, -1)
    exact, _ = sa.gaussian_head(signal, positions, 0.05)
    online = online_gaussian_head(signal, positions, 0.05, block=4)
    assert np.isfinite(online).all()
    np.testing.assert_allclose(online, exact, rtol=1e-12)
    with pytest.raises(ValueError, match="overflow"):
        online_attention(np.full((2, 2), 1e200), np.full((3, 2), 1e200), np.ones((3, 1)))


def test_sympy_finds_the_rules_exact_and_they_are_the_sums_over_every_key():
    rules, gaps = online_softmax.rescaling_identity(old=3, new=2)
    assert gaps == {"l": 0, "output": 0}
    e = sp.symbols("e_1:6", real=True)
    v = sp.symbols("v_1:6", real=True)
    tau = sp.Symbol("tau", positive=True)
    scores, values = [0.3, -1.2, 0.9, 2.5, -0.4], [1.0, -2.0, 0.5, 3.0, 1.5]
    at = {**dict(zip(e, scores, strict=True)), **dict(zip(v, values, strict=True)), tau: 0.7,
          sp.Symbol(r"\hat e", real=True): max(scores[:3]), sp.Symbol(r"\hat e'", real=True): max(scores)}
    weights = np.exp((np.array(scores) - max(scores)) / 0.7)
    assert float(rules["l"].subs(at)) == pytest.approx(weights.sum(), rel=1e-14)
    assert float((rules["phi"] / rules["l"]).subs(at)) == pytest.approx(weights @ values / weights.sum(), rel=1e-14)


def test_blocks_and_rules_are_counted_and_checked_by_name():
    with pytest.raises(ValueError, match="block"):
        online_gaussian_head(np.zeros(5), np.arange(5.0), 0.1, block=0)
    with pytest.raises(ValueError, match="old"):
        online_softmax.rescaling_identity(old=9)
