"""The audit's entries (:class:`public_api.Call`) for the learned and content-aware heads.

Learning, training, the bilateral head, their studies and figures: each
valid call is small (a few tokens, one to three training steps), so that
the audit's hundreds of calls stay fast. Kinds as in :mod:`public_api`.
"""

from __future__ import annotations

import numpy as np
from public_api import AX, OUT, TAUS, Call, P, W, Y

from selfattention import bilateral, learning, metrics, signals, symbolic, training
from selfattention.figures import content_attention as content_figures
from selfattention.figures import learned_head as learned_figures
from selfattention.figures import panels
from selfattention.head import fixed_divisor_weights, gaussian_head_weights
from selfattention.studies import content_attention as ca
from selfattention.studies import learned_head as lh
from selfattention.studies import noise2noise as n2n
from selfattention.studies import noise_and_samples as ns
from selfattention.studies import onedim as od

#: Tokens ``[pt, pt^2, 1]`` of the positions ``P`` and small projections on them, (3, 2) each.
XT = learning.token_features(P)
WQ, WK = np.array([[1.0, 0.5], [-0.5, 0.2], [0.1, 0.3]]), np.array([[0.8, -0.2], [0.3, 0.1], [-0.4, 0.6]])
#: Two step sines of eight samples, and heads trained on them for two steps.
STEPS = ca.step_signals(2, 8, 0.2, rng=1)
FIT = training.fit_head(XT, Y, d_k=2, steps=2, rng=1, checkpoints=(0, 2))
POSITION_FIT = n2n.train_position_head(STEPS, steps=2, rng=1)
CONTENT_FIT = n2n.train_content_head(STEPS, steps=1, rng=1)
LABELS = ["pt", "pt^2", "1"]


def learning_calls() -> list[Call]:
    """Entries of :mod:`~selfattention.learning`, :mod:`~selfattention.training` and the bilateral head."""
    a, t, qk = "array", "temperature", {"W_Q": "array", "W_K": "array"}
    heads = {"W_Q": WQ, "W_K": WK, "X": XT, "y": Y}
    return [
        Call("learning.token_features", learning.token_features, {"positions": P, "signal": Y,
             "signal_square": True}, {"positions": a, "signal": a, "signal_square": "flag"}),
        Call("learning.attention_loss_and_grad", learning.attention_loss_and_grad, {**heads, "targets": OUT},
             {**qk, "X": a, "y": a, "targets": a}),
        Call("learning.backprop", learning.backprop, {"W_Q": WQ, "W_K": WK, "X": XT[None], "v": Y[None],
             "targets": OUT[None], "masked": False}, {**qk, "X": a, "v": a, "targets": a, "masked": "flag"}),
        Call("learning.loo_loss_and_grad", learning.loo_loss_and_grad, heads, {**qk, "X": a, "y": a}),
        Call("learning.numerical_gradient", learning.numerical_gradient, {**heads, "targets": OUT, "step": 1e-6},
             {**qk, "X": a, "y": a, "targets": a, "step": "positive"}),
        Call("learning.learned_head", learning.learned_head, {**heads, "leave_one_out": True},
             {**qk, "X": a, "y": a, "leave_one_out": "flag"}),
        Call("training.FitResult", training.FitResult, {"W_Q": WQ, "W_K": WK, "losses": [0.3, 0.2], "loss": 0.1,
             "checkpoints": {0: (WK, WQ)}}, {"W_Q": a, "W_K": a, "losses": a, "loss": "nonnegative"}),
        Call("training.fit_head", training.fit_head, {"X": XT, "y": Y, "targets": OUT, "d_k": 2, "steps": 2,
             "learning_rate": 0.1, "init_scale": 0.1, "init": (WQ, WK), "optimizer": "gd", "checkpoints": [0, 1],
             "rng": 1}, {"X": a, "y": a, "targets": a, "d_k": "count", "steps": "count", "learning_rate": "positive",
                         "init_scale": "positive", "init": "sequence", "optimizer": "string", "checkpoints": "steps",
                         "rng": "rng"}),
        Call("bilateral.content_features", bilateral.content_features, {"signal": Y, "positions": P},
             {"signal": a, "positions": a}),
        Call("bilateral.bilateral_head_weights", bilateral.bilateral_head_weights, {"temperature": 0.05,
             "signal_temperature": 1.0}, {"temperature": t, "signal_temperature": t}),
        Call("bilateral.bilateral_head", bilateral.bilateral_head, {"signal": Y, "positions": P, "temperature": 0.05,
             "signal_temperature": 1.0}, {"signal": a, "positions": a, "temperature": t, "signal_temperature": t}),
        Call("head.fixed_divisor_weights", fixed_divisor_weights, {"temperature": 0.05}, {"temperature": t}),
        Call("signals.step_sine", signals.step_sine, {"n": 6, "sigma": 0.2, "jump": 1.5, "at": 0.5, "rng": 1},
             {"n": "count", "sigma": "nonnegative", "jump": "real", "at": "real", "rng": "rng"}),
        Call("metrics.jacobian_norm", metrics.jacobian_norm, {"weights": W}, {"weights": a}),
        Call("metrics.mean_attended_distance", metrics.mean_attended_distance, {"weights": W, "positions": P},
             {"weights": a, "positions": a}),
        Call("metrics.shrunk_share", metrics.shrunk_share, {"output": OUT, "signal": Y},
             {"output": a, "signal": a}),
        Call("noise_and_samples.neighbours_vs_samples", ns.neighbours_vs_samples, {"sample_counts": [4, 7],
             "temperature": 0.05}, {"sample_counts": "counts", "temperature": t}),
        Call("onedim.onedim_curve", od.onedim_curve, {"signal": Y, "values": [-1.0, 0.5], "strength": 2.0,
             "w_v": 1.5}, {"signal": a, "values": a, "strength": "real", "w_v": "real"}),
        Call("symbolic.content_row", symbolic.content_row, {"signal": symbolic.s_i, "position": 0.5},
             {"signal": "symbol", "position": "symbol"}, numeric=False),
        Call("symbolic.score_offset", symbolic.score_offset, dict(zip(("W_Q", "W_K"),
             gaussian_head_weights(2)[:2], strict=True)), qk, numeric=False),
        *_learned_head_calls(),
        *_content_calls(),
        *_figure_calls(),
    ]


def _learned_head_calls() -> list[Call]:
    a, series = "array", {"positions": "array", "noisy": "array"}
    return [
        Call("learned_head.Engineered", lh.Engineered, {"loo_temperature": 0.01, "loo_loss": 0.1,
             "best_temperature": 0.02}, {"loo_temperature": "positive", "loo_loss": "nonnegative",
                                         "best_temperature": "positive"}),
        Call("learned_head.engineered", lh.engineered, {"positions": P, "noisy": Y, "sigma": 0.3,
             "candidates": TAUS}, {**series, "sigma": "nonnegative", "candidates": "temperatures"},
             optional=("candidates",)),
        Call("learned_head.learn", lh.learn, {"positions": P, "noisy": Y, "sees_value": True, "centred": True,
             "steps": 2, "rng": 1}, {**series, "sees_value": "flag", "centred": "flag", "steps": "count",
                                     "rng": "rng"}),
        Call("learned_head.features_of", lh.features_of, {"fit": FIT, "positions": P, "noisy": Y},
             {"fit": "instance", **series}),
        Call("learned_head.checkpoint_weights", lh.checkpoint_weights, {"fit": FIT, "positions": P, "noisy": Y},
             {"fit": "instance", **series}),
        Call("learned_head.row_gaussians", lh.row_gaussians, {"W_Q": WQ, "W_K": WK, "positions": P},
             {"W_Q": a, "W_K": a, "positions": a}),
        Call("learned_head.centred_scores", lh.centred_scores, {"W_Q": WQ, "W_K": WK, "X": XT},
             {"W_Q": a, "W_K": a, "X": a}),
        Call("learned_head.reparametrise", lh.reparametrise, {"W_Q": WQ, "W_K": WK, "G": [[2.0, 1.0], [0.0, 1.0]]},
             {"W_Q": a, "W_K": a, "G": a}),
        Call("learned_head.relative_gap", lh.relative_gap, {"a": WQ, "b": WK}, {"a": a, "b": a}),
        Call("learned_head.gradient_descent_runs", lh.gradient_descent_runs, {"positions": P, "noisy": Y,
             "learning_rates": [0.1, 0.5], "steps": 2, "rng": 1}, {**series, "learning_rates": a,
                                                                 "steps": "count", "rng": "rng"}),
    ]


def _content_calls() -> list[Call]:
    a, t, i = "array", "temperature", "instance"
    return [
        Call("content_attention.StepSignals", ca.StepSignals, {field: getattr(STEPS, field) for field in
             ("positions", "jumps", "clean", "noisy", "second")}, dict.fromkeys(("positions", "jumps", "clean",
                                                                                  "noisy", "second"), a)),
        Call("content_attention.step_signals", ca.step_signals, {"count": 2, "n": 6, "sigma": 0.2, "jump": 1.5,
             "low": 0.2, "high": 0.8, "rng": 1}, {"count": "count", "n": "count", "sigma": "nonnegative",
                                                   "jump": "real", "low": "nonnegative", "high": "positive",
                                                   "rng": "rng"}),
        Call("content_attention.step_signal", ca.step_signal, {"n": 6, "sigma": 0.2, "jump": 1.5, "at": 0.5,
             "rng": 1}, {"n": "count", "sigma": "nonnegative", "jump": "real", "at": "real", "rng": "rng"}),
        Call("content_attention.without_steps", ca.without_steps, {"signals": STEPS}, {"signals": i}),
        Call("content_attention.near_jump", ca.near_jump, {"positions": P, "jumps": [0.3, 0.5], "width": 0.1},
             {"positions": a, "jumps": a, "width": "positive"}),
        Call("content_attention.region_errors", ca.region_errors, {"estimates": STEPS.noisy, "signals": STEPS,
             "width": 0.2}, {"estimates": a, "signals": i, "width": "positive"}),
        Call("content_attention.gaussian_outputs", ca.gaussian_outputs, {"signals": STEPS, "temperature": 0.05},
             {"signals": i, "temperature": t}),
        Call("content_attention.bilateral_outputs", ca.bilateral_outputs, {"signals": STEPS, "temperature": 0.05,
             "signal_temperature": 1.0}, {"signals": i, "temperature": t, "signal_temperature": t}),
        Call("content_attention.weight_across", ca.weight_across, {"weights": W, "positions": P, "jump": 0.5,
             "width": 0.2}, {"weights": a, "positions": a, "jump": "real", "width": "positive"}),
        Call("noise2noise.best_temperatures", n2n.best_temperatures, {"signals": STEPS, "temperatures": [0.01, 0.1],
             "signal_temperatures": [0.5, 5.0]}, {"signals": i, "temperatures": "temperatures",
                                                   "signal_temperatures": "temperatures"}),
        Call("noise2noise.head_features", n2n.head_features, {"signals": STEPS, "content": True},
             {"signals": i, "content": "flag"}),
        Call("noise2noise.learned_outputs", n2n.learned_outputs, {"fit": POSITION_FIT, "signals": STEPS,
             "content": False}, {"fit": i, "signals": i, "content": "flag"}),
        Call("noise2noise.train_position_head", n2n.train_position_head, {"signals": STEPS, "steps": 2,
             "learning_rate": 0.1, "rng": 1}, {"signals": i, "steps": "count", "learning_rate": "positive",
                                               "rng": "rng"}),
        Call("noise2noise.train_content_head", n2n.train_content_head, {"signals": STEPS, "start": POSITION_FIT,
             "steps": 1, "learning_rate": 0.1, "rng": 1}, {"signals": i, "start": i, "steps": "count",
                                                            "learning_rate": "positive", "rng": "rng"}),
        Call("noise2noise.read_temperatures", n2n.read_temperatures, {"fit": CONTENT_FIT}, {"fit": i}),
    ]


def _figure_calls() -> list[Call]:
    a, f = "array", False
    series = {"positions": P, "clean": Y, "noisy": Y}
    arrays = dict.fromkeys(series, a)
    return [
        Call("panels.draw_matrix", panels.draw_matrix, {"ax": AX, "matrix": WQ, "limit": 2.0, "fmt": "{:.1f}",
             "sqrt_scale": True}, {"ax": "axes", "matrix": a, "limit": "positive", "fmt": "string",
                                   "sqrt_scale": "flag"}, f),
        Call("learned_head.plot_training", learned_figures.plot_training, {"losses": [0.3, 0.2],
             "engineered_loss": 0.1, "noise_variance": 0.09, "leak_losses": [0.3, 0.1]},
             {"losses": a, "engineered_loss": "positive", "noise_variance": "positive", "leak_losses": a}, f),
        Call("learned_head.plot_checkpoints", learned_figures.plot_checkpoints, {"positions": P,
             "weights_by_step": {0: W, 5: W}}, {"positions": a, "weights_by_step": "mapping"}, f),
        Call("learned_head.plot_learned_scores", learned_figures.plot_learned_scores, {"positions": P,
             "scores": -W, "centred": -W, "engineered": -W, "queries": [1, 4], "temperatures": np.full(6, 0.01),
             "loo_temperature": 0.01, "best_temperature": 0.02, "other_temperatures": np.full((1, 6), 0.02)},
             {"positions": a, "scores": a, "centred": a, "engineered": a, "queries": "counts", "temperatures": a,
              "loo_temperature": "positive", "best_temperature": "positive", "other_temperatures": a}, f),
        Call("learned_head.plot_leak", learned_figures.plot_leak, {**series, "prediction": OUT, "weights": W},
             {**arrays, "prediction": a, "weights": a}, f),
        Call("learned_head.plot_products", learned_figures.plot_products, {"query_projections": (WQ, WK),
             "products": (WQ @ WQ.T, WK @ WK.T), "labels": LABELS},
             {"query_projections": "sequence", "products": "sequence", "labels": "sequence"}, f),
        Call("content_attention.plot_blur", content_figures.plot_blur, {**series, "output": OUT, "jump": 0.5,
             "width": 0.1}, {**arrays, "output": a, "jump": "real", "width": "positive"}, f),
        Call("content_attention.plot_two_heads", content_figures.plot_two_heads, {**series,
             "outputs": {"a": OUT, "b": Y}, "weights": {"a": W, "b": W}, "jump": 0.5, "width": 0.1,
             "window": (0.2, 0.8)}, {**arrays, "outputs": "mapping", "weights": "mapping", "jump": "real",
                                     "width": "positive", "window": a}, f),
        Call("content_attention.plot_errors", content_figures.plot_errors, {"errors": {"a": {"near": 0.2,
             "away": 0.1}}, "W_QK": WQ @ WK.T, "labels": LABELS}, {"errors": "mapping", "W_QK": a,
                                                                    "labels": "sequence"}, f),
    ]
