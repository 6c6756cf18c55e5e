"""The page "Heads that learn while they read": prompts as tokens, the two heads, the trained layer, who wins.

The tests read what the chapter computed (its variables and glued values)
and check each sentence that describes it; the few that need more call the
package with the chapter's settings.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from tolerances import rounding

from selfattention import defaults
from selfattention import in_context as ic
from selfattention import in_context_symbolic as ics
from selfattention.interactive import in_context_data as icd
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
    with_one, _ = ic.softmax_head(inputs, labels, [0.3, 1.0], 0.01)
    without, _ = ic.softmax_head(inputs[:, :1], labels, [0.3], 0.01)
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


def test_at_as_many_examples_as_dimensions_the_step_wins_in_mean_error_only(chapter):
    """N = d: least squares' mean is far above the step's, made by a few prompts; its median is below the step's.

    Its expected error is infinite for d - 1 <= N <= d + 1 (the package refuses to give it); the mean of these
    prompts is finite, dominated by its largest terms, and the glued shares and medians are those of the prompts.
    """
    linear, glued, ns = curves(chapter, "linear"), chapter.glued, chapter.namespace
    d = study.DIMENSION
    at_d = list(study.COUNTS).index(d)
    assert linear["least squares"][at_d] > 10 * linear["one step"][at_d], "in mean error the step wins"
    for n in (d - 1, d, d + 1):
        with pytest.raises(ValueError, match="infinite"):
            risks.least_squares_risk(n, d, study.NOISE)
    square = ns["chosen"]["linear"][at_d]["squared errors"]
    ls, step = square["least squares"], square["one step"]
    assert glued["ic-square-least-median"] == np.median(ls) < glued["ic-square-step-median"] == np.median(step)
    assert glued["ic-square-least-below"] == np.mean(ls < step) > 0.5, "least squares below on most prompts"
    assert glued["ic-square-worst-share"] == ls.max() / ls.sum()
    top = glued["ic-square-top"]
    assert glued["ic-square-top-share"] == np.sort(ls)[-top:].sum() / ls.sum() > 0.5, "most from a few prompts"
    assert top <= 0.01 * ls.size, "a few: at most 1 % of the prompts"


def test_with_two_or_three_examples_least_squares_beats_the_step(chapter):
    """N <= d - 2: (d - N) + sigma^2 N / (d - N - 1) below the best step's expected error, and so measured."""
    glued, d, sigma = chapter.glued, study.DIMENSION, study.NOISE
    for where, n in (("two", 2), ("three", 3)):
        assert n <= d - 2
        theory = glued[f"ic-least-theory-{where}"]
        assert theory == (d - n) + sigma**2 * n / (d - n - 1)
        assert glued[f"ic-step-theory-{where}"] == d * (d + 1 + sigma**2) / (n + d + 1 + sigma**2) > theory
        assert glued[f"ic-linear-least-squares-{where}"] < glued[f"ic-linear-one-step-{where}"]


def test_the_step_scales_phi_along_each_direction_it_has_seen(chapter):
    """Without noise, phi_1 = eta phi Sigma-hat: along an eigenvector of Sigma-hat, eta times its eigenvalue times phi.

    For two examples in d dimensions, Sigma-hat has two non-zero eigenvalues, which differ, so that no eta
    makes both factors 1: at the best eta for N = 2, neither is.
    """
    d = study.DIMENSION
    gen = np.random.default_rng(0)
    P, phi = gen.standard_normal((2, d)), gen.standard_normal(d)
    eta = chapter.glued["ic-eta-two"]
    phi_1 = ic.gradient_descent(P, P @ phi, eta, 1)[1]
    sigma_hat = P.T @ P / 2  # (d, d)
    np.testing.assert_allclose(phi_1, eta * phi @ sigma_hat, rtol=0, atol=rounding(20, eta * np.abs(sigma_hat).sum()))
    lam, V = np.linalg.eigh(sigma_hat)
    seen = lam > 1e-9 * lam.max()
    assert seen.sum() == 2
    np.testing.assert_allclose((phi_1 @ V)[seen], eta * lam[seen] * (phi @ V)[seen], rtol=1e-9)
    factors = eta * lam[seen]
    assert abs(factors[0] - factors[1]) > 0.01 and np.all(np.abs(factors - 1) > 0.01)


def test_the_trained_layer_is_a_step_tuned_to_its_training_length(chapter):
    """Behind the best step at every N; "close" at N = 20; "far above the step's" with two examples (best step 0.25)."""
    linear, glued = curves(chapter, "linear"), chapter.glued
    assert np.all(linear["trained layer"] > linear["one step"])
    assert glued["ic-linear-trained-layer-train"] < 1.05 * glued["ic-linear-one-step-train"]
    assert glued["ic-linear-trained-layer-two"] > 2 * glued["ic-linear-one-step-two"]
    assert glued["ic-eta-two"] == risks.best_one_step(2, study.DIMENSION, study.NOISE)[0] < 0.3


def test_the_softmax_head_is_behind_the_step_on_linear_tasks(chapter):
    linear = curves(chapter, "linear")
    assert np.all(linear["softmax head"] > linear["one step"])


def test_the_softmax_head_wins_the_sines_from_a_few_examples(chapter):
    """Behind one step at N = 2 and 3, ahead of both lines from the glued N on, and far ahead at N = 80."""
    sine, glued = curves(chapter, "sine"), chapter.glued
    counts = np.array(study.COUNTS)
    start = glued["ic-sine-wins-from"]
    assert start == study.wins_from(counts, sine["softmax head"], sine["one step"]) == 4
    assert np.all(sine["softmax head"][counts < start] > sine["one step"][counts < start])
    for name in ("one step", "least squares"):
        assert np.all(sine["softmax head"][counts >= start] < sine[name][counts >= start]), name
    assert np.all(np.diff(sine["softmax head"]) < 0)
    assert glued["ic-sine-softmax-head-most"] < glued["ic-sine-least-squares-most"] / 20
    # "level within the sampling error" at N = 3, "behind" at N = 2: the paired difference against its error
    three = glued["ic-sine-softmax-head-three"] - glued["ic-sine-one-step-three"]
    two = glued["ic-sine-softmax-head-two"] - glued["ic-sine-one-step-two"]
    assert abs(three) < 2 * glued["ic-sine-gap-se-three"] and two > 3 * glued["ic-sine-gap-se-two"]


def standard_error(chapter, kind, name):
    """The standard error of each N's mean error, from the test prompts' squared errors (N,)."""
    return np.array([np.std(result["squared errors"][name], ddof=1) / np.sqrt(study.TASKS)
                     for result in chapter.namespace["chosen"][kind]])


def test_on_the_sines_the_step_stays_near_predicting_0(chapter):
    """Within 4 standard errors of E f^2 at every N: the mean over 1000 prompts of a squared error whose variance
    is finite (the labels are bounded), so the sample's standard error measures it.

    With two examples its best eta is so small that it predicts nearly 0: every prediction on the test prompts is
    within a fifth of the queries' root mean square label (about 0.74).
    """
    sine, glued = curves(chapter, "sine"), chapter.glued
    zero = glued["ic-sine-zero"]
    assert zero == risks.sine_zero_error()
    assert np.all(np.abs(sine["one step"] - zero) < 4 * standard_error(chapter, "sine", "one step"))
    at_two = list(study.COUNTS).index(2)
    eta = chapter.namespace["chosen"]["sine"][at_two]["eta"]
    assert glued["ic-sine-eta-two"] == eta
    test = study.sine_tasks(study.TASKS, 2, noise=study.NOISE, rng=200 + at_two)  # the chapter's test draw
    np.testing.assert_array_equal((study.one_step_batch(test, [eta])[0] - test.target) ** 2,
                                  chapter.namespace["chosen"]["sine"][at_two]["squared errors"]["one step"])
    assert np.abs(study.one_step_batch(test, [eta])).max() < 0.2 * np.sqrt(np.mean(test.target**2))


def test_on_the_sines_least_squares_levels_off_a_little_above_the_best_line(chapter):
    """From N = 20: above the best line's error, by less than least squares' excess plus 4 standard errors.

    The excess of fitting two coefficients to N noisy examples is about (line error + sigma^2) 2 / (N - 3), the
    formula for normal inputs (uniform ones are near it); the mean's spread is measured from the prompts, whose
    squared errors have a finite variance from N = 20 on (the fit is then well conditioned).
    """
    sine, glued = curves(chapter, "sine"), chapter.glued
    line = glued["ic-sine-line"]
    assert line == risks.sine_line_error()
    counts = np.array(study.COUNTS)
    many = counts >= 20
    excess = (line + study.NOISE**2) * 2 / (counts[many] - 3)
    spread = 4 * standard_error(chapter, "sine", "least squares")[many]
    assert np.all(sine["least squares"][many] > line)
    assert np.all(sine["least squares"][many] - line < excess + spread)
    assert np.ptp(sine["least squares"][many]) < 0.05, "levels off"
    assert sine["least squares"][0] > 10 * sine["least squares"][1], "spikes at two examples"
    assert np.ptp(sine["one step"]) < 0.1, "one step stays flat"


def test_least_squares_wins_the_linear_tasks_but_at_d_where_the_step_wins(chapter):
    """The closing paragraph: least squares the best of the four at every N but d; one step at d; never the layer."""
    linear = curves(chapter, "linear")
    names = list(linear)
    best = [names[k] for k in np.argmin(np.array([linear[name] for name in names]), axis=0)]
    assert best == ["one step" if n == study.DIMENSION else "least squares" for n in study.COUNTS]


def test_the_errors_figure_s_alt_text(chapter):
    """"the softmax head lies above one step, and above the trained layer from six examples on"."""
    linear = curves(chapter, "linear")
    assert np.all(linear["softmax head"] > linear["one step"])
    assert study.wins_from(study.COUNTS, linear["trained layer"], linear["softmax head"]) == 6
    assert linear["trained layer"][0] > 2 * linear["one step"][0], "far above at the fewest examples"


def test_on_one_prompt_the_step_and_least_squares_are_lines_of_their_slopes(chapter):
    """"least squares divides the examples' mean of y_j p_j by their mean of p_j^2, the step multiplies it"."""
    line = chapter.namespace["panels"][0]
    eta = chapter.namespace["line_knobs"]["eta"]
    p, y, grid = line["inputs"], line["labels"], line["grid"]
    np.testing.assert_allclose(line["least squares"], grid * np.mean(y * p) / np.mean(p * p), atol=1e-12)
    np.testing.assert_allclose(line["one step"], grid * eta * np.mean(y * p), atol=1e-12)
    assert not np.allclose(line["least squares"], line["one step"], atol=1e-3)
    assert eta * np.mean(p * p) > 1, "the alt text: one step's line is the steeper"


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
    assert glued["ex-ic-bandwidth-reach"] == 2 * glued["ex-ic-bandwidth-h"]
    assert np.isclose(np.exp(-glued["ex-ic-bandwidth-reach"] ** 2 / tau), np.exp(-2), rtol=1e-12)
    assert abs(glued["ex-ic-bandwidth-reach"] - 0.1) < 0.025, "about a tenth of the period 1"
    assert tau == chapter.namespace["chosen"]["sine"][list(study.COUNTS).index(20)]["tau"]
    assert glued["ex-ic-live-layers"] == 100 and glued["ex-ic-live-long"] == 2.5
    assert glued["ex-ic-live-gap"] < 1e-4, "converged to least squares"
    assert glued["ex-ic-live-limit"] == 2 / glued["ex-ic-live-curvature"] < 2.5 and glued["ex-ic-live-limit"] > 0.5
    assert glued["ex-ic-live-overshooting"] == 3 and glued["ic-d"] == study.DIMENSION
    moments = chapter.namespace["moments"]
    assert glued["ex-ic-live-overshooting"] == np.sum(np.linalg.eigvalsh(moments) > 2 / 2.5)
    assert glued["ex-ic-live-before-layers"] == 99
    assert np.sign(glued["ex-ic-live-before"]) != np.sign(glued["ex-ic-live-diverged"]), "it swings in sign"
    assert abs(glued["ex-ic-live-diverged"]) > abs(glued["ex-ic-live-before"]) > 1e30
    assert glued["ex-ic-open-two"] == 2 / (2 + study.DIMENSION + 1 + study.NOISE**2)
    assert glued["ex-ic-open-most"] == 80 / (80 + study.DIMENSION + 1 + study.NOISE**2) > glued["ex-ic-open-two"]


def test_a_layer_dividing_by_n_plus_d_plus_1_plus_sigma2_takes_the_best_step_when_it_writes_minus_s(chapter):
    """Exercise 17.5: sum_j s_j (p_j . p_{N+1}) / (N + d + 1 + sigma^2), the step of eta = 1, is the best step's.

    Both sides sum N terms of size |s| |p_j| |p|: they agree to N + 3 roundings of that scale.
    """
    d, sigma = study.DIMENSION, study.NOISE
    for n in (2, chapter.glued["ic-most-n"]):
        prompts = study.linear_tasks(1, n, d, noise=sigma, rng=n)
        P, y, p = prompts.inputs[0], prompts.labels[0], prompts.query[0]
        divided = np.sum(y * (P @ p)) / (n + d + 1 + sigma**2)
        best = ic.one_step_prediction(P, y, p, risks.best_one_step(n, d, sigma)[0])
        scale = np.sum(np.abs(y * (P @ p)))
        assert abs(divided - best) < rounding(n + 3, scale)


# --- the explorer --------------------------------------------------------------------------------


def test_the_explorer_starts_from_a_sine_prompt_drawn_as_the_chapter_s_are(chapter):
    """"a sine prompt of 16 examples, drawn as the chapter's are": the seed's draw, no label clipped."""
    assert chapter.glued["ic-explorer-n"] == icd.EXAMPLES == len(icd.in_context_explorer_data()["inputs"])
    drawn = study.sine_tasks(1, icd.EXAMPLES, noise=study.NOISE, rng=defaults.SEED)
    data = icd.in_context_explorer_data()
    np.testing.assert_array_equal(data["inputs"], drawn.inputs[0, :, 0])
    np.testing.assert_array_equal(data["labels"], drawn.labels[0])
