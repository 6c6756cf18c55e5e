"""Every public function of the package, with a valid call and the kind of each argument.

The audits of bad input and of non-finite results
(``tests/unit/test_input_audit.py``) run over :func:`calls`;
:func:`public_callables` lists what the package defines, so that a new
function without an entry here fails the audit until it gets one.

Kinds (the strategies of ``tests/strategies.py`` give the bad values of each):
``array`` real numbers; ``scores`` the same, ``-inf`` allowed; ``temperatures``
positive reals; ``real``, ``positive``, ``nonnegative``, ``temperature``
scalars; ``count``, ``counts`` integers; ``bytes`` an integer without an upper bound; ``rng``; ``flag``; ``string``;
``axis``; ``mask``; ``mapping``; ``options`` (keyword arguments for
matplotlib); ``sequence``; ``axes`` (matplotlib);
``region``; ``symbol`` (sympy or real); ``instance`` (of a package class); ``tokens`` (token ids); ``indices``
(layers of a circuit, possibly none); ``steps`` (step numbers >= 0, possibly none, e.g. checkpoints).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from functools import cache

import numpy as np

import selfattention
from selfattention import core, defaults, head, kernel, memory, metrics, multihead, signals, symbolic, work
from selfattention.checks import CHECKS
from selfattention.figures import (
    _style,
    bias_variance,
    diagrams,
    dk_scaling,
    gaussian_band,
    leave_one_out,
    noise_and_samples,
    onedim,
    panels,
    power_laws,
    smoothing,
    temperature_limits,
)
from selfattention.figures import multihead as mh_figures
from selfattention.interactive import explorer_data, widget
from selfattention.studies import bias_variance as bv
from selfattention.studies import derivative as dv
from selfattention.studies import differences as df
from selfattention.studies import dk_scaling as dks
from selfattention.studies import gaussian_band as band
from selfattention.studies import jackknife as jk
from selfattention.studies import leave_one_out as loo
from selfattention.studies import noise_and_samples as ns
from selfattention.studies import onedim as od
from selfattention.studies import power_laws as pl
from selfattention.studies import temperature_limits as tl
from selfattention.studies import worked_example as we

#: Public names that take no user data, or whose arguments are another library's.
NO_USER_DATA = {
    "selfattention.memory.get_limit": "no arguments",
    "selfattention.work.get_work_limit": "no arguments",
    "selfattention.studies.worked_example.example_tokens": "no arguments",
    "selfattention.figures.diagrams.draw_overview": "no arguments",
    "selfattention.interactive.widget.SliderValueError": "an exception class",
    "selfattention.figures._style.BookFigure": "matplotlib's Figure: its arguments are matplotlib's",
    "selfattention.figures._style.book_figure": "a decorator: its argument is a figure function of the package",
    "selfattention.studies.noise_and_samples.SmoothedSine": "a named tuple of results, checked where it is used",
    "selfattention.symbolic.symbolic_bilateral_projections": "no arguments",
    "selfattention.symbolic.symbolic_bilateral_score": "no arguments",
    "selfattention.symbolic.is_bilateral_score": "no arguments",
    "selfattention.symbolic.symbolic_offset_projections": "no arguments",
    "selfattention.symbolic.symbolic_offset_score": "no arguments",
    "selfattention.symbolic.is_offset_squared_distance": "no arguments",
    "selfattention.studies.derivative.best_offset_ratio": "no arguments",
    "selfattention.studies.derivative.DerivativeRisk": "a dataclass of results, checked where it is made",
    "selfattention.cost.Cost": "a dataclass of counts, made by the cost functions from checked counts",
    "selfattention.spectrum.frequency_variance": "no arguments",
    "selfattention.spectrum.cosine_variance": "no arguments",
    "selfattention.delta_method.cosine_product_mean": "no arguments",
    "selfattention.delta_method.ratio_variance": "no arguments",
    "selfattention.spectrum.bump_integral": "no arguments",
    "selfattention.spectrum.performer_exponent": "no arguments",
    "selfattention.spectrum.performer_relative_variance": "no arguments",
    "selfattention.spectrum.spread_relative_variance": "no arguments",
    "selfattention.spectrum.random_phase_variance": "no arguments",
    "selfattention.induction.CircuitRun": "a dataclass of results, checked where it is made",
    "selfattention.training.CircuitFit": "a dataclass of results, checked where it is made",
    "selfattention.studies.induction.Tracked": "a dataclass of results, checked where it is made",
    "selfattention.in_context_training.LayerFit": "a named tuple of results, checked where it is used",
    "selfattention.studies.in_context.Prompts": "a named tuple of prompts, checked where it is used",
    "selfattention.studies.in_context_risks.sine_zero_error": "no arguments",
    "selfattention.studies.in_context_risks.sine_line_error": "no arguments",
    **{f"{check.__module__}.{check.__qualname__}": "a check of a code exercise: its argument is the reader's "
       "function, and bad input gets a one-line verdict, not an error (tests/unit/test_checks.py)"
       for check in CHECKS},
}


@dataclass
class Call:
    """One public callable, keyword arguments that it accepts, and the kind of each checked argument."""

    name: str
    func: object
    kwargs: dict
    kinds: dict
    #: Whether its result is numbers (audited for NaN and inf), not a figure or a widget.
    numeric: bool = True
    #: Arguments for which None is valid though the signature does not say so (``**kwargs``, ...).
    optional: tuple = ()

    def __repr__(self):
        return self.name


def _fixtures():
    p = np.linspace(0.0, 1.0, 6)
    y = np.sin(2 * np.pi * p) + np.array([0.1, -0.2, 0.05, 0.3, -0.1, 0.0])
    out, w = selfattention.gaussian_head(y, p, 0.05)
    return p, y, out, w


P, Y, OUT, W = _fixtures()
TAUS = np.array([1e-3, 1e-2, 1e-1])
PARTS = bv.monte_carlo_parts(8, [1e-3, 1e-2, 0.1], draws=3, rng=1)
LAW = pl.PowerLaw(0.1, -0.5, 1.0, 0.01, 0.01)
SWEEP = tl.temperature_sweep(Y, P, TAUS)
EXAMPLES = ns.noise_levels(6, [0.1, 0.3], 0.05, rng=1)
FIG = _style.new_figure()
AX = FIG.add_subplot()
QKV = {"Q": np.ones((2, 3)), "K": np.arange(12.0).reshape(4, 3) / 10, "V": np.arange(8.0).reshape(4, 2)}
EXPLORER = {"n": 20, "sigma": 0.3, "temperature": 0.01, "candidates": TAUS}
GRID = {"whole": np.full((2, 2), 0.01), "interior": np.full((2, 2), 0.02)}


def _calls():
    a, r, t, c = "array", "rng", "temperature", "count"
    series = {"positions": P, "clean": Y, "noisy": Y}
    return [
        Call("core.softmax", core.softmax, {"x": [[0.0, 1.0], [2.0, -np.inf]], "axis": -1},
             {"x": "scores", "axis": "axis"}),
        Call("core.attention", core.attention, {**QKV, "temperature": 0.7, "mask": np.ones((2, 4), bool)},
             {"Q": a, "K": a, "V": a, "temperature": "positive", "mask": "mask"}),
        Call("head.positional_features", head.positional_features, {"signal": Y, "positions": P},
             {"signal": a, "positions": a}),
        Call("head.centre_positions", head.centre_positions, {"positions": P}, {"positions": a}),
        Call("head.gaussian_head", head.gaussian_head, {"signal": Y, "positions": P, "temperature": 0.05,
             "offset": 0.1, "mask": np.ones((6, 6), bool)},
             {"signal": a, "positions": a, "temperature": t, "offset": "real", "mask": "mask"}),
        Call("head.gaussian_head_weights", head.gaussian_head_weights, {"d_k": 3, "offset": -0.2},
             {"offset": "real"}),
        Call("head.attention_matrices", head.attention_matrices, {"positions": P, "temperatures": [0.05, 0.2],
             "offset": 0.1}, {"positions": a, "temperatures": "temperatures", "offset": "real"}),
        Call("kernel.nadaraya_watson", kernel.nadaraya_watson, {"x_query": [0.5, 0.7], "x": P, "y": Y,
             "bandwidth": 0.1}, {"x_query": a, "x": a, "y": a, "bandwidth": t}),
        Call("kernel.temperature_to_bandwidth", kernel.temperature_to_bandwidth, {"temperature": 0.1},
             {"temperature": t}),
        Call("kernel.bandwidth_to_temperature", kernel.bandwidth_to_temperature, {"bandwidth": 0.1},
             {"bandwidth": t}),
        Call("kernel.candidate_temperatures", kernel.candidate_temperatures, {"candidates": TAUS},
             {"candidates": "temperatures"}),
        Call("kernel.leave_one_out_scores", kernel.leave_one_out_scores,
             {"signal": Y, "positions": P, "candidates": TAUS},
             {"signal": a, "positions": a, "candidates": "temperatures"}),
        Call("kernel.pick_temperature", kernel.pick_temperature, {"scores": [0.3, 0.1, 0.2], "candidates": TAUS},
             {"scores": a, "candidates": "temperatures"}),
        Call("kernel.choose_temperature", kernel.choose_temperature, {"signal": Y, "positions": P, "candidates": TAUS},
             {"signal": a, "positions": a, "candidates": "temperatures"}),
        Call("metrics.rmse", metrics.rmse, {"estimate": OUT, "truth": Y}, {"estimate": a, "truth": a}),
        *(Call(f"metrics.{f.__name__}", f, {"weights": W}, {"weights": a})
          for f in (metrics.entropy, metrics.effective_neighbours, metrics.distance_from_identity,
                    metrics.distance_from_uniform, metrics.most_attended)),
        Call("metrics.local_share", metrics.local_share, {"weights": W, "positions": P, "radius": 0.2},
             {"weights": a, "positions": a, "radius": "nonnegative"}),
        Call("metrics.row_moments", metrics.row_moments, {"weights": W, "positions": P},
             {"weights": a, "positions": a}),
        Call("signals.unit_noise", signals.unit_noise, {"n": 5, "rng": 1}, {"n": c, "rng": r}),
        Call("signals.noisy_sine", signals.noisy_sine, {"n": 5, "sigma": 0.3, "periods": 2.0, "rng": 1},
             {"n": c, "sigma": "nonnegative", "periods": "nonnegative", "rng": r}),
        Call("signals.sine", signals.sine, {"periods": 3.0, "positions": P},
             {"periods": "nonnegative", "positions": a}),
        Call("defaults.check_in_ranges", defaults.check_in_ranges, {"n": 10, "sigma": 0.3, "temperature": 0.01},
             {"n": c, "sigma": "nonnegative", "temperature": "positive"}),
        Call("defaults.check_sample_ranges", defaults.check_sample_ranges, {"n": 10, "sigma": 0.3},
             {"n": c, "sigma": "nonnegative"}),
        Call("memory.set_limit", memory.set_limit, {"nbytes": memory.DEFAULT_LIMIT}, {"nbytes": c}),
        Call("memory.limit", memory.limit, {"nbytes": 2**20}, {"nbytes": c}),
        Call("memory.require", memory.require, {"nbytes": 10, "name": "n", "what": "ten bytes"},
             {"nbytes": "bytes", "name": "string", "what": "string"}),
        Call("work.set_work_limit", work.set_work_limit, {"pairs": work.DEFAULT_LIMIT}, {"pairs": c}),
        Call("work.work_limit", work.work_limit, {"pairs": 2**20}, {"pairs": c}),
        Call("work.require_work", work.require_work, {"pairs": 10, "name": "n", "what": "ten pairs"},
             {"pairs": "bytes", "name": "string", "what": "string"}),
        Call("memory.require_matrix", memory.require_matrix, {"n_rows": 3, "n_cols": 4, "name": "n", "count": 2,
             "bytes_per_entry": 8}, {"n_rows": c, "n_cols": c, "count": c, "bytes_per_entry": c}),
        Call("symbolic.exact_matrix", symbolic.exact_matrix, {"matrix": [[1.0, np.sqrt(2)]]}, {"matrix": a}),
        Call("symbolic.token_row", symbolic.token_row, {"signal": symbolic.s_i, "position": 0.5},
             {"signal": "symbol", "position": "symbol"}, numeric=False),
        *(Call(f"symbolic.{f.__name__}", f, {"W_Q": head.gaussian_head_weights()[0],
               "W_K": head.gaussian_head_weights()[1]}, {"W_Q": a, "W_K": a}, numeric=False)
          for f in (symbolic.symbolic_projections, symbolic.symbolic_score, symbolic.is_negative_squared_distance)),
        Call("symbolic.numeric_score_error", symbolic.numeric_score_error, {"positions": P, "signal": Y,
             "centre": False}, {"positions": a, "signal": a, "centre": "flag"}),
        *_study_calls(),
        *_figure_calls(series),
        *_interactive_calls(),
        *_many_head_calls(series),
    ]


def _study_calls():
    a, r, t, c = "array", "rng", "temperature", "count"
    return [
        Call("bias_variance.ErrorParts", bv.ErrorParts, {"positions": PARTS.positions,
             "temperatures": PARTS.temperatures, "smooth_bias": PARTS.smooth_bias, "noise_mean": PARTS.noise_mean,
             "noise_var": PARTS.noise_var, "draws": 3}, {"positions": a, "temperatures": "temperatures",
             "smooth_bias": a, "noise_mean": a, "noise_var": a, "draws": c}),
        Call("bias_variance.monte_carlo_parts", bv.monte_carlo_parts, {"n": 8, "temperatures": TAUS, "draws": 3,
             "periods": 1.0, "rng": 1}, {"n": c, "temperatures": "temperatures", "draws": c, "periods": "nonnegative",
             "rng": r}),
        Call("bias_variance.region_mask", bv.region_mask, {"positions": P, "region": "interior"},
             {"positions": a, "region": "region"}),
        Call("bias_variance.risk", bv.risk, {"parts": PARTS, "sigma": 0.3, "region": "whole"},
             {"parts": "instance", "sigma": "nonnegative", "region": "region"}),
        Call("bias_variance.expected_risk", bv.expected_risk, {"n": 8, "sigma": 0.3, "temperatures": TAUS,
             "region": "whole", "periods": 1.0}, {"n": c, "sigma": "nonnegative", "temperatures": "temperatures",
             "region": "region", "periods": "nonnegative"}),
        Call("bias_variance.refined_argmin", bv.refined_argmin, {"temperatures": TAUS, "mse": [0.3, 0.1, 0.2]},
             {"temperatures": "temperatures", "mse": a}),
        Call("bias_variance.leading_bias", bv.leading_bias, {"temperature": 0.01, "periods": 1.0},
             {"temperature": t, "periods": "positive"}),
        Call("dk_scaling.standard_normal_vectors", dks.standard_normal_vectors, {"n": 3, "d_k": 2, "rng": 1},
             {"n": c, "d_k": c, "rng": r}),
        Call("dk_scaling.dot_product_std", dks.dot_product_std, {"d_k": 2, "n_pairs": 5, "rng": 1},
             {"d_k": c, "n_pairs": c, "rng": r}),
        Call("dk_scaling.softmax_sharpness", dks.softmax_sharpness, {"d_k": 2, "scaled": True, "n_keys": 3,
             "n_queries": 4, "rng": 1}, {"d_k": c, "scaled": "flag", "n_keys": c, "n_queries": c, "rng": r}),
        Call("dk_scaling.dk_scaling_experiment", dks.dk_scaling_experiment, {"d_ks": [1, 4], "n_keys": 3,
             "n_queries": 4, "n_pairs": 5, "rng": 1}, {"d_ks": "counts", "n_keys": c, "n_queries": c, "n_pairs": c,
             "rng": r}),
        Call("gaussian_band.band_weights", band.band_weights, {"positions": P, "temperature": 0.05},
             {"positions": a, "temperature": t}),
        Call("gaussian_band.attention_row", band.attention_row, {"positions": P, "temperature": 0.05, "row": 2},
             {"positions": a, "temperature": t, "row": c}),
        Call("gaussian_band.row_profiles", band.row_profiles, {"positions": P, "temperatures": TAUS, "row": 2},
             {"positions": a, "temperatures": "temperatures", "row": c}),
        Call("leave_one_out.loo_choices", loo.loo_choices, {"ns": [6, 8], "sigmas": [0.1, 0.5], "seeds": [1, 2],
             "candidates": TAUS}, {"ns": "counts", "sigmas": a, "seeds": "counts", "candidates": "temperatures"}),
        *(Call(f"noise_and_samples.{f.__name__}", f, {"n": 6, "sigma": 0.3, "temperature": 0.05, "periods": 1.0,
               "rng": 1}, {"n": c, "sigma": "nonnegative", "temperature": t, "periods": "nonnegative", "rng": r})
          for f in (ns.smoothed_sine, ns.smoothing_errors)),
        *(Call(f"noise_and_samples.{f.__name__}", f, {"n": 6, "sigmas": [0.1, 0.4], "temperature": 0.05,
               "periods": 1.0, "rng": 1}, {"n": c, "sigmas": a, "temperature": t, "periods": "nonnegative", "rng": r})
          for f in (ns.noise_levels, ns.noise_sweep)),
        Call("noise_and_samples.error_vs_samples", ns.error_vs_samples, {"sample_counts": [5, 9], "sigma": 0.3,
             "temperature": 0.05, "n_draws": 2, "periods": 1.0, "rng": 1}, {"sample_counts": "counts",
             "sigma": "nonnegative", "temperature": t, "n_draws": c, "periods": "nonnegative", "rng": r}),
        Call("onedim.onedim_head", od.onedim_head, {"signal": Y, "w_q": 1.5, "w_k": -0.5, "w_v": 2.0,
             "temperature": 0.7}, {"signal": a, "w_q": "real", "w_k": "real", "w_v": "real",
             "temperature": "positive"}),
        Call("onedim.strength_sweep", od.strength_sweep, {"signal": Y, "clean": OUT, "strengths": [0.0, 2.0]},
             {"signal": a, "clean": a, "strengths": a}),
        Call("power_laws.PowerLaw", pl.PowerLaw, {"prefactor": 0.1, "n_exponent": -0.5, "sigma_exponent": 1.0,
             "n_stderr": 0.01, "sigma_stderr": 0.01}, {"prefactor": "positive", "n_exponent": "real",
             "sigma_exponent": "real", "n_stderr": "nonnegative", "sigma_stderr": "nonnegative"}),
        Call("power_laws.PowerLaw.__call__", LAW, {"n": [10, 20], "sigma": 0.3}, {"n": a, "sigma": a}),
        Call("power_laws.best_temperature_grid", pl.best_temperature_grid, {"ns": [8, 12], "sigmas": [0.2, 0.4],
             "temperatures": np.logspace(-4, 0, 9), "draws": 3, "periods": 1.0, "rng": 1},
             {"ns": "counts", "sigmas": a, "temperatures": "temperatures", "draws": c, "periods": "nonnegative",
              "rng": r}),
        Call("power_laws.fit_power_law", pl.fit_power_law, {"ns": [10, 20], "sigmas": [0.1, 0.2],
             "best": [[0.1, 0.2], [0.05, 0.1]]}, {"ns": a, "sigmas": a, "best": a}),
        Call("temperature_limits.head_at_temperatures", tl.head_at_temperatures, {"signal": Y, "positions": P,
             "temperatures": TAUS}, {"signal": a, "positions": a, "temperatures": "temperatures"}),
        Call("temperature_limits.temperature_sweep", tl.temperature_sweep, {"signal": Y, "positions": P,
             "temperatures": TAUS}, {"signal": a, "positions": a, "temperatures": "temperatures"}),
        Call("worked_example.attention_steps", we.attention_steps, dict(zip(("X", "W_Q", "W_K", "W_V"),
             we.example_tokens(), strict=True)), {"X": a, "W_Q": a, "W_K": a, "W_V": a}),
    ]


def _figure_calls(series):
    a, f = "array", False
    return [
        Call("figures.new_figure", _style.new_figure, {"width": 3.0, "height": 2.0},
             {"width": "positive", "height": "positive"}, f),
        Call("figures.new_panels", _style.new_panels, {"count": 3, "height": 2.0, "width": 3.0},
             {"count": "count", "height": "positive", "width": "positive"}, f),
        Call("diagrams.draw_detailed", diagrams.draw_detailed, {"n": 3, "d_model": 2, "d_k": 2, "d_v": 1},
             {"n": "count", "d_model": "count", "d_k": "count", "d_v": "count"}, f),
        Call("panels.draw_signal", panels.draw_signal, {"ax": AX, **series, "output": OUT, "output_label": "out",
             "dot_size": 2.0, "dot_alpha": 0.5, "line_width": 1.0, "ylabel": "y", "legend": {"loc": "best"}},
             {"ax": "axes", "positions": a, "clean": a, "noisy": a, "output": a, "output_label": "string",
              "dot_size": "nonnegative", "dot_alpha": "nonnegative", "line_width": "nonnegative",
              "legend": "options"}, f, optional=("legend",)),
        Call("panels.draw_weights", panels.draw_weights, {"ax": AX, "weights": W, "positions": P, "title": "w"},
             {"ax": "axes", "weights": a, "positions": a, "title": "string"}, f),
        Call("smoothing.plot_noisy_signal", smoothing.plot_noisy_signal, series,
             dict.fromkeys(series, a), f),
        Call("smoothing.plot_smoothing", smoothing.plot_smoothing, {**series, "output": OUT, "weights": W,
             "title": "t"}, {**dict.fromkeys(series, a), "output": a, "weights": a, "title": "string"}, f),
        Call("bias_variance.plot_bias_variance", bias_variance.plot_bias_variance, {"temperatures": TAUS,
             "bias2": [0.1, 0.2, 0.3], "variance": [0.3, 0.2, 0.1], "best_tau": 0.01},
             {"temperatures": "temperatures", "bias2": a, "variance": a, "best_tau": "positive"}, f),
        Call("bias_variance.plot_edge_effect", bias_variance.plot_edge_effect, {"positions": P, "clean": Y,
             "smoothed": OUT, "weights": W, "queries": [0, 3]},
             {"positions": a, "clean": a, "smoothed": a, "weights": a, "queries": "counts"}, f),
        Call("dk_scaling.plot_dk_scaling", dk_scaling.plot_dk_scaling,
             {"result": dks.dk_scaling_experiment([1, 4], n_queries=3, n_pairs=4, rng=1)}, {"result": "mapping"}, f),
        Call("gaussian_band.plot_attention_band", gaussian_band.plot_attention_band, {"positions": P, "weights": W,
             "temperature": 0.05, "bandwidth": 0.16}, {"positions": a, "weights": a, "temperature": "positive",
             "bandwidth": "positive"}, f),
        Call("gaussian_band.plot_row_profiles", gaussian_band.plot_row_profiles, {"positions": P, "temperatures": TAUS,
             "row": 2, **dict(zip(("measured", "predicted", "bandwidths"), band.row_profiles(P, TAUS, 2),
                                   strict=True))},
             {"positions": a, "temperatures": "temperatures", "row": "count", "measured": a, "predicted": a,
              "bandwidths": "temperatures"}, f),
        Call("leave_one_out.plot_leave_one_out", leave_one_out.plot_leave_one_out, {"temperatures": TAUS,
             "loo": [0.2, 0.1, 0.3], "expected": [0.2, 0.1, 0.25], "chosen_tau": 0.01, "best_tau": 0.02,
             "true_best": [0.01, 0.02], "chosen": [0.012, 0.03], "spread": ([0.01, 0.02], [0.02, 0.01])},
             {"temperatures": "temperatures", "loo": a, "expected": a, "chosen_tau": "positive",
              "best_tau": "positive", "true_best": "temperatures", "chosen": "temperatures"}, f),
        Call("noise_and_samples.plot_noise_recovery", noise_and_samples.plot_noise_recovery,
             {"sigmas": [0.1, 0.3], "panels": EXAMPLES}, {"sigmas": a, "panels": "sequence"}, f),
        Call("noise_and_samples.plot_samples", noise_and_samples.plot_samples, {"sample_counts": [6, 12],
             "rmse_input": [0.3, 0.3], "rmse_output": [0.2, 0.1], "examples": EXAMPLES},
             {"sample_counts": "counts", "rmse_input": a, "rmse_output": a, "examples": "sequence"}, f),
        Call("onedim.plot_onedim_head", onedim.plot_onedim_head, {**series, "output": OUT, "weights": W},
             {**dict.fromkeys(series, a), "output": a, "weights": a}, f),
        Call("onedim.plot_strength_sweep", onedim.plot_strength_sweep, {"strengths": [0.0, 1.0], "errors": [0.3, 0.2],
             "noisy_error": 0.3, "band_error": 0.1}, {"strengths": a, "errors": a, "noisy_error": "nonnegative",
             "band_error": "nonnegative"}, f),
        Call("power_laws.plot_power_laws", power_laws.plot_power_laws, {"ns": [10, 20], "sigmas": [0.1, 0.2],
             "best": GRID, "fits": {"whole": LAW, "interior": LAW}},
             {"ns": "counts", "sigmas": a, "best": "mapping", "fits": "mapping"}, f),
        Call("temperature_limits.plot_temperature_extremes", temperature_limits.plot_temperature_extremes,
             {**series, "temperatures": TAUS, **dict(zip(("outputs", "weights"), tl.head_at_temperatures(Y, P, TAUS),
                                                          strict=True))},
             {**dict.fromkeys(series, a), "temperatures": "temperatures", "outputs": a, "weights": a}, f),
        Call("temperature_limits.plot_temperature_sweep", temperature_limits.plot_temperature_sweep,
             {"temperatures": TAUS, "sweep": SWEEP}, {"temperatures": "temperatures", "sweep": "mapping"}, f),
    ]


def _interactive_calls():
    ranges = {"n": "count", "sigma": "nonnegative", "temperature": "positive"}
    return [
        Call("explorer_data.explorer_data", explorer_data.explorer_data, EXPLORER,
             {**ranges, "candidates": "temperatures"}, False),
        Call("explorer_data.explorer_json", explorer_data.explorer_json, EXPLORER,
             {**ranges, "candidates": "temperatures"}, False, optional=tuple(EXPLORER)),
        Call("explorer_data.fallback_series", explorer_data.fallback_series, {"data": explorer_data.explorer_data()},
             {"data": "mapping"}),
        Call("widget.smoothing_figure", widget.smoothing_figure, {"n": 20, "sigma": 0.3, "temperature": 0.01,
             "rng": 1}, {**ranges, "rng": "rng"}, False),
        Call("widget.leave_one_out_temperature", widget.leave_one_out_temperature, {"n": 20, "sigma": 0.3, "rng": 1,
             "candidates": TAUS}, {"n": "count", "sigma": "nonnegative", "rng": "rng", "candidates": "temperatures"}),
        Call("widget.SmoothingWidget", widget.SmoothingWidget, {"n": 20, "sigma": 0.3, "temperature": 0.01,
             "rng": 1}, {**ranges, "rng": "rng"}, False),
        Call("widget.explore", widget.explore, {"n": 20, "sigma": 0.3, "temperature": 0.01, "rng": 1},
             {**ranges, "rng": "rng"}, False),
    ]


HEAD = multihead.offset_head(0.1, 0.05)
TOKENS = multihead.signal_tokens(Y, P)
GRIDS = jk.error_grids(seed=1, ns=[8, 12], sigmas=[0.2, 0.4], temperatures=np.logspace(-3, 0, 9), draws=3)


def _many_head_calls(series):
    a, t, f = "array", "temperature", False
    pair, W_O = multihead.derivative_layer(0.1, 0.05)
    rows = {"-": W[2], "+": W[3]}
    return [
        Call("multihead.Head", multihead.Head, {"W_Q": HEAD.W_Q, "W_K": HEAD.W_K, "W_V": HEAD.W_V, "temperature": 0.05},
             {"W_Q": a, "W_K": a, "W_V": a, "temperature": "positive"}),
        Call("multihead.Head.__call__", HEAD, {"X": TOKENS}, {"X": a}),
        Call("multihead.offset_head", multihead.offset_head, {"offset": -0.1, "temperature": 0.05},
             {"offset": "real", "temperature": "positive"}, f),
        Call("multihead.signal_tokens", multihead.signal_tokens, {"signal": Y, "positions": P},
             {"signal": a, "positions": a}),
        Call("multihead.multi_head", multihead.multi_head, {"X": TOKENS, "heads": pair, "W_O": W_O},
             {"X": a, "heads": "sequence", "W_O": a}),
        Call("multihead.head_outputs", multihead.head_outputs, {"X": TOKENS, "heads": pair},
             {"X": a, "heads": "sequence"}),
        Call("multihead.layer_weights", multihead.layer_weights, {"X": TOKENS, "heads": pair, "W_O": W_O},
             {"X": a, "heads": "sequence", "W_O": a}),
        Call("multihead.derivative_layer", multihead.derivative_layer, {"offset": 0.1, "temperature": 0.05},
             {"offset": "positive", "temperature": "positive"}, f),
        Call("multihead.curvature_layer", multihead.curvature_layer, {"offset": 0.1, "temperature": 0.05},
             {"offset": "positive", "temperature": "positive"}, f),
        Call("multihead.jackknife_layer", multihead.jackknife_layer, {"temperature": 0.05, "ratio": 1.5},
             {"temperature": "positive", "ratio": "positive"}, f),
        Call("defaults.check_layer_ranges", defaults.check_layer_ranges, {"n": 10, "sigma": 0.3,
             "temperature": 0.01, "offset": 0.1}, {"n": "count", "sigma": "nonnegative", "temperature": "positive",
             "offset": "positive"}),
        Call("derivative.derivative_weights", dv.derivative_weights, {"positions": P, "offset": 0.1,
             "temperature": 0.05}, {"positions": a, "offset": "positive", "temperature": t}),
        Call("derivative.true_derivative", dv.true_derivative, {"positions": P, "periods": 2.0},
             {"positions": a, "periods": "nonnegative"}),
        Call("derivative.derivative_risk", dv.derivative_risk, {"n": 8, "sigma": 0.3, "offsets": [0.1, 0.2],
             "temperatures": [0.01, 0.05], "region": "interior"}, {"n": "count", "sigma": "nonnegative",
             "offsets": "temperatures", "temperatures": "temperatures", "region": "region"}),
        Call("derivative.noise_std", dv.noise_std, {"positions": P, "offsets": [0.1, 0.2], "temperature": 0.05,
             "sigma": 0.3}, {"positions": a, "offsets": "temperatures", "temperature": t, "sigma": "nonnegative"}),
        Call("derivative.leading_order_noise", dv.leading_order_noise, {"n": 8, "offsets": [0.1, 0.2],
             "temperature": 0.05, "sigma": 0.3}, {"n": "count", "offsets": "temperatures", "temperature": t,
             "sigma": "nonnegative"}),
        Call("differences.difference_layer", df.difference_layer, {"order": 3, "spacing": 0.1, "temperature": 0.05},
             {"order": "count", "spacing": "positive", "temperature": "positive"}, f),
        Call("differences.difference_noise", df.difference_noise, {"positions": P, "order": 2, "spacings": [0.1, 0.2],
             "temperature": 0.05, "sigma": 0.3}, {"positions": a, "order": "count", "spacings": "temperatures",
             "temperature": t, "sigma": "nonnegative"}),
        Call("differences.small_spacing_noise", df.small_spacing_noise, {"n": 8, "order": 2, "temperature": 0.05,
             "sigma": 0.3}, {"n": "count", "order": "count", "temperature": t, "sigma": "nonnegative"}),
        Call("jackknife.jackknife_weights", jk.jackknife_weights, {"positions": P, "temperature": 0.05, "ratio": 1.5},
             {"positions": a, "temperature": t, "ratio": "positive"}),
        Call("jackknife.jackknife_smoother", jk.jackknife_smoother, {"ratio": 1.5}, {"ratio": "positive"}, f),
        Call("jackknife.ratio_cost", jk.ratio_cost, {"ratios": [1.2, 2.0]}, {"ratios": a}),
        Call("jackknife.leading_order_variance", jk.leading_order_variance, {"n": 8, "temperature": 0.05, "sigma": 0.3,
             "ratio": 1.5}, {"n": "count", "temperature": t, "sigma": "nonnegative", "ratio": "positive"}),
        Call("jackknife.error_grids", jk.error_grids, {"seed": 1, "ratio": 1.5, "ns": [8, 12], "sigmas": [0.2, 0.4],
             "temperatures": np.logspace(-3, 0, 9), "draws": 3}, {"seed": "rng", "ratio": "positive",
             "ns": "counts", "sigmas": a, "temperatures": "temperatures", "draws": "count"}),
        Call("jackknife.error_fits", jk.error_fits, {"grids": GRIDS, "ns": [8, 12], "sigmas": [0.2, 0.4]},
             {"grids": "mapping", "ns": a, "sigmas": a}),
        Call("jackknife.end_bias", jk.end_bias, {"temperature": 0.01, "n": 20, "ratio": 1.5},
             {"temperature": t, "n": "count", "ratio": "positive"}),
        Call("power_laws.best_error_grid", pl.best_error_grid, {"ns": [8, 12], "sigmas": [0.2, 0.4],
             "temperatures": np.logspace(-4, 0, 9), "draws": 3, "periods": 1.0, "rng": 1},
             {"ns": "counts", "sigmas": a, "temperatures": "temperatures", "draws": "count", "periods": "nonnegative",
              "rng": "rng"}),
        Call("bias_variance.refined_minimum", bv.refined_minimum, {"temperatures": TAUS, "mse": [0.3, 0.1, 0.2]},
             {"temperatures": "temperatures", "mse": a}),
        Call("explorer_data.layer_data", explorer_data.layer_data, {"layer": "derivative", "n": 20, "sigma": 0.3,
             "temperature": 0.01, "offset": 0.1}, {"layer": "string", "n": "count", "sigma": "nonnegative",
             "temperature": "positive", "offset": "positive"}, f),
        Call("explorer_data.layer_series", explorer_data.layer_series,
             {"data": explorer_data.layer_data("derivative", n=20)}, {"data": "mapping"}),
        Call("figures.multihead.plot_offset_heads", mh_figures.plot_offset_heads, {**series, "rows": rows,
             "outputs": {"-": OUT, "+": Y}, "query": 2}, {**dict.fromkeys(series, a), "rows": "mapping",
             "outputs": "mapping", "query": "count"}, f),
        Call("figures.multihead.plot_derivative", mh_figures.plot_derivative, {"positions": P, "truth": Y,
             "estimate": OUT, "inside": P > 0.3, "offsets": [0.1, 0.2], "noise": [0.5, 0.3], "leading": [0.5, 0.3],
             "bandwidth": 0.05}, {"positions": a, "truth": a, "estimate": a, "offsets": a, "noise": a,
             "leading": a, "bandwidth": "positive"}, f),
        Call("figures.multihead.plot_jackknife_weights", mh_figures.plot_jackknife_weights, {"positions": P,
             "rows": {"a": W[:2], "b": W[2:4], "c": W[4:]}, "query_labels": ["one", "two"]},
             {"positions": a, "rows": "mapping"}, f),
        Call("figures.multihead.plot_error_laws", mh_figures.plot_error_laws, {"ns": [10, 20], "sigmas": [0.1, 0.2],
             "least": {"one head": GRID, "two heads": GRID}, "fits": {"one head": {"whole": LAW, "interior": LAW},
             "two heads": {"whole": LAW, "interior": LAW}}}, {"ns": "counts", "sigmas": a, "least": "mapping",
             "fits": "mapping"}, f),
        Call("figures.multihead.plot_derivative_layer", mh_figures.plot_derivative_layer,
             dict(zip(("positions", "clean", "noisy", "outputs", "weights", "estimate", "slope"),
                      explorer_data.layer_series(explorer_data.layer_data("derivative", n=20)), strict=True)),
             {"positions": a, "clean": a, "noisy": a, "outputs": a, "weights": a, "estimate": a, "slope": a}, f),
    ]


@cache
def calls() -> tuple[Call, ...]:
    """Every entry, built once (it computes the figures' data).

    The learned heads' are in ``public_api_learning``, the positional encodings' and masks' in
    ``public_api_positions``, the cost of attention and its cheaper heads' in ``public_api_cost``.
    """
    from public_api_circuits import circuit_calls
    from public_api_cost import cost_calls
    from public_api_in_context import in_context_calls
    from public_api_in_context_explorer import in_context_explorer_calls
    from public_api_learning import learning_calls
    from public_api_positions import positions_calls

    return (*_calls(), *learning_calls(), *positions_calls(), *cost_calls(), *circuit_calls(), *in_context_calls(),
            *in_context_explorer_calls())


def public_callables() -> set[str]:
    """``module.qualname`` of every public function and class of the package's public modules.

    Private modules (``_validation``, ``figures._style``) count through what
    a public module imports from them (``figures.new_figure``).
    """
    found = set()
    names = [info.name for info in pkgutil.walk_packages(selfattention.__path__, "selfattention.")]
    for name in ("selfattention", *names):
        if any(part.startswith("_") for part in name.split(".")):
            continue
        for attr, obj in vars(importlib.import_module(name)).items():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not attr.startswith("_") \
                    and obj.__module__.startswith("selfattention") and (obj.__module__ == name or name in _REEXPORTS):
                found.add(f"{obj.__module__}.{obj.__qualname__}")
    return found


#: Packages whose ``__init__`` re-exports names of a private module.
_REEXPORTS = ("selfattention.figures",)


def covered() -> set[str]:
    """``module.name`` of every callable in :func:`calls`."""
    out = set()
    for call in calls():
        func = call.func
        if inspect.isfunction(func) or inspect.isclass(func):
            out.add(f"{func.__module__}.{func.__qualname__}")
    return out
