"""The page "Exact attention in linear memory": the online softmax, its memory measured, and where a layer's cost is.

The tests read what the page computed (its variables and glued values) and
check each sentence that describes it; the few that need more call the
package with the page's arguments. The peak memory and times are `make
bench`'s, read from the committed file: no test here measures a time, only
what the text says of the measured numbers (slopes, which is larger).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from tolerances import average_atol, square_gap

from selfattention import cost, memory, model_cost, online_softmax, work
from selfattention.metrics import rmse
from tools import ROOT

STEM = "linear-memory"


def prose() -> str:
    """The page's text, its runs of white space as one space."""
    return re.sub(r"\s+", " ", (ROOT / "book" / f"{STEM}.md").read_text())


# --- the online softmax --------------------------------------------------------------------------


def test_sympy_finds_the_rules_exact_whatever_the_references(chapter):
    assert chapter.namespace["gaps"] == {"l": 0, "output": 0}
    assert "three keys seen and two arriving" in prose()
    rules = chapter.namespace["rules"]
    names = {str(symbol) for symbol in rules["l"].free_symbols}
    assert {r"\hat e", r"\hat e'", "tau"} | {f"e_{j}" for j in range(1, 6)} == names, "both references, five keys"
    assert str(rules["l"]).count("exp") == 3 + 2 + 1  # three old terms, two new, and the rescaling


def test_the_blocks_give_the_exact_head_within_the_rounding_bound_and_1e_12(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["lm-small-block"] == 16 and glued["lm-n"] == ns["positions"].size
    assert glued["lm-blocks"] == -(-glued["lm-n"] // 16) > 1
    assert glued["lm-gap"] <= glued["lm-bound"] < glued["lm-tolerance"] == 1e-12
    again = online_softmax.online_gaussian_head(ns["noisy"], ns["positions"], ns["tau"], block=16)
    assert np.max(np.abs(again - ns["exact_output"])) == glued["lm-gap"]


def test_a_rescaling_left_out_misses_the_tolerance_by_orders_of_magnitude(chapter, monkeypatch):
    ns = chapter.namespace

    def forgetful(scores, values, tau, top, total, weighted):
        new_top = np.maximum(top, scores.max(axis=1))
        block = np.exp((scores - new_top[:, None]) / tau)
        return new_top, total + block.sum(axis=1), weighted + block @ values

    monkeypatch.setattr(online_softmax, "_absorb", forgetful)
    wrong = online_softmax.online_gaussian_head(ns["noisy"], ns["positions"], ns["tau"], block=16)
    assert np.max(np.abs(wrong - ns["exact_output"])) > 1e3 * chapter.glued["lm-tolerance"]


def test_the_guard_refuses_the_exact_head_and_the_online_head_matches_its_rows(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["lm-guard-n"] == cost.largest_n(memory.get_limit()) < glued["lm-big-n"] == 2**14
    assert "16384 x 16384" in ns["message"] and "memory limit of 4 GiB" in ns["message"]
    assert ns["big_output"].shape == (glued["lm-big-n"],)
    assert glued["lm-rows"] == 64 == ns["exact_rows"].shape[0]
    # The rows' scores come from uncentred positions (|p| up to 1), the online head's from centred ones:
    # both within square_gap(1) of the exact scores; averages of N values, each a rescaling more a block.
    n = glued["lm-big-n"]
    atol = average_atol(n + 2 * n // online_softmax.BLOCK, ns["big_s"], square_gap(1.0, ns["tau"]))
    assert glued["lm-rows-gap"] <= atol
    assert glued["lm-big-error"] == rmse(ns["big_output"], ns["big_clean"]) < 0.3  # smooths: below the noise


# --- memory and time, measured -------------------------------------------------------------------


def test_the_bench_doubled_n_as_far_as_each_limit_lets_it(chapter):
    bench, glued = chapter.namespace["bench"], chapter.glued
    exact_n, online_n = bench["exact"]["n"], bench["online"]["n"]
    assert 2 * exact_n[-1] > cost.largest_n(memory.get_limit()) >= exact_n[-1] == glued["lm-exact-largest-n"]
    assert online_n[-1] ** 2 <= work.DEFAULT_LIMIT < (2 * online_n[-1]) ** 2
    assert glued["lm-online-largest-n"] == online_n[-1]
    assert glued["lm-weights-at-online-gib"] == 8 * online_n[-1] ** 2 / 2**30
    assert np.all(np.diff(online_n) > 0) and np.all(online_n[1:] == 2 * online_n[:-1])


def test_memory_grows_as_n_squared_and_as_n_and_time_as_n_squared_for_both(chapter):
    glued = chapter.glued
    assert glued["lm-fit-from"] == 1024
    assert 1.9 < glued["lm-slope-exact-peak"] < 2.1
    assert 0.9 < glued["lm-slope-online-peak"] < 1.1
    for name in ("exact", "online"):
        assert glued[f"lm-slope-{name}-seconds"] > 1.7, "every pair is scored: time is not linear"
    assert glued["lm-exact-largest-mib"] > 10 * glued["lm-online-at-exact-mib"]
    assert glued["lm-online-largest-mib"] < glued["lm-exact-largest-mib"]


# --- where the cost really is --------------------------------------------------------------------


def test_attention_passes_the_projections_at_2d_and_the_layer_at_6d(chapter):
    glued = chapter.glued
    width = glued["lm-width"]
    assert width == model_cost.LLAMA_2_7B["d_model"] and glued["lm-model"] == "Llama 2 7B"
    assert glued["lm-from-projections"] == 2 * width and glued["lm-from-layer"] == 6 * width
    assert glued["lm-attention-share"] == pytest.approx(2 * 4096 / (12 * width + 2 * 4096), rel=1e-15)
    assert glued["lm-attention-share"] < 0.5, "the projections and the MLP are most of the arithmetic"


def test_a_causal_model_moves_the_crossing_twice_as_far():
    """Half the pairs: N**2 d attention multiply-adds against 12 N d**2 meet at 12 d, twice 6 d."""
    d = model_cost.LLAMA_2_7B["d_model"]
    n = 12 * d
    layer = model_cost.layer_cost(n, d, 32, 4 * d)
    assert layer["attention"].multiply_adds / 2 == layer["projections"].multiply_adds + layer["mlp"].multiply_adds
    assert n == 2 * model_cost.attention_dominates_from(d, 4 * d)


def test_the_cache_of_the_published_configuration_and_what_shrinks_it(chapter):
    glued = chapter.glued
    assert (glued["lm-layers"], glued["lm-heads"], glued["lm-d-head"]) == (32, 32, 128)
    assert glued["lm-half-bytes"] == 2 and glued["lm-context"] == 4096
    assert glued["lm-per-token-kib"] == 2 * 32 * 32 * 128 * 2 / 2**10 == 512
    assert glued["lm-cache-gib"] == 2
    assert glued["lm-mqa-mib"] == 2 * 2**10 / 32
    assert glued["lm-gqa-heads"] == 8 and glued["lm-gqa-factor"] == 4 and glued["lm-gqa-gib"] == 0.5
    assert glued["lm-long-n"] == 8 * 4096
    assert glued["lm-unbounded-gib"] == 16 and glued["lm-windowed-gib"] == glued["lm-cache-gib"]
    for key in ("touvron2023llama2", "shazeer2019fast", "ainslie2023gqa", "touvron2023llama", "dao2022flashattention"):
        assert f"{{cite}}`{key}`" in prose()


# --- exercises -----------------------------------------------------------------------------------


def test_the_exercises_answers(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["ex-lm-token-kib"] == 512
    assert glued["ex-lm-crossing-width"] == 768 and glued["ex-lm-crossing-n"] == 6 * 768
    assert glued["ex-lm-live-block"] == 256 and glued["ex-lm-live-blocks"] == 1000
    bound = online_softmax.rounding_bound(ns["sine_s"], ns["sine_p"], 0.005, block=1)
    assert glued["ex-lm-live-before"] <= bound and glued["ex-lm-live-after"] <= bound < 1e-11


def test_the_causal_online_head_is_the_masked_exact_head_and_skips_the_tiles_above(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["ex-lm-open-block"] == 16
    # the same Q, K and V: only the products of a tile and their sums in another order part the two
    n = ns["positions"].size
    assert glued["ex-lm-open-gap"] <= average_atol(n + 3 * n // 16, ns["noisy"], square_gap(1.0, ns["tau"]))
    n, size = ns["positions"].size, 16
    tiles = sum(min(size, n - start) * min(n, start + size) for start in range(0, n, size))
    assert glued["ex-lm-open-share"] == tiles / n**2
    assert 0.5 < glued["ex-lm-open-share"] < 0.6, "about half the pairs"
    # the solution's count: N (N + |J|) / 2 pairs when |J| divides N (the diagonal tiles scored whole)
    def scored(n, size):
        return sum(min(size, n - start) * min(n, start + size) for start in range(0, n, size))
    assert all(scored(96, b) == 96 * (96 + b) // 2 for b in (1, 2, 3, 4, 8, 16, 32, 96))
    assert abs(tiles - n * (n + size) / 2) <= size**2 / 2, "about N (N + |J|) / 2 when |J| does not divide N"
