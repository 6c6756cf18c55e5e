"""The page "Heads that learn while they read": prompts as tokens, the two heads, the trained layer, who wins.

The tests read what the chapter computed (its variables and glued values)
and check each sentence that describes it; the few that need more call the
package with the chapter's settings.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from tolerances import rounding

from selfattention import in_context as ic
from selfattention import in_context_symbolic as ics
from selfattention.studies import in_context as study
from selfattention.studies import in_context_risks as risks

STEM = "in-context"


# --- a prompt of examples ------------------------------------------------------------------------


def test_the_prompt_is_the_examples_as_tokens_then_the_query(chapter):
    """"Four examples in two dimensions make 5 tokens of 3 numbers"; rows [p_j, y_j], the query [p_{N+1}, 0]."""
    ns, glued = chapter.namespace, chapter.glued
    prompts, tokens = ns["prompts"], ns["tokens"]
    assert prompts.inputs.shape == (1, 4, 2)
    assert (glued["ic-tokens-rows"], glued["ic-tokens-columns"]) == (5, 3)
    np.testing.assert_array_equal(tokens[:4, :2], prompts.inputs[0])
    np.testing.assert_array_equal(tokens[:4, 2], prompts.labels[0])
    np.testing.assert_array_equal(tokens[4], [*prompts.query[0], 0.0])
    assert (glued["ic-d"], glued["ic-sigma"]) == (study.DIMENSION, study.NOISE)


# --- softmax attention is kernel regression --------------------------------------------------------


def test_the_softmax_head_is_nadaraya_watson_over_the_prompt(chapter):
    """"differ by at most ... rounding": the head against the package's nadaraya_watson at every query.

    Both weight N = 30 labels of size at most 1.5 (amplitude) plus noise; the head's scores expand the
    square, -(2 p p_j - p_j^2 - p^2) / tau, whose rounding is about 8 EPS (p in [0, 1], the constant
    coordinate adds 1 + 1 - 2) over tau = 0.01, so each weight is off by about that relative amount: a
    bound of a thousand roundings of the labels' scale is far above that and far below anything visible.
    """
    ns, glued = chapter.namespace, chapter.glued
    assert glued["ic-kernel-n"] == 30 and glued["ic-kernel-queries"] == 41 and glued["ic-kernel-tau"] == 0.01
    assert glued["ic-kernel-gap"] < rounding(1000 / 0.01, np.abs(ns["labels"]).max())
    assert glued["ic-kernel-gap"] < 1e-12


def test_the_constant_coordinate_cancels_in_the_distance(chapter):
    ns = chapter.namespace
    inputs, labels = ns["inputs"], ns["labels"]
    with_one, _ = ic.kernel_head(inputs, labels, [0.3, 1.0], 0.01)
    without, _ = ic.kernel_head(inputs[:, :1], labels, [0.3], 0.01)
    assert abs(with_one - without) < 1e-13


# --- linear attention is a step of gradient descent -------------------------------------------------


def test_sympy_finds_the_step_and_the_head_equal(chapter):
    """"sympy finds the difference ... to be 0", and the gradient at 0 is -(1/N) sum_j y_j p_j."""
    derived = chapter.namespace["derived"]
    assert chapter.glued["ic-sympy-difference"] == "0"
    P, y = ics._prompt(2, 2)
    expected = -(y[0] * P[0, :] + y[1] * P[1, :]).T / 2
    assert sp.simplify(derived["gradient"] - expected) == sp.zeros(2, 1)
    eta = ics.eta
    formula = eta / 2 * sum(y[j] * (P[j, :] * P[2, :].T)[0] for j in range(2))
    assert sp.expand(derived["prediction"] - formula) == 0


def test_one_layer_predicts_what_one_step_predicts(chapter):
    """"On 200 linear prompts of 20 examples ... agree to" rounding: the step's sum of 20 terms of size |y p p|."""
    ns, glued = chapter.namespace, chapter.glued
    assert (glued["ic-step-prompts"], glued["ic-step-n"], glued["ic-step-eta"]) == (200, 20, 0.5)
    linear = ns["linear"]
    scale = np.max(np.abs(linear.labels)) * np.max(np.sum(linear.inputs**2, axis=2)) * 5  # |y| |p_j| |p|, d = 5
    assert glued["ic-step-gap"] < rounding(4 * 20, scale) and glued["ic-step-gap"] < 1e-12


def test_a_layer_leaves_each_example_its_residual(chapter):
    """"example j's label becomes y_j - phi_1 . p_j, its residual under phi_1"."""
    linear, eta = chapter.namespace["linear"], chapter.namespace["eta"]
    P, y, p = linear.inputs[0], linear.labels[0], linear.query[0]
    _, tokens = ic.linear_stack_prediction(P, y, p, eta, 1)
    phi_1 = ic.gradient_descent(P, y, eta, 1)[1]
    np.testing.assert_allclose(tokens[:-1, -1], y - P @ phi_1, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tokens[:, :-1], np.vstack([P, p]))  # the inputs are not changed


def test_t_layers_take_t_steps(chapter):
    """"From T = 1 to 10, the stack's prediction and that of the explicit steps differ by at most" rounding."""
    ns, glued = chapter.namespace, chapter.glued
    assert glued["ic-layers-max"] == 10 and list(ns["layers"]) == list(range(1, 11))
    assert glued["ic-layers-gap"] < 1e-12


def test_the_stack_falls_towards_least_squares(chapter):
    """"Their error falls from ... after one layer to ... after the last, towards least squares'"."""
    ns, glued = chapter.namespace, chapter.glued
    errors = ns["layer_errors"]
    assert np.all(np.diff(errors) < 0)
    assert glued["ic-layers-first"] > glued["ic-layers-last"] > glued["ic-layers-least"]
    np.testing.assert_allclose(ns["layer_errors"], ns["step_errors"], rtol=1e-9)


def test_the_query_must_be_no_key_from_the_second_layer_on(chapter):
    """"from the second layer on its label is not 0, and as a key it would be counted as an example"."""
    linear, eta = chapter.namespace["linear"], chapter.namespace["eta"]
    P, y, p = linear.inputs[0], linear.labels[0], linear.query[0]
    W_Q, W_K, W_V = ic.gd_layer_weights(P.shape[1], eta)
    X = ic.prompt_tokens(P, y, p)
    one = ic.linear_attention_layer(X, W_Q, W_K, W_V)
    assert one[-1, -1] != 0
    keyed = X + (X @ W_Q) @ (X @ W_K).T @ (X @ W_V) / len(y)  # the query among the keys
    np.testing.assert_allclose(keyed, one, rtol=0, atol=1e-12)  # the first layer: its label is 0
    keyed_twice = keyed + (keyed @ W_Q) @ (keyed @ W_K).T @ (keyed @ W_V) / len(y)
    stacked, _ = ic.linear_stack_prediction(P, y, p, eta, 2)
    assert abs(-keyed_twice[-1, -1] - stacked) > 1e-3


# --- trained from random weights --------------------------------------------------------------------


def test_training_finds_the_step_and_its_size(chapter):
    """The loss falls; the learned weights have a cosine of ... with the step's; eta near the best step's."""
    ns, glued = chapter.namespace, chapter.glued
    assert glued["ic-train-prompts"] == 4000 and glued["ic-train-n"] == 20 and glued["ic-train-steps"] == 150
    assert glued["ic-train-first-loss"] > 3 * glued["ic-train-last-loss"]
    assert glued["ic-similarity"] > 0.99
    d = study.DIMENSION
    W = ns["fit"].W_QK[:d, :d]
    diagonal = np.diag(W)
    assert np.abs(W - np.diag(diagonal)).max() < 0.2 * np.abs(diagonal).min(), "close to a multiple of I"
    assert np.ptp(diagonal) < 0.2 * np.abs(diagonal).mean()
    column = ns["fit"].w_V
    assert np.abs(column[:d]).max() < 0.2 * abs(column[d]), "nearly reads the label alone"
    assert abs(glued["ic-learned-eta"] / glued["ic-theory-eta"] - 1) < 0.05
    assert glued["ic-theory-eta"] == 20 / (20 + d + 1 + study.NOISE**2)


# --- who learns best --------------------------------------------------------------------------------


def curves(chapter, kind):
    return {name: np.array(values) for name, values in chapter.namespace["curves"][kind].items()}


def test_least_squares_wins_linear_tasks_with_many_examples(chapter):
    """Least squares, at N = 20, against sigma^2 d / (N - d - 1); below every other learner from N = 2d on.

    The measured error averages 1000 prompts of a heavy-tailed error (a scaled F distribution): its
    relative spread is about 10 %, so 25 % is several of them.
    """
    linear, glued = curves(chapter, "linear"), chapter.glued
    assert abs(glued["ic-linear-least-squares-train"] / glued["ic-least-theory"] - 1) < 0.25
    counts = np.array(study.COUNTS)
    many = counts >= 2 * study.DIMENSION
    for name in ("one step", "trained layer", "softmax head"):
        assert np.all(linear["least squares"][many] < linear[name][many] / 10), name


def test_one_step_measures_its_expected_error(chapter):
    """One step at N = 20, against eta^2 d (N + d + 1 + sigma^2) / N - 2 eta d + d at its best eta (10 %)."""
    glued = chapter.glued
    assert abs(glued["ic-linear-one-step-train"] / glued["ic-one-step-theory"] - 1) < 0.1
    eta, risk = risks.best_one_step(20, study.DIMENSION, study.NOISE)
    assert risk == risks.one_step_risk(eta, 20, study.DIMENSION, study.NOISE) or \
        abs(risk - risks.one_step_risk(eta, 20, study.DIMENSION, study.NOISE)) < rounding(20, 20)
    assert abs(glued["ic-eta-chosen"] - eta) < 0.1  # the grid's step is 0.02; the validation draw moves it


def test_at_as_many_examples_as_dimensions_the_step_wins(chapter):
    linear = curves(chapter, "linear")
    at_d = list(study.COUNTS).index(study.DIMENSION)
    assert linear["least squares"][at_d] > 10 * linear["one step"][at_d]
    assert chapter.glued["ic-linear-least-squares-d"] > 10


def test_with_two_examples_least_squares_beats_the_step(chapter):
    glued = chapter.glued
    assert glued["ic-linear-least-squares-two"] < glued["ic-linear-one-step-two"]


def test_the_trained_layer_is_a_step_tuned_to_its_training_length(chapter):
    """"close to the best step's" at N = 20; "far above the step's" with two examples (the best step 0.25)."""
    glued = chapter.glued
    assert glued["ic-linear-trained-layer-train"] < 1.05 * glued["ic-linear-one-step-train"]
    assert glued["ic-linear-trained-layer-two"] > 2 * glued["ic-linear-one-step-two"]
    assert glued["ic-eta-two"] == risks.best_one_step(2, study.DIMENSION, study.NOISE)[0] < 0.3


def test_the_softmax_head_is_behind_the_step_on_linear_tasks(chapter):
    linear = curves(chapter, "linear")
    assert np.all(linear["softmax head"] > linear["one step"])


def test_the_softmax_head_wins_the_sines(chapter):
    """The lines' errors stay near the sine's own; the kernel head's falls with N to a small fraction."""
    sine, glued = curves(chapter, "sine"), chapter.glued
    counts = np.array(study.COUNTS)
    assert np.all(np.diff(sine["softmax head"]) < 0)
    many = counts >= 4
    assert np.all(sine["softmax head"][many] < sine["least squares"][many])
    assert np.all(sine["softmax head"][many] < sine["one step"][many])
    assert glued["ic-sine-softmax-head-most"] < glued["ic-sine-least-squares-most"] / 20
    assert np.ptp(sine["one step"]) < 0.1, "one step stays flat"
    assert np.ptp(sine["least squares"][counts >= 20]) < 0.05, "least squares levels off"


def test_on_one_prompt_the_step_and_least_squares_are_lines_of_their_slopes(chapter):
    """"least squares divides the examples' mean of y_j p_j by their mean of p_j^2, the step multiplies it"."""
    line = chapter.namespace["panels"][0]
    eta = chapter.namespace["line_knobs"]["eta"]
    p, y, grid = line["inputs"], line["labels"], line["grid"]
    np.testing.assert_allclose(line["least squares"], grid * np.mean(y * p) / np.mean(p * p), atol=1e-12)
    np.testing.assert_allclose(line["one step"], grid * eta * np.mean(y * p), atol=1e-12)
    assert not np.allclose(line["least squares"], line["one step"], atol=1e-3)


def test_beyond_the_examples_the_softmax_head_is_level_at_the_outermost_labels(chapter):
    line = chapter.namespace["panels"][0]
    p, y, head = line["inputs"], line["labels"], np.array(line["softmax head"])
    assert line["grid"][0] < p.min() and line["grid"][-1] > p.max()
    assert abs(head[0] - y[np.argmin(p)]) < 0.05 and abs(head[-1] - y[np.argmax(p)]) < 0.05
    assert abs(head[0] - head[1]) < 0.01 and abs(head[-1] - head[-2]) < 0.01


def test_on_a_sine_only_the_softmax_head_follows_the_wave(chapter):
    sine = chapter.namespace["panels"][1]
    assert np.ptp(np.diff(sine["least squares"])) < 1e-12 and np.ptp(np.diff(sine["one step"])) < 1e-12
    prompts = study.sine_tasks(1, 20, noise=study.NOISE, rng=10)
    clean = prompts.inputs[0, :, 0]
    order = np.argsort(clean)
    head_at = np.interp(clean[order], sine["grid"], sine["softmax head"])
    line_at = np.interp(clean[order], sine["grid"], sine["least squares"])
    labels = prompts.labels[0][order]
    assert np.mean((head_at - labels) ** 2) < np.mean((line_at - labels) ** 2) / 5


# --- exercises ----------------------------------------------------------------------------------


def test_the_exercises_answers(chapter):
    glued = chapter.glued
    assert glued["ex-ic-step-sum"] == 3.0
    assert glued["ex-ic-step-prediction"] == glued["ex-ic-step-head"] == 0.5
    tau = glued["ex-ic-bandwidth-tau"]
    assert tau in list(chapter.namespace["DEFAULT_CANDIDATES"])
    assert glued["ex-ic-bandwidth-h"] == np.sqrt(tau / 2)
    assert 0.01 < glued["ex-ic-bandwidth-h"] < 0.1, "within a few hundredths"
    assert glued["ex-ic-live-layers"] == 100 and glued["ex-ic-live-long"] == 2.5
    assert glued["ex-ic-live-gap"] < 1e-4, "converged to least squares"
    assert glued["ex-ic-live-limit"] == 2 / glued["ex-ic-live-curvature"] < 2.5 and glued["ex-ic-live-limit"] > 0.5
    assert glued["ex-ic-live-diverged"] > 1e6
    assert glued["ex-ic-open-two"] == 2 / (2 + study.DIMENSION + 1 + study.NOISE**2)
    assert glued["ex-ic-open-most"] == 80 / (80 + study.DIMENSION + 1 + study.NOISE**2) > glued["ex-ic-open-two"]
