"""selfattention.cost: the operation counts against a tally of the products a plain loop computes, the memory limit's
largest n against the memory guard itself, and the fitted slopes and crossovers against exact power laws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfattention import cost, memory
from selfattention.cost import Cost


def tally_attention(n_queries: int, n_keys: int, d_k: int, d_v: int) -> Cost:
    """The products and exponentials of attention written as loops, counted one by one."""
    multiply_adds = evaluations = 0
    for _ in range(n_queries):
        for _ in range(n_keys):
            multiply_adds += d_k  # q_i . k_j
            evaluations += 1  # exp of the scaled score
            multiply_adds += d_v  # a_ij v_j into the output
    return Cost(multiply_adds, evaluations, 8 * n_queries * n_keys)


@pytest.mark.parametrize(("n", "d_k", "d_v"), [(1, 1, 1), (5, 3, 1), (7, 2, 4)])
def test_the_exact_heads_count_is_the_loops_tally(n, d_k, d_v):
    assert cost.exact_cost(n, d_k, d_v) == tally_attention(n, n, d_k, d_v)


@pytest.mark.parametrize(("n", "columns", "d_v"), [(1, 2, 1), (6, 8, 1), (5, 4, 3)])
def test_the_feature_heads_count_is_the_loops_tally(n, columns, d_v):
    multiply_adds = evaluations = 0
    for _ in range(n):  # the keys' pass: their features, and psi(k_j)^T [v_j, 1] added into the summary
        evaluations += columns
        multiply_adds += columns * (d_v + 1)
    for _ in range(n):  # the queries' pass: their features, and psi(q_i) times the summary
        evaluations += columns
        multiply_adds += columns * (d_v + 1)
    held = 8 * (columns * (d_v + 1) + n * (d_v + 1))  # the summary psi^T [V, 1], and each row's two sums
    assert cost.feature_cost(n, columns, d_v) == Cost(multiply_adds, evaluations, held)


def test_a_window_of_every_key_costs_what_the_exact_head_costs():
    assert cost.window_cost(36, 3, 1) == cost.exact_cost(6, 3, 1)


@pytest.mark.parametrize("n", [1, 2, 9, 40])
def test_decoding_costs_the_sum_of_its_steps(n):
    recomputed = sum((cost.exact_cost(t) for t in range(1, n + 1)), Cost(0, 0, 0))
    cached = sum((Cost(t * 4, t, 0) for t in range(1, n + 1)), Cost(0, 0, 8 * n * 4))
    assert cost.decoding_cost(n, cached=False) == recomputed
    assert cost.decoding_cost(n, cached=True) == cached
    assert cost.decoding_cost(n, cached=False).evaluations == n * (n + 1) * (2 * n + 1) // 6


def test_the_costs_are_exact_integers_beyond_the_doubles():
    n = 2**62
    assert cost.exact_cost(n).multiply_adds == 4 * n * n  # a float would round it


def test_adding_costs_adds_operations_and_keeps_the_larger_memory():
    assert Cost(1, 2, 30) + Cost(4, 5, 6) == Cost(5, 7, 30)
    with pytest.raises(TypeError):
        Cost(1, 2, 3) + 1


@pytest.mark.parametrize("limit", [2**20, 10**9, memory.DEFAULT_LIMIT, 24 * 1000**2, 24 * 1000**2 - 1])
def test_the_largest_n_is_the_largest_the_memory_guard_lets_through(limit):
    n = cost.largest_n(limit)
    with memory.limit(limit):
        memory.require_matrix(n, n, "n")  # allowed
        with pytest.raises(ValueError, match="memory limit"):
            memory.require_matrix(n + 1, n + 1, "n")


def test_the_largest_n_of_the_default_limit():
    assert cost.largest_n(memory.DEFAULT_LIMIT) == 13377  # floor(sqrt(4 GiB / 24 bytes))
    assert cost.largest_n(memory.DEFAULT_LIMIT, 8) == 23170  # the weights alone


@given(st.floats(-3, 3), st.floats(1e-6, 1e6))
def test_the_slope_of_an_exact_power_law_is_its_exponent(exponent, prefactor):
    sizes = np.array([100.0, 200.0, 400.0, 800.0, 1600.0])
    assert cost.loglog_slope(sizes, prefactor * sizes**exponent) == pytest.approx(exponent, abs=1e-9)


@given(st.floats(1.5, 2.5), st.floats(0.5, 1.2), st.floats(3.0, 300.0))
def test_the_crossover_of_two_power_laws_is_where_they_are_equal(quadratic, linear, prefactor):
    sizes = 2.0 ** np.arange(0, 30)
    first, second = sizes**quadratic, prefactor * sizes**linear
    where = prefactor ** (1 / (quadratic - linear))  # n**q = c n**l
    assert cost.crossover(sizes, first, second) == pytest.approx(where, rel=1e-9)


def test_a_crossover_that_never_comes_is_refused_by_name():
    with pytest.raises(ValueError, match="first and second"):
        cost.crossover([1.0, 2.0, 4.0], [1.0, 2.0, 3.0], [5.0, 6.0, 7.0])
    assert cost.crossover([1.0, 2.0], [5.0, 6.0], [1.0, 2.0]) == 1.0, "cheaper from the start"


@pytest.mark.parametrize(("call", "word"), [
    (lambda: cost.loglog_slope([1.0, 1.0], [1.0, 2.0]), "sizes"),
    (lambda: cost.loglog_slope([1.0, 2.0], [0.0, 2.0]), "values"),
    (lambda: cost.crossover([2.0, 1.0], [1.0, 2.0], [2.0, 1.0]), "sizes"),
    (lambda: cost.decoding_cost(3, cached=1), "cached"),
    (lambda: cost.feature_cost(3, 0), "columns"),
])
def test_bad_arguments_are_refused_by_name(call, word):
    with pytest.raises(ValueError, match=word):
        call()
