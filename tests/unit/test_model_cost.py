"""A transformer layer's arithmetic, part by part, and its key-value cache (``selfattention.model_cost``).

The counts are the products each part computes; where attention passes the
rest of the layer is where the counts are equal; the cache is a key and a
value per token, layer and key-value head, and a window stops it growing.
"""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import cost, model_cost


def test_a_layers_counts_are_the_products_it_computes():
    n, d, heads, d_ff = 10, 8, 2, 32
    parts = model_cost.layer_cost(n, d, heads, d_ff)
    d_head = d // heads
    # Q, K, V and the output: (n x d) times (d x d) each
    assert parts["projections"].multiply_adds == 4 * n * d * d
    # per head, Q K^T is n x n dot products of d_head, and A V as many of d_head: 2 n^2 d in all
    assert parts["attention"].multiply_adds == heads * (n * n * d_head + n * n * d_head) == 2 * n * n * d
    assert parts["attention"].evaluations == heads * n * n
    assert parts["mlp"].multiply_adds == n * d * d_ff + n * d_ff * d
    assert model_cost.layer_cost(n, d, heads, d_ff, matrices=3)["mlp"].multiply_adds == 3 * n * d * d_ff


def test_attention_dominates_from_where_the_counts_are_equal():
    d = 4096
    for d_ff, rest in ((None, lambda p: p["projections"]), (4 * d, lambda p: p["projections"] + p["mlp"])):
        n = model_cost.attention_dominates_from(d, d_ff)
        at = model_cost.layer_cost(int(n), d, 32, 4 * d)
        assert at["attention"].multiply_adds == rest({k: c.multiply_adds for k, c in at.items()})
        after = model_cost.layer_cost(int(n) + 1, d, 32, 4 * d)
        assert after["attention"].multiply_adds > rest({k: c.multiply_adds for k, c in after.items()})
    assert model_cost.attention_dominates_from(d) == 2 * d
    assert model_cost.attention_dominates_from(d, 4 * d) == 6 * d
    # the package's crossover of the counts, interpolated on a grid, finds the same place
    grid = 2 ** np.arange(10, 18)
    counts = [model_cost.layer_cost(int(n), d, 32, 4 * d) for n in grid]
    where = cost.crossover(grid, [c["attention"].multiply_adds for c in counts],
                           [c["projections"].multiply_adds for c in counts])
    assert where == pytest.approx(2 * d, rel=1e-12)


def test_a_gated_mlp_of_two_thirds_the_width_counts_the_same():
    d = 768  # a multiple of 3: two thirds of 4 d is a whole number
    two = model_cost.layer_cost(100, d, 12, 4 * d)["mlp"].multiply_adds
    assert model_cost.layer_cost(100, d, 12, 2 * 4 * d // 3, matrices=3)["mlp"].multiply_adds == two


def test_the_cache_of_llama_2_7b_and_what_mqa_gqa_and_a_window_do_to_it():
    llama = model_cost.LLAMA_2_7B
    d_head = llama["d_model"] // llama["heads"]
    assert (llama["layers"], llama["heads"], d_head, llama["context"]) == (32, 32, 128, 4096)
    full = model_cost.kv_cache_bytes(llama["context"], llama["layers"], llama["heads"], d_head)
    assert full == 2 * 32 * 32 * 128 * 4096 * 2 == 2 * 2**30
    assert model_cost.kv_cache_bytes(1, 32, 32, 128) == 512 * 2**10
    assert model_cost.kv_cache_bytes(4096, 32, 1, 128) == full // 32  # MQA divides by M
    assert model_cost.kv_cache_bytes(4096, 32, model_cost.LLAMA_2_GQA_KV_HEADS, 128) == full // 4
    windowed = [model_cost.kv_cache_bytes(n, 32, 32, 128, window=4096) for n in (4096, 8192, 32768, 10**6)]
    assert windowed == [full] * 4, "a window's cache never grows past its window"
    assert model_cost.kv_cache_bytes(100, 32, 32, 128, window=4096) == model_cost.kv_cache_bytes(100, 32, 32, 128)


def test_bad_shapes_are_refused_by_name():
    with pytest.raises(ValueError, match="d_model must be a multiple of heads"):
        model_cost.layer_cost(10, 10, 3, 40)
    with pytest.raises(ValueError, match="window"):
        model_cost.kv_cache_bytes(10, 2, 2, 4, window=0)
