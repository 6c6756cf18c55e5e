"""The audit's entries (:class:`public_api.Call`) for the heads that learn from a prompt.

:mod:`selfattention.in_context`, :mod:`selfattention.in_context_training`,
:mod:`selfattention.in_context_symbolic`, the study, its risks and the figures of the
chapter "Heads that learn while they read". Kinds as in :mod:`public_api`;
each valid call is small (prompts of four examples in two dimensions).
"""

from __future__ import annotations

import numpy as np
from public_api import Call

from selfattention import in_context, in_context_symbolic, in_context_training
from selfattention.figures import in_context as figures
from selfattention.studies import in_context as study
from selfattention.studies import in_context_risks as risks

#: One prompt of four examples in two dimensions, and its query.
INPUTS = np.array([[0.5, -1.0], [1.2, 0.3], [-0.7, 0.8], [0.1, 0.4]])
LABELS, QUERY = np.array([0.4, 1.1, -0.3, 0.2]), np.array([0.6, -0.2])
#: Three such prompts, their queries' labels, and a layer of the right size.
BATCH = study.linear_tasks(3, 4, 2, noise=0.1, rng=1)
W_QK, W_V_COLUMN = np.eye(3) * [1.0, 1.0, 0.0], np.array([0.0, 0.0, -0.5])
FIT = in_context_training.fit_layer(*BATCH, steps=2, rng=1)


def in_context_calls() -> list[Call]:
    """Entries of the in-context heads, their training, study and figures."""
    a, f = "array", False
    prompt = {"inputs": INPUTS, "labels": LABELS, "query": QUERY}
    prompt_kinds = {"inputs": a, "labels": a, "query": a}
    batch = {"inputs": BATCH.inputs, "labels": BATCH.labels, "query": BATCH.query}
    layer = {"W_QK": W_QK, "w_V": W_V_COLUMN}
    W_Q, W_K, W_V = in_context.gd_layer_weights(2, 0.5)
    curves = {"least squares": [1.0, 0.5], "one step": [1.2, 0.8]}
    panel = {"inputs": INPUTS[:, 0], "labels": LABELS, "grid": [0.0, 0.5, 1.0], "title": "a line",
             "one step": [0.1, 0.2, 0.3]}
    return [
        Call("in_context.prompt_tokens", in_context.prompt_tokens, prompt, prompt_kinds),
        Call("in_context.kernel_tokens", in_context.kernel_tokens, prompt, prompt_kinds),
        Call("in_context.kernel_head_weights", in_context.kernel_head_weights, {"dimension": 2},
             {"dimension": "count"}),
        Call("in_context.softmax_head", in_context.softmax_head, {**prompt, "temperature": 0.5},
             {**prompt_kinds, "temperature": "temperature"}),
        Call("in_context.gd_layer_weights", in_context.gd_layer_weights, {"dimension": 2, "eta": 0.5},
             {"dimension": "count", "eta": "positive"}),
        Call("in_context.linear_attention_layer", in_context.linear_attention_layer,
             {"tokens": in_context.prompt_tokens(INPUTS, LABELS, QUERY), "W_Q": W_Q, "W_K": W_K, "W_V": W_V},
             {"tokens": a, "W_Q": a, "W_K": a, "W_V": a}),
        Call("in_context.linear_stack_prediction", in_context.linear_stack_prediction,
             {**prompt, "eta": 0.5, "layers": 2}, {**prompt_kinds, "eta": "positive", "layers": "count"}),
        Call("in_context.one_step_prediction", in_context.one_step_prediction, {**prompt, "eta": 0.5},
             {**prompt_kinds, "eta": "positive"}),
        Call("in_context.gradient_descent", in_context.gradient_descent,
             {"inputs": INPUTS, "labels": LABELS, "eta": 0.5, "steps": 3},
             {"inputs": a, "labels": a, "eta": "positive", "steps": "count"}),
        Call("in_context.least_squares_prediction", in_context.least_squares_prediction, prompt, prompt_kinds),
        Call("in_context.step_factors", in_context.step_factors, {"inputs": INPUTS, "eta": 0.5},
             {"inputs": a, "eta": "positive"}),
        Call("in_context_symbolic.one_step_derivation", in_context_symbolic.one_step_derivation,
             {"examples": 2, "dimension": 1}, {"examples": "count", "dimension": "count"}, f),
        Call("in_context_training.layer_predictions", in_context_training.layer_predictions, {**layer, **batch},
             {"W_QK": a, "w_V": a, **dict.fromkeys(batch, a)}),
        Call("in_context_training.layer_loss_and_grad", in_context_training.layer_loss_and_grad,
             {**layer, **batch, "target": BATCH.target}, {"W_QK": a, "w_V": a, **dict.fromkeys(batch, a),
                                                           "target": a}),
        Call("in_context_training.fit_layer", in_context_training.fit_layer,
             {**batch, "target": BATCH.target, "steps": 2, "learning_rate": 0.01, "init_scale": 0.1, "rng": 1},
             {**dict.fromkeys(batch, a), "target": a, "steps": "count", "learning_rate": "positive",
              "init_scale": "positive", "rng": "rng"}),
        Call("studies.in_context.linear_tasks", study.linear_tasks,
             {"tasks": 2, "examples": 3, "dimension": 2, "noise": 0.1, "rng": 1},
             {"tasks": "count", "examples": "count", "dimension": "count", "noise": "nonnegative", "rng": "rng"}),
        Call("studies.in_context.sine_tasks", study.sine_tasks, {"tasks": 2, "examples": 3, "noise": 0.1, "rng": 1},
             {"tasks": "count", "examples": "count", "noise": "nonnegative", "rng": "rng"}),
        Call("studies.in_context.one_step_batch", study.one_step_batch, {"prompts": BATCH, "etas": [0.5, 1.0]},
             {"prompts": "instance", "etas": "temperatures"}),
        Call("studies.in_context.least_squares_batch", study.least_squares_batch, {"prompts": BATCH},
             {"prompts": "instance"}),
        Call("studies.in_context.kernel_batch", study.kernel_batch, {"prompts": BATCH, "temperatures": [0.5, 1.0]},
             {"prompts": "instance", "temperatures": "temperatures"}),
        Call("studies.in_context.squared_errors", study.squared_errors,
             {"predictions": [[0.1, 0.2, 0.3]], "prompts": BATCH}, {"predictions": a, "prompts": "instance"}),
        Call("studies.in_context.compare_errors", study.compare_errors,
             {"first": [0.5, 2.0, 0.1], "second": [1.0, 1.0, 1.0], "top": 2},
             {"first": a, "second": a, "top": "count"}),
        Call("studies.in_context.wins_from", study.wins_from,
             {"counts": [2, 3, 4], "first": [2.0, 0.5, 0.2], "second": [1.0, 1.0, 1.0]},
             {"counts": "counts", "first": a, "second": a}),
        Call("studies.in_context.errors", study.errors, {"predictions": [[0.1, 0.2, 0.3]], "prompts": BATCH},
             {"predictions": a, "prompts": "instance"}),
        Call("studies.in_context.error_curves", study.error_curves, {"validation": BATCH, "test": BATCH,
             "etas": [0.5, 1.0], "temperatures": [0.5, 1.0], "fit": FIT},
             {"validation": "instance", "test": "instance", "etas": "temperatures", "temperatures": "temperatures",
              "fit": "instance"}),
        Call("studies.in_context_risks.one_step_risk", risks.one_step_risk, {"eta": 0.5, "examples": 4, "dimension": 2,
             "noise": 0.1}, {"eta": "nonnegative", "examples": "count", "dimension": "count", "noise": "nonnegative"}),
        Call("studies.in_context_risks.best_one_step", risks.best_one_step,
             {"examples": 4, "dimension": 2, "noise": 0.1},
             {"examples": "count", "dimension": "count", "noise": "nonnegative"}),
        Call("studies.in_context_risks.least_squares_risk", risks.least_squares_risk,
             {"examples": 6, "dimension": 2, "noise": 0.1},
             {"examples": "count", "dimension": "count", "noise": "nonnegative"}),
        Call("figures.in_context.plot_prompts", figures.plot_prompts, {"panels": [panel]}, {"panels": "sequence"},
             f),
        Call("figures.in_context.plot_learner_errors", figures.plot_learner_errors,
             {"counts": [2, 4], "curves": {"linear": curves, "sine": curves}, "dimension": 2},
             {"counts": "counts", "curves": "mapping", "dimension": "real"}, f),
        Call("figures.in_context.plot_layer_errors", figures.plot_layer_errors,
             {"layers": [1, 2], "stack_errors": [1.0, 0.5], "step_errors": [1.0, 0.5], "least_squares": 0.1},
             {"layers": "counts", "stack_errors": a, "step_errors": a, "least_squares": "real"}, f),
    ]
