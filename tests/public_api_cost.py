"""The audit's entries (:class:`public_api.Call`) for what attention costs and its cheaper heads.

:mod:`selfattention.cost`, :mod:`selfattention.decoding`,
:mod:`selfattention.random_features`, :mod:`selfattention.positive_features`,
:mod:`selfattention.window`, and the study of the chapter "What attention
costs". Kinds as in :mod:`public_api`; each valid call is small (the
positions ``P`` of six tokens).
"""

from __future__ import annotations

import numpy as np
from public_api import Call, P, Y

from selfattention import (
    cost,
    decoding,
    feature_error,
    low_rank,
    model_cost,
    online_softmax,
    positive_features,
    quadrature,
    random_features,
    spectrum,
    window,
)
from selfattention.figures import approximate_heads as heads_figures
from selfattention.figures import cost as cost_figures
from selfattention.figures import feature_error as feature_error_figures
from selfattention.figures import linear_memory as linear_memory_figures
from selfattention.figures import low_rank as low_rank_figures
from selfattention.figures import quadrature as quadrature_figures
from selfattention.head import gaussian_head_weights, positional_features
from selfattention.interactive import explorer_data
from selfattention.studies import approximate_heads, feature_draws
from selfattention.studies import feature_error as feature_error_study
from selfattention.studies import low_rank as low_rank_study
from selfattention.studies import quadrature as quadrature_study
from tools import ROOT

#: Two frequencies, two centres and their log-weights.
OMEGA = np.array([2.0, 7.0])
CENTRES, LOG_WEIGHTS = np.array([0.2, 0.7]), np.array([0.0, -1.0])


def cost_calls() -> list[Call]:
    """Entries of the cost counts, the decoders, the random-feature and window heads, and their study."""
    a, t, c, r = "array", "temperature", "count", "rng"
    series = {"signal": Y, "positions": P}
    W_Q, W_K, W_V = gaussian_head_weights()
    tokens = {"X": positional_features(Y, P), "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "temperature": 0.05}
    token_kinds = {"X": a, "W_Q": a, "W_K": a, "W_V": a, "temperature": "positive"}
    return [
        Call("cost.exact_cost", cost.exact_cost, {"n": 6, "d_k": 3, "d_v": 1}, {"n": c, "d_k": c, "d_v": c}),
        Call("cost.feature_cost", cost.feature_cost, {"n": 6, "columns": 8, "d_v": 1},
             {"n": c, "columns": c, "d_v": c}),
        Call("cost.window_cost", cost.window_cost, {"pairs": 20, "d_k": 3, "d_v": 1},
             {"pairs": c, "d_k": c, "d_v": c}),
        Call("cost.decoding_cost", cost.decoding_cost, {"n": 6, "cached": True, "d_k": 3, "d_v": 1},
             {"n": c, "cached": "flag", "d_k": c, "d_v": c}),
        Call("cost.largest_n", cost.largest_n, {"nbytes": 2**20, "bytes_per_entry": 24},
             {"nbytes": "bytes", "bytes_per_entry": c}),
        Call("cost.loglog_slope", cost.loglog_slope, {"sizes": [10.0, 20.0, 40.0], "values": [1.0, 4.0, 16.0]},
             {"sizes": a, "values": a}),
        Call("cost.crossover", cost.crossover, {"sizes": [1.0, 2.0, 4.0, 8.0], "first": [1.0, 4.0, 16.0, 64.0],
             "second": [3.0, 6.0, 12.0, 24.0]}, {"sizes": a, "first": a, "second": a}),
        Call("decoding.decode_recomputed", decoding.decode_recomputed, tokens, token_kinds),
        Call("decoding.decode_cached", decoding.decode_cached, tokens, token_kinds),
        Call("random_features.gaussian_frequencies", random_features.gaussian_frequencies,
             {"count": 4, "temperature": 0.05, "rng": 1}, {"count": c, "temperature": t, "rng": r}),
        Call("random_features.fourier_features", random_features.fourier_features,
             {"positions": P, "frequencies": OMEGA}, {"positions": a, "frequencies": a}),
        Call("random_features.random_feature_head", random_features.random_feature_head,
             {**series, "frequencies": OMEGA}, {"signal": a, "positions": a, "frequencies": a}),
        Call("positive_features.positive_feature_head", positive_features.positive_feature_head,
             {**series, "temperature": 0.05, "centres": CENTRES, "log_weights": LOG_WEIGHTS},
             {"signal": a, "positions": a, "temperature": t, "centres": a, "log_weights": a}),
        Call("positive_features.spread_centres", positive_features.spread_centres,
             {"count": 4, "positions": P, "temperature": 0.05, "rng": 1},
             {"count": c, "positions": a, "temperature": t, "rng": r}),
        Call("positive_features.performer_centres", positive_features.performer_centres,
             {"count": 4, "temperature": 0.05, "rng": 1, "origin": 0.5},
             {"count": c, "temperature": t, "rng": r, "origin": "real"}),
        Call("window.window_head", window.window_head, {**series, "temperature": 0.05, "half_width": 0.3},
             {"signal": a, "positions": a, "temperature": t, "half_width": "nonnegative"}),
        Call("spectrum.latex", spectrum.latex, {"expr": spectrum.u**2}, {"expr": "symbol"}, False),
        *_linear_memory_calls(series),
        *_study_calls(series),
        *_explorer_calls(),
        *_figure_calls(),
        *_quadrature_calls(),
        *_feature_error_calls(series),
    ]


def _linear_memory_calls(series) -> list[Call]:
    """The online head, and a transformer layer's counts and key-value cache (book/linear-memory.md)."""
    a, c = "array", "count"
    Q, K, V = np.ones((2, 3)), np.arange(12.0).reshape(4, 3) / 10, np.arange(8.0).reshape(4, 2)
    return [
        Call("online_softmax.online_attention", online_softmax.online_attention,
             {"Q": Q, "K": K, "V": V, "temperature": 0.7, "block": 3},
             {"Q": a, "K": a, "V": a, "temperature": "positive", "block": c}),
        Call("online_softmax.online_gaussian_head", online_softmax.online_gaussian_head,
             {**series, "temperature": 0.05, "block": 4},
             {"signal": a, "positions": a, "temperature": "temperature", "block": c}),
        Call("online_softmax.rounding_bound", online_softmax.rounding_bound,
             {**series, "temperature": 0.05, "block": 4},
             {"signal": a, "positions": a, "temperature": "temperature", "block": c}),
        Call("online_softmax.rescaling_identity", online_softmax.rescaling_identity, {"old": 2, "new": 1},
             {"old": c, "new": c}, False),
        Call("model_cost.layer_cost", model_cost.layer_cost,
             {"n": 6, "d_model": 8, "heads": 2, "d_ff": 32, "matrices": 2},
             {"n": c, "d_model": c, "heads": c, "d_ff": c, "matrices": c}, False),
        Call("model_cost.attention_dominates_from", model_cost.attention_dominates_from,
             {"d_model": 8, "d_ff": 32, "matrices": 2}, {"d_model": c, "d_ff": c, "matrices": c}),
        Call("model_cost.kv_cache_bytes", model_cost.kv_cache_bytes,
             {"n": 6, "layers": 2, "kv_heads": 2, "d_head": 4, "bytes_per_number": 2, "window": 4},
             {"n": c, "layers": c, "kv_heads": c, "d_head": c, "bytes_per_number": c, "window": c}),
        Call("linear_memory.plot_peak_memory", linear_memory_figures.plot_peak_memory,
             {"exact_ns": [256.0, 512.0], "exact_bytes": [1e6, 4e6], "online_ns": [256.0, 512.0, 1024.0],
              "online_bytes": [1e6, 2e6, 4e6], "exact_seconds": [0.1, 0.4], "online_seconds": [0.1, 0.4, 1.6],
              "guard_n": 600, "machine": "m"},
             {**dict.fromkeys(("exact_ns", "exact_bytes", "online_ns", "online_bytes", "exact_seconds",
                               "online_seconds"), a), "guard_n": c, "machine": "string"}, False),
        Call("linear_memory.plot_layer_cost", linear_memory_figures.plot_layer_cost,
             {"ns": [10.0, 20.0, 40.0], "projections": [4.0, 8.0, 16.0], "attention": [1.0, 4.0, 16.0],
              "mlp": [8.0, 16.0, 32.0], "from_projections": 16.0, "from_layer": 48.0},
             {**dict.fromkeys(("ns", "projections", "attention", "mlp"), a), "from_projections": "positive",
              "from_layer": "positive"}, False),
    ]


def _study_calls(series) -> list[Call]:
    a, t, c, r = "array", "temperature", "count", "rng"
    kinds = {"signal": a, "positions": a, "temperature": t}
    return [
        Call("approximate_heads.feature_head", approximate_heads.feature_head,
             {"method": "spread", **series, "temperature": 0.05, "count": 3, "rng": 1},
             {"method": "string", **kinds, "count": c, "rng": r}),
        Call("approximate_heads.feature_errors", approximate_heads.feature_errors,
             {**series, "temperature": 0.05, "counts": [2, 4], "draws": 2, "rng": 1, "methods": ("fourier",)},
             {**kinds, "counts": "counts", "draws": c, "rng": r, "methods": "sequence"}),
        Call("approximate_heads.nonpositive_draw", approximate_heads.nonpositive_draw,
             {**series, "temperature": 0.05, "count": 1, "rng": 1, "tries": 100},
             {**kinds, "count": c, "rng": r, "tries": c}),
        Call("approximate_heads.kernel_sums", approximate_heads.kernel_sums, {"positions": P, "temperature": 0.05},
             {"positions": a, "temperature": t}),
        Call("approximate_heads.window_errors", approximate_heads.window_errors,
             {**series, "temperature": 0.05, "half_widths": [0.1, 0.5]}, {**kinds, "half_widths": a}),
        Call("cost.read_timings", cost.read_timings,
             {"path": ROOT / "benchmarks" / "attention_cost.json"}, {"path": "instance"}),
        Call("feature_draws.nonpositive_rate", feature_draws.nonpositive_rate,
             {"positions": P, "temperature": 0.05, "count": 2, "draws": 3, "rng": 1},
             {"positions": a, "temperature": t, "count": c, "draws": c, "rng": r}),
        Call("feature_draws.error_slopes", feature_draws.error_slopes,
             {"counts": [2.0, 4.0, 8.0], "errors": [[1.0, 0.7, 0.5], [0.9, 0.6, 0.5]], "smallest": 2, "groups": 2},
             {"counts": a, "errors": a, "smallest": "real", "groups": c}),
        Call("approximate_heads.cost_and_error", approximate_heads.cost_and_error,
             {**series, "temperature": 0.05, "half_widths": [0.1, 0.5], "counts": [2, 4], "draws": 2, "rng": 1},
             {**kinds, "half_widths": a, "counts": "counts", "draws": c, "rng": r}),
    ]


def _explorer_calls() -> list[Call]:
    return [
        Call("explorer_data.cost_data", explorer_data.cost_data, {"n": 20, "count": 8},
             {"n": "count", "count": "count"}, False),
        Call("explorer_data.cost_series", explorer_data.cost_series, {"data": explorer_data.cost_data(n=20, count=8)},
             {"data": "mapping"}),
    ]


def _figure_calls() -> list[Call]:
    a, f = "array", False
    ns, counts = np.array([10.0, 20.0, 40.0]), [cost.exact_cost(n) for n in (10, 20, 40)]
    ops, nbytes = [c.multiply_adds for c in counts], [c.nbytes for c in counts]
    timings = {"exact": (ns, [1.0, 4.0, 16.0]), "fourier-64": (ns, [2.0, 4.0, 8.0])}
    errors = {"fourier": np.array([[0.3, 0.2], [0.4, 0.1]]), "spread": np.array([[0.2, 0.1], [0.1, 0.05]])}
    panel = {m: {"operations": np.array([1.0, 2.0]), "errors": np.array([0.1, 0.01])}
             for m in ("window", "fourier", "spread")}
    return [
        Call("cost.plot_quadratic_wall", cost_figures.plot_quadratic_wall, {"ns": ns, "multiply_adds": ops,
             "nbytes": nbytes, "guard_n": 30, "measured_ns": ns, "seconds": [1.0, 4.0, 16.0], "machine": "m"},
             {"ns": a, "multiply_adds": a, "nbytes": a, "guard_n": "count", "measured_ns": a, "seconds": a,
              "machine": "string"}, f),
        Call("cost.plot_decoding", cost_figures.plot_decoding, {"ns": ns, "recomputed": [3.0, 9.0, 27.0],
             "cached": [1.0, 2.0, 4.0], "measured_ns": ns, "recomputed_seconds": [1.0, 3.0, 9.0],
             "cached_seconds": [1.0, 2.0, 3.0], "machine": "m"}, {"ns": a, "recomputed": a, "cached": a,
             "measured_ns": a, "recomputed_seconds": a, "cached_seconds": a, "machine": "string"}, f),
        Call("cost.plot_times", cost_figures.plot_times, {"timings": timings,
             "labels": {"exact": "exact", "fourier-64": "cosines"}, "crossovers": {"fourier-64": 20.0},
             "machine": "m"}, {"timings": "mapping", "labels": "mapping", "crossovers": "mapping",
                               "machine": "string"}, f),
        Call("approximate_heads.plot_feature_errors", heads_figures.plot_feature_errors, {"counts": [4, 16],
             "errors": errors, "slopes": {"fourier": -0.5, "spread": -0.5}},
             {"counts": a, "errors": "mapping", "slopes": "mapping"}, f),
        Call("approximate_heads.plot_denominators", heads_figures.plot_denominators, {"positions": P,
             "estimated": Y, "exact": Y + 2, "output": Y, "exact_output": Y, "positive_output": Y},
             dict.fromkeys(("positions", "estimated", "exact", "output", "exact_output", "positive_output"), a), f),
        Call("approximate_heads.plot_window_errors", heads_figures.plot_window_errors, {"reach": [1.0, 2.0],
             "errors": [0.1, 0.01], "bound": [0.3, 0.02]}, {"reach": a, "errors": a, "bound": a}, f),
        Call("approximate_heads.plot_cost_and_error", heads_figures.plot_cost_and_error, {"panels": [panel, panel],
             "titles": ["one", "two"]}, {"panels": "sequence", "titles": "sequence"}, f),
        Call("approximate_heads.plot_exact_and_features", heads_figures.plot_exact_and_features,
             {"positions": P, "clean": Y, "noisy": Y, "exact": Y, "approximate": Y, "count": 4},
             {**dict.fromkeys(("positions", "clean", "noisy", "exact", "approximate"), a), "count": "count"}, f),
    ]


def _quadrature_calls() -> list[Call]:
    """Bumps on a grid and in several dimensions (:mod:`selfattention.quadrature`), and the weights' rank."""
    a, t, c, r, f = "array", "temperature", "count", "rng", False
    keys = np.column_stack([P, P[::-1]])  # (6, 2)
    centres = np.array([[0.2, 0.3], [0.7, 0.6]])
    dims = quadrature_study.dimension_errors([1, 2], [4, 9], draws=2, n=6, rng=1)
    sweep = low_rank_study.rank_sweep(P, [0.01, 0.1])
    return [
        Call("quadrature.grid_centres", quadrature.grid_centres, {"count": 4, "positions": P, "temperature": 0.05},
             {"count": c, "positions": a, "temperature": t}),
        Call("quadrature.trapezoid_rate", quadrature.trapezoid_rate,
             {"count": 4, "positions": P, "temperature": 0.05}, {"count": c, "positions": a, "temperature": t}),
        Call("quadrature.box_grid", quadrature.box_grid, {"per_axis": 2, "keys": keys, "temperature": 0.05},
             {"per_axis": c, "keys": a, "temperature": t}),
        Call("quadrature.box_uniform", quadrature.box_uniform,
             {"count": 3, "keys": keys, "temperature": 0.05, "rng": 1},
             {"count": c, "keys": a, "temperature": t, "rng": r}),
        Call("quadrature.normal_frequencies", quadrature.normal_frequencies,
             {"count": 3, "dims": 2, "temperature": 0.05, "rng": 1},
             {"count": c, "dims": c, "temperature": t, "rng": r}),
        Call("quadrature.orthogonal_frequencies", quadrature.orthogonal_frequencies,
             {"count": 3, "dims": 2, "temperature": 0.05, "rng": 1},
             {"count": c, "dims": c, "temperature": t, "rng": r}),
        Call("quadrature_study.orthogonal_errors", quadrature_study.orthogonal_errors,
             {"dims": 2, "counts": [2, 4], "draws": 2, "n": 6, "rng": 1},
             {"dims": c, "counts": "counts", "draws": c, "n": c, "rng": r}),
        Call("quadrature_study.bump_relative_variance", quadrature_study.bump_relative_variance, {"dims": 2},
             {"dims": c}),
        Call("quadrature_study.spread_product_variance", quadrature_study.spread_product_variance,
             {"positions": P, "temperature": 0.05, "pair": [0.4, 0.5], "draws": 10, "rng": 1},
             {"positions": a, "temperature": t, "pair": a, "draws": c, "rng": r}),
        Call("quadrature_study.phase_product_variance", quadrature_study.phase_product_variance,
             {"pair": [0.4, 0.5], "temperature": 0.05, "draws": 10, "rng": 1},
             {"pair": a, "temperature": t, "draws": c, "rng": r}),
        Call("quadrature.kernel_head", quadrature.kernel_head, {"signal": Y, "keys": keys, "temperature": 0.05},
             {"signal": a, "keys": a, "temperature": t}),
        Call("quadrature.bump_head", quadrature.bump_head,
             {"signal": Y, "keys": keys, "centres": centres, "temperature": 0.05},
             {"signal": a, "keys": a, "centres": a, "temperature": t}),
        Call("quadrature.cosine_head", quadrature.cosine_head,
             {"signal": Y, "keys": keys, "frequencies": centres}, {"signal": a, "keys": a, "frequencies": a}),
        Call("low_rank.singular_values", low_rank.singular_values, {"positions": P, "temperature": 0.05},
             {"positions": a, "temperature": t}),
        Call("low_rank.numerical_rank", low_rank.numerical_rank, {"values": [3.0, 1.0, 1e-9], "tolerance": 1e-6},
             {"values": a, "tolerance": "positive"}),
        Call("low_rank.feature_weights", low_rank.feature_weights, {"positions": P, "frequencies": OMEGA},
             {"positions": a, "frequencies": a}),
        Call("quadrature_study.grid_errors", quadrature_study.grid_errors,
             {"signal": Y, "positions": P, "temperature": 0.05, "counts": [2, 4], "draws": 2, "rng": 1},
             {"signal": a, "positions": a, "temperature": t, "counts": "counts", "draws": c, "rng": r}),
        Call("quadrature_study.dimension_errors", quadrature_study.dimension_errors,
             {"dims": [1, 2], "counts": [4, 9], "draws": 2, "n": 6, "sigma": 0.3, "rng": 1},
             {"dims": "counts", "counts": "counts", "draws": c, "n": c, "sigma": "nonnegative", "rng": r}),
        Call("low_rank_study.rank_sweep", low_rank_study.rank_sweep,
             {"positions": P, "temperatures": [0.01, 0.1], "tolerance": 1e-6},
             {"positions": a, "temperatures": "temperatures", "tolerance": "positive"}),
        Call("quadrature.plot_grid_errors", quadrature_figures.plot_grid_errors,
             {"counts": [4, 8], "grid": [0.1, 0.0], "random": [[0.2, 0.1], [0.3, 0.2]]},
             {"counts": a, "grid": a, "random": a}, f),
        Call("quadrature.plot_dimension_errors", quadrature_figures.plot_dimension_errors,
             {"results": dims, "dims": [1, 2]}, {"results": "mapping", "dims": "counts"}, f),
        Call("low_rank.plot_singular_values", low_rank_figures.plot_singular_values,
             {"temperatures": [0.01, 0.1], "values": sweep["values"], "ranks": sweep["ranks"], "tolerance": 1e-6},
             {"temperatures": a, "values": a, "ranks": a, "tolerance": "positive"}, f),
    ]


def _feature_error_calls(series) -> list[Call]:
    """Rahimi and Recht's bound, the worst pair, and the head's ratio by the delta method (book/random-features.md)."""
    a, t, c, r, pos, f = "array", "temperature", "count", "rng", "positive", False
    bound = {"failure": 0.5, "dims": 1, "second_moment": 400.0, "diameter": 1.0}
    bound_kinds = {"failure": pos, "dims": c, "second_moment": pos, "diameter": pos}
    return [
        Call("feature_error.uniform_bound", feature_error.uniform_bound, {**bound, "count": 64},
             {**bound_kinds, "count": c}),
        Call("feature_error.uniform_bound_count", feature_error.uniform_bound_count, {**bound, "tolerance": 0.3},
             {**bound_kinds, "tolerance": pos}),
        Call("feature_error.sup_error", feature_error.sup_error,
             {"positions": P, "frequencies": OMEGA, "temperature": 0.05},
             {"positions": a, "frequencies": a, "temperature": t}),
        Call("feature_error.frequency_moments", feature_error.frequency_moments, {**series, "temperature": 0.05},
             {"signal": a, "positions": a, "temperature": t}),
        Call("feature_error.delta_sd", feature_error.delta_sd, {**series, "temperature": 0.05, "count": 8},
             {"signal": a, "positions": a, "temperature": t, "count": c}),
        Call("feature_error_study.uniform_errors", feature_error_study.uniform_errors,
             {"positions": P, "temperature": 0.05, "counts": [2, 4], "draws": 2, "rng": 1},
             {"positions": a, "temperature": t, "counts": "counts", "draws": c, "rng": r}),
        Call("feature_error_study.ratio_spread", feature_error_study.ratio_spread,
             {**series, "temperature": 0.05, "counts": [2, 4], "draws": 4, "rng": 1},
             {"signal": a, "positions": a, "temperature": t, "counts": "counts", "draws": c, "rng": r}),
        Call("feature_error.plot_uniform_errors", feature_error_figures.plot_uniform_errors,
             {"counts": [4, 8], "measured": [[0.3, 0.2], [0.4, 0.1]], "bound": [2.0, 1.0]},
             {"counts": a, "measured": a, "bound": a}, f),
        Call("feature_error.plot_ratio_spread", feature_error_figures.plot_ratio_spread,
             {"positions": P, "counts": [4], "predicted": np.ones((1, P.size)), "measured": np.ones((1, P.size))},
             {"positions": a, "counts": "counts", "predicted": a, "measured": a}, f),
    ]
