"""The audit's entries (:class:`public_api.Call`) for positional encodings and masks.

:mod:`selfattention.positional`, the causal mask, the sympy derivations of
the positional scores, the studies and figures of the chapter "Where tokens
are, and what they may see". Kinds as in :mod:`public_api`; each valid call
is small (the positions ``P`` of six tokens).
"""

from __future__ import annotations

import numpy as np
from public_api import OUT, QKV, TAUS, Call, P, W, Y

from selfattention import core, kernel, metrics, positional, symbolic
from selfattention.figures import causal as causal_figures
from selfattention.figures import positional as positional_figures
from selfattention.figures import rotary as rotary_figures
from selfattention.figures import sinusoidal as sinusoidal_figures
from selfattention.studies import alibi, causal, equal_width, rotary, sinusoidal

#: Two frequencies and their amplitudes, within the rule for positions spanning 1.
OMEGA, RHO = np.array([np.pi, 1.0]), np.array([5.0, 2.0])
SWEEP = causal.offset_sweep(Y, OUT, P, 0.05, [0.0, 0.1])


def positions_calls() -> list[Call]:
    """Entries of :mod:`~selfattention.positional`, the masks and their studies and figures."""
    a, t, c, f = "array", "temperature", "count", False
    cosine = {"signal": Y, "positions": P, "frequencies": OMEGA, "amplitudes": RHO, "mask": np.ones((6, 6), bool)}
    cosine_kinds = {"signal": a, "positions": a, "frequencies": a, "amplitudes": a, "mask": "mask"}
    return [
        Call("core.attention (bias)", core.attention, {**QKV, "temperature": 0.7,
             "bias": -np.arange(8.0).reshape(2, 4)}, {"bias": "scores"}),
        Call("core.causal_mask", core.causal_mask, {"n": 4}, {"n": c}),
        Call("metrics.mean_offset", metrics.mean_offset, {"weights": W, "positions": P},
             {"weights": a, "positions": a}),
        Call("kernel.leave_one_out_scores (laplace)", kernel.leave_one_out_scores,
             {"signal": Y, "positions": P, "candidates": TAUS, "kernel": "laplace"}, {"kernel": "string"}),
        Call("kernel.choose_temperature (laplace)", kernel.choose_temperature,
             {"signal": Y, "positions": P, "candidates": TAUS, "kernel": "laplace"}, {"kernel": "string"}),
        Call("positional.sinusoidal_encoding", positional.sinusoidal_encoding, {"positions": P, "frequencies": OMEGA},
             {"positions": a, "frequencies": a}),
        Call("positional.sinusoidal_head_weights", positional.sinusoidal_head_weights, {"amplitudes": [2.0, -1.0]},
             {"amplitudes": a}),
        Call("positional.sinusoidal_head", positional.sinusoidal_head, cosine, cosine_kinds),
        Call("positional.rotate", positional.rotate, {"vectors": np.ones((6, 4)), "positions": P,
             "frequencies": OMEGA}, {"vectors": a, "positions": a, "frequencies": a}),
        Call("positional.rotary_head_weights", positional.rotary_head_weights, {"amplitudes": [2.0, -1.0]},
             {"amplitudes": a}),
        Call("positional.rotary_head", positional.rotary_head, cosine, cosine_kinds),
        Call("positional.alibi_bias", positional.alibi_bias, {"positions": P, "slope": 3.0},
             {"positions": a, "slope": "nonnegative"}),
        Call("positional.alibi_head", positional.alibi_head, {"signal": Y, "positions": P, "slope": 3.0,
             "mask": np.ones((6, 6), bool)}, {"signal": a, "positions": a, "slope": "nonnegative", "mask": "mask"}),
        Call("positional.gaussian_amplitude", positional.gaussian_amplitude, {"frequency": np.pi, "temperature": 0.05},
             {"frequency": t, "temperature": t}),
        Call("positional.alias_free_frequency", positional.alias_free_frequency, {"positions": P},
             {"positions": a}),
        Call("positional.transformer_frequencies", positional.transformer_frequencies, {"count": 4, "base": 100.0},
             {"count": c, "base": "positive"}),
        Call("symbolic.symbolic_sinusoidal_score", symbolic.symbolic_sinusoidal_score, {}, {}, f),
        Call("symbolic.is_cosine_of_the_difference", symbolic.is_cosine_of_the_difference, {}, {}, f),
        Call("symbolic.cosine_expansion", symbolic.cosine_expansion, {"order": 5}, {"order": c}, f),
        Call("symbolic.rotation", symbolic.rotation, {"angle": symbolic.omega * symbolic.p_i}, {"angle": "symbol"}, f),
        Call("symbolic.symbolic_rotary_score", symbolic.symbolic_rotary_score, {}, {}, f),
        Call("symbolic.distance_matrix", symbolic.distance_matrix, {"n": 3}, {"n": c}, f),
        Call("symbolic.distance_determinant", symbolic.distance_determinant, {"n": 3}, {"n": c}, f),
        *_study_calls(),
        *_figure_calls(),
    ]


def _study_calls() -> list[Call]:
    a, t, c, r = "array", "temperature", "count", "rng"
    series = {"signal": Y, "clean": OUT, "positions": P}
    return [
        Call("sinusoidal.cosine_scores", sinusoidal.cosine_scores, {"positions": P, "frequencies": OMEGA,
             "amplitudes": RHO}, {"positions": a, "frequencies": a, "amplitudes": a}),
        Call("sinusoidal.shift_gap", sinusoidal.shift_gap, {"positions": P, "frequencies": OMEGA, "amplitudes": RHO,
             "shift": 3.0}, {"positions": a, "frequencies": a, "amplitudes": a, "shift": "real"}),
        Call("sinusoidal.frequency_sweep", sinusoidal.frequency_sweep, {**series, "frequencies": [1.0, 3.0],
             "temperature": 0.05}, {**dict.fromkeys(series, a), "frequencies": a, "temperature": t}),
        Call("sinusoidal.relative_scores", sinusoidal.relative_scores, {"distances": [0.0, 0.5, 1.0],
             "frequencies": [1.0, 3.0], "temperature": 0.05}, {"distances": a, "frequencies": a, "temperature": t}),
        Call("rotary.random_projection_shift_gaps", rotary.random_projection_shift_gaps, {"positions": P,
             "frequencies": OMEGA, "shift": 0.3, "rng": 1}, {"positions": a, "frequencies": a, "shift": "real",
             "rng": r}),
        Call("rotary.long_sine", rotary.long_sine, {"n": 6, "sigma": 0.3, "length": 2.0, "period": 1.2, "rng": 1},
             {"n": c, "sigma": "nonnegative", "length": "positive", "period": "positive", "rng": r}),
        Call("rotary.largest_return", rotary.largest_return, {"frequencies": OMEGA, "temperature": 0.05, "span": 1.0,
             "reach": 20.0}, {"frequencies": a, "temperature": t, "span": "nonnegative", "reach": "positive"}),
        Call("rotary.far_share", rotary.far_share, {"weights": W, "positions": P, "distance": 0.3},
             {"weights": a, "positions": a, "distance": "nonnegative"}),
        Call("alibi.score_ranks", alibi.score_ranks, {"positions": P, "frequency": np.pi},
             {"positions": a, "frequency": "positive"}),
        Call("alibi.loo_comparison", alibi.loo_comparison, {**series, "candidates": TAUS},
             {**dict.fromkeys(series, a), "candidates": "temperatures"}),
        Call("alibi.other_draws", alibi.other_draws, {"n": 8, "sigma": 0.3, "seeds": [1, 2], "candidates": TAUS},
             {"n": c, "sigma": "nonnegative", "seeds": "counts", "candidates": "temperatures"}),
        Call("alibi.neighbours_at_equal_width", alibi.neighbours_at_equal_width, {"positions": P,
             "temperature": 0.05, "row": 2}, {"positions": a, "temperature": t, "row": c}),
        Call("equal_width.errors_on_draws", equal_width.errors_on_draws, {"n": 8, "sigma": 0.3, "temperature": 0.05,
             "seeds": [1, 2]}, {"n": c, "sigma": "nonnegative", "temperature": t, "seeds": "counts"}),
        Call("causal.offset_sweep", causal.offset_sweep, {**series, "temperature": 0.05, "offsets": [0.0, 0.1],
             "row": 3}, {**dict.fromkeys(series, a), "temperature": t, "offsets": a, "row": c}),
        Call("causal.matching_temperature", causal.matching_temperature, {"positions": P, "temperature": 0.05,
             "offset": 0.1, "row": 3}, {"positions": a, "temperature": t, "offset": "nonnegative", "row": c}),
        Call("causal.delayed_rmse", causal.delayed_rmse, {"estimate": OUT, "positions": P, "lag": 0.05,
             "periods": 1.0}, {"estimate": a, "positions": a, "lag": "real", "periods": "real"}),
        Call("causal.next_token_errors", causal.next_token_errors, {"signal": Y, "positions": P,
             "temperatures": TAUS, "offset": 0.05}, {"signal": a, "positions": a, "temperatures": "temperatures",
                                                    "offset": "real"}),
        Call("causal.next_token", causal.next_token, {**series, "candidates": TAUS},
             {**dict.fromkeys(series, a), "candidates": "temperatures"}),
    ]


def _figure_calls() -> list[Call]:
    a, f = "array", False
    signal = {"positions": P, "clean": Y, "noisy": Y}
    two_outputs, two_weights = {"one": OUT, "two": Y}, {"one": W, "two": W}
    return [
        Call("positional.plot_kernel_rows", positional_figures.plot_kernel_rows, {"positions": P,
             "weights": {"a": W, "b": W}, "queries": [1, 4]}, {"positions": a, "weights": "mapping",
                                                               "queries": "counts"}, f),
        Call("positional.plot_head_outputs", positional_figures.plot_head_outputs, {**signal, "outputs": two_outputs,
             "errors": {"one": 0.1, "two": 0.2}}, {**dict.fromkeys(signal, a), "outputs": "mapping",
                                                   "errors": "mapping"}, f),
        Call("sinusoidal.plot_aliasing", sinusoidal_figures.plot_aliasing, {"distances": [0.0, 0.5, 1.0],
             "frequencies": [1.0, 3.0], "profiles": [[0.0, -1.0, -2.0], [0.0, -0.5, 0.0]], "temperature": 0.05,
             "sweep_frequencies": [1.0, 2.0], "sweep_rmse": [0.1, 0.2], "gaussian_rmse": 0.1, "span": 1.0},
             {"distances": a, "frequencies": a, "profiles": a, "temperature": "temperature",
              "sweep_frequencies": a, "sweep_rmse": a, "gaussian_rmse": "nonnegative", "span": "positive"}, f),
        Call("rotary.plot_extrapolation", rotary_figures.plot_extrapolation, {**signal, "outputs": two_outputs,
             "weights": two_weights, "query": 2, "set_up_span": 0.5},
             {**dict.fromkeys(signal, a), "outputs": "mapping", "weights": "mapping", "query": "count",
              "set_up_span": "positive"}, f),
        Call("causal.plot_causal", causal_figures.plot_causal, {**signal, "outputs": two_outputs,
             "weights": two_weights, "query": 3, "offsets": [0.0, 0.1], "sweep": SWEEP, "chosen": 0.1},
             {**dict.fromkeys(signal, a), "outputs": "mapping", "weights": "mapping", "query": "count",
              "offsets": a, "sweep": "mapping", "chosen": "real"}, f),
    ]
