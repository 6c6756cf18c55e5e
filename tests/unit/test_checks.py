"""The checks of the code exercises (``selfattention.checks``): right answers pass, wrong ones get a hint.

Every check accepts the package's own function, called as the exercise
asks; refuses the typical wrong answers, each with a hint of its own that
names the fault; never prints a number of the package's answer; and answers
bad input (not a function, a wrong type, an error, NaN, a function that
never ends) with one line, never a traceback.
"""

from __future__ import annotations

import re
import signal
import threading
import time

import numpy as np
import pytest

from selfattention import checks, defaults
from selfattention.bilateral import bilateral_head
from selfattention.checks import _verdicts, blocks, fitting, heads, sequences
from selfattention.core import attention, causal_mask, softmax
from selfattention.head import gaussian_head, gaussian_head_weights
from selfattention.in_context import one_step_prediction
from selfattention.induction import previous_token_layer
from selfattention.kernel import leave_one_out_scores
from selfattention.learning import attention_loss_and_grad, loo_loss_and_grad
from selfattention.low_rank import numerical_rank
from selfattention.metrics import effective_neighbours
from selfattention.online_softmax import _absorb
from selfattention.positional import rotate
from selfattention.random_features import fourier_features
from selfattention.studies.onedim import onedim_head
from selfattention.tokens import residual_stream

ROOT2 = np.sqrt(2.0)


def _rows(scores):
    return softmax(scores, axis=-1)


def _previous(n, margin):
    """The package's previous-token head, called as the exercise asks."""
    return previous_token_layer(3, n, margin)(residual_stream(np.zeros(n - 1, dtype=int), 3))[1]


def _cache_step(x, keys, values, W_Q, W_K, W_V, tau, *, scale=True, query=None, grow=True):
    """One step with a cache through the package's attention; the keywords make the typical faults."""
    grown_keys, grown_values = np.vstack([keys, x @ W_K]), np.vstack([values, x @ W_V])
    q = (x @ W_Q if query is None else x @ query)[None, :]  # (1, d_k)
    output, _ = attention(q, grown_keys, grown_values, tau if scale else 1.0)
    return (output[0], grown_keys, grown_values) if grow else (output[0], keys, values)


def _projections(W_Q=None, W_K=None):
    Q, K, _ = gaussian_head_weights()
    return (Q if W_Q is None else W_Q), (K if W_K is None else W_K)


def _smooth(s, p, tau, *, power=2, divide=True, factor=1.0, axis=-1):
    scores = -np.abs(p[:, None] - p[None, :]) ** power
    scores = scores / (factor * tau) if divide else scores * tau
    return softmax(scores, axis=axis) @ s


def _loo(s, p, tau, *, mask=True, root=False, total=False, renormalise=True):
    scores = -((p[:, None] - p[None, :]) ** 2) / tau
    if mask and renormalise:
        np.fill_diagonal(scores, -np.inf)
    weights = _rows(scores)
    if mask and not renormalise:
        np.fill_diagonal(weights, 0.0)
    squared = (weights @ s - s) ** 2
    error = squared.sum() if total else squared.mean()
    return np.sqrt(error) if root else error


def _offset(p, delta, tau, *, sign=1.0, axis=-1):
    return softmax(-((p[:, None] + sign * delta - p[None, :]) ** 2) / tau, axis=axis)


def _rope_halves(V, p, omega):
    f = omega.size
    first, second = V[:, :f], V[:, f:]
    cos, sin = np.cos(p[:, None] * omega), np.sin(p[:, None] * omega)
    return np.hstack([first * cos - second * sin, first * sin + second * cos])


def _previous_wrong(n, margin, *, back=1, masked=True, tau_margin=None):
    p = np.linspace(0.0, 1.0, n)
    step = 1 / (n - 1)
    scores = -((p[:, None] - back * step - p[None, :]) ** 2) / (step**2 / (tau_margin or margin))
    if masked:
        scores[~causal_mask(n)] = -np.inf
    return _rows(scores)


def _features(p, omega, *, scale=None, sines=True):
    angles = p[:, None] * omega
    both = np.hstack([np.cos(angles), np.sin(angles) if sines else np.cos(angles)])
    return both / (np.sqrt(omega.size) if scale is None else scale(omega.size))


def _absorb_wrong(*, sums=True, weighted_sums=True, scaled=True):
    """One block of the online softmax with a fault: an old sum not rescaled, or the gap not divided by tau."""
    def update(scores, values, tau, top, total, weighted):
        new_top = np.maximum(top, scores.max(axis=1))
        shrink = np.exp((top - new_top) / (tau if scaled else 1.0))
        block = np.exp((scores - new_top[:, None]) / tau)
        total = total * (shrink if sums else 1.0) + block.sum(axis=1)
        weighted = weighted * (shrink[:, None] if weighted_sums else 1.0) + block @ values
        return new_top, total, weighted
    return update


#: check -> the package's own function, called as the exercise asks.
RIGHT = {
    checks.check_softmax: softmax,
    checks.check_one_number_head: lambda x, *w: onedim_head(x, *w)[0],
    checks.check_projections: _projections,
    checks.check_effective_neighbours: effective_neighbours,
    checks.check_smooth: lambda s, p, tau: gaussian_head(s, p, tau)[0],
    checks.check_leave_one_out: lambda s, p, tau: leave_one_out_scores(s, p, [tau])[0],
    checks.check_gradient: lambda *args: loo_loss_and_grad(*args)[1],
    checks.check_bilateral: lambda *args: bilateral_head(*args)[1],
    checks.check_offset_head: lambda p, delta, tau: gaussian_head(np.zeros(p.size), p, tau, offset=delta)[1],
    checks.check_rope: rotate,
    checks.check_causal_mask: causal_mask,
    checks.check_previous_token: _previous,
    checks.check_cache_step: _cache_step,
    checks.check_features: fourier_features,
    checks.check_online_block: _absorb,
    checks.check_numerical_rank: numerical_rank,
    checks.check_one_step: one_step_prediction,
}

#: check -> [(a typical wrong answer, a word its hint must hold), ...]: at least three each.
WRONG = {
    checks.check_softmax: [
        (lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True), "overflow"),
        (lambda x: softmax(x, axis=0), "columns"),
        (lambda x: np.exp(x - x.max(axis=-1, keepdims=True)), "normalisation"),
    ],
    checks.check_one_number_head: [
        (lambda x, w_q, w_k, w_v: onedim_head(x, w_q, w_k, 1.0)[0], "w_v"),
        (lambda x, w_q, w_k, w_v: _rows(-w_q * w_k * (x[:, None] - x) ** 2) @ (w_v * x), "product"),
        (lambda x, w_q, w_k, w_v: softmax(w_q * w_k * np.outer(x, x), axis=0) @ (w_v * x), "columns"),
    ],
    checks.check_projections: [
        (lambda: (-_projections()[0], _projections()[1]), "sign"),
        (lambda: _projections(W_K=np.array([[0, 0, 0], [ROOT2, 0, 0], [0, 0, 0], [0, 1, 0.0]])), "missing term"),
        (lambda: (2 * _projections()[0], _projections()[1]), "scale"),
        (lambda: tuple(W + np.eye(4, 3) * [1, 0, 0] for W in _projections()), "signal"),
    ],
    checks.check_effective_neighbours: [
        (lambda A: 1 / A.sum(axis=1), "square"),
        (lambda A: (A**2).sum(axis=1), "reciprocal"),
        (lambda A: 1 / np.sqrt((A**2).sum(axis=1)), "root"),
        (lambda A: 1 / (A**2).sum(axis=0), "columns"),
    ],
    checks.check_smooth: [
        (lambda s, p, tau: _smooth(s, p, tau, divide=False), "multiply"),
        (lambda s, p, tau: _smooth(s, p, tau, power=1), "square"),
        (lambda s, p, tau: _smooth(s, p, tau, factor=2.0), "factor 2"),
        (lambda s, p, tau: _smooth(s, p, tau, axis=0), "columns"),
    ],
    checks.check_leave_one_out: [
        (lambda s, p, tau: _loo(s, p, tau, mask=False), "mask"),
        (lambda s, p, tau: _loo(s, p, tau, root=True), "root"),
        (lambda s, p, tau: _loo(s, p, tau, total=True), "not their sum"),
        (lambda s, p, tau: _loo(s, p, tau, renormalise=False), "normalisation"),
    ],
    checks.check_gradient: [
        (lambda *args: loo_loss_and_grad(*args)[1] * args[3].size / 2, "factor"),
        (lambda *args: loo_loss_and_grad(*args)[2], "transpose"),
        (lambda *args: attention_loss_and_grad(*args, targets=args[3])[1], "mask"),
        (lambda *args: -loo_loss_and_grad(*args)[1], "sign"),
    ],
    checks.check_bilateral: [
        (lambda s, p, tau, tau_s: gaussian_head(s, p, tau)[1], "missing term"),
        (lambda s, p, tau, tau_s: _rows(-((p[:, None] - p) ** 2) / tau + (s[:, None] - s) ** 2 / tau_s), "sign"),
        (lambda s, p, tau, tau_s: bilateral_head(s, p, tau_s, tau)[1], "swapped"),
    ],
    checks.check_offset_head: [
        (lambda p, delta, tau: _offset(p, delta, tau, sign=-1.0), "sign"),
        (lambda p, delta, tau: _offset(p, delta, tau, sign=0.0), "missing offset"),
        (lambda p, delta, tau: _offset(p, delta, tau, axis=0), "columns"),
    ],
    checks.check_rope: [
        (lambda V, p, omega: rotate(V, -p, omega), "sign"),
        (_rope_halves, "pairs"),
        (lambda V, p, omega: rotate(V, p, omega[::-1]), "frequencies"),
    ],
    checks.check_causal_mask: [
        (lambda n: np.tril(np.ones((n, n), dtype=bool), -1), "off-by-one"),
        (lambda n: causal_mask(n).T, "transpose"),
        (lambda n: causal_mask(n).astype(int), "type"),
        (lambda n: np.ones((n, n), dtype=bool), "missing mask"),
    ],
    checks.check_previous_token: [
        (lambda n, margin: _previous_wrong(n, margin, masked=False), "missing mask"),
        (lambda n, margin: _previous_wrong(n, margin, back=-1), "sign"),
        (lambda n, margin: _previous_wrong(n, margin, tau_margin=1.0), "scale"),
        (lambda n, margin: _previous_wrong(n, margin, back=2), "off-by-one"),
    ],
    checks.check_cache_step: [
        (lambda *args: _cache_step(*args, scale=False), "scale"),
        (lambda *args: _cache_step(*args, query=args[4]), "query"),
        (lambda *args: _cache_step(*args, grow=False), "shape"),
    ],
    checks.check_features: [
        (lambda p, omega: _features(p, omega, scale=lambda d: 1.0), "missing factor"),
        (lambda p, omega: _features(p, omega, scale=lambda d: d), "not D"),
        (lambda p, omega: _features(p, omega, sines=False), "missing term"),
        (lambda p, omega: np.cos(p[:, None] * omega) / np.sqrt(omega.size), "shape"),
    ],
    checks.check_online_block: [
        (_absorb_wrong(sums=False, weighted_sums=False), "on the old sums"),
        (_absorb_wrong(weighted_sums=False), "rescale the weighted sums"),
        (_absorb_wrong(sums=False), "rescale the sums"),
        (_absorb_wrong(scaled=False), "by tau"),
    ],
    checks.check_numerical_rank: [
        (lambda values, tol: int((values > tol).sum()), "largest value"),
        (lambda values, tol: int((values <= tol * values.max()).sum()), "sign"),
        (lambda values, tol: int((values > tol * values.sum()).sum()), "not the sum"),
    ],
    checks.check_one_step: [
        (lambda P, y, p, eta: eta * np.sum(y * (P @ p)), "mean over the N"),
        (lambda P, y, p, eta: -eta * np.mean(y * (P @ p)), "-mean(s_j p_j)"),  # the chapter's label s_j
        (lambda P, y, p, eta: eta * np.mean(y * np.sum(P * P, axis=1)), "phi_1 . p_{N+1}"),  # and query p_{N+1}
        (lambda P, y, p, eta: eta * np.mean(y * (P @ p)) / 2, "factor 2"),
    ],
}

#: check -> its exercise: the cases it draws and the package's answers.
EXERCISES = {
    checks.check_softmax: heads.SOFTMAX, checks.check_one_number_head: heads.ONE_NUMBER_HEAD,
    checks.check_projections: heads.QUADRATIC, checks.check_effective_neighbours: heads.NEIGHBOURS,
    checks.check_smooth: heads.TEMPERATURE, checks.check_leave_one_out: fitting.LEAVE_ONE_OUT,
    checks.check_gradient: fitting.GRADIENT, checks.check_bilateral: fitting.BILATERAL,
    checks.check_offset_head: sequences.OFFSET, checks.check_rope: sequences.ROTATION,
    checks.check_causal_mask: sequences.CAUSAL, checks.check_previous_token: sequences.PREVIOUS,
    checks.check_cache_step: sequences.CACHE, checks.check_features: sequences.FEATURES,
    checks.check_online_block: blocks.ONLINE,
    checks.check_numerical_rank: sequences.RANK,
    checks.check_one_step: fitting.ONE_STEP,
}

CHECKS = list(checks.CHECKS)
IDS = [check.__name__ for check in CHECKS]


def one_line(capsys, verdict) -> str:
    """What the check printed: exactly the verdict's line, and nothing on stderr (no traceback)."""
    out, err = capsys.readouterr()
    assert err == "" and "Traceback" not in out
    assert out == f"{verdict.message}\n" and "\n" not in verdict.message
    assert len(verdict.message) <= 79, verdict.message  # fits a code cell's output box, as its code does
    return verdict.message


def test_every_check_is_tested():
    assert set(RIGHT) == set(WRONG) == set(EXERCISES) == set(CHECKS)
    assert len(CHECKS) >= 12


@pytest.mark.parametrize("check", CHECKS, ids=IDS)
def test_the_package_s_own_function_passes(check, capsys):
    verdict = check(RIGHT[check])
    assert verdict and repr(verdict) == str(verdict) == one_line(capsys, verdict)
    assert verdict.message.startswith("Right: ")


@pytest.mark.parametrize("check", CHECKS, ids=IDS)
def test_typical_wrong_answers_are_refused_each_with_its_own_hint(check, capsys):
    hints = []
    for wrong, word in WRONG[check]:
        verdict = check(wrong)
        message = one_line(capsys, verdict)
        assert not verdict and message.startswith("Not right: "), message
        assert word in message and not message.endswith("…"), f"{message!r} should name {word!r}, whole"
        hints.append(message)
    assert len(WRONG[check]) >= 3 and len(set(hints)) == len(hints), hints


def _printed_forms(values: np.ndarray) -> set[str]:
    """Every entry as it could be printed: fixed and general formats, short and long, and repr."""
    forms = set()
    for value in np.ravel(values).astype(float):
        if value in (0.0, 1.0, -1.0):
            continue  # these are a mask's or a one-hot's, and say nothing of the answer
        for spec in (".2f", ".3f", ".4f", ".6f", ".2g", ".3g", ".4g", ".6g", ".2e", ".3e"):
            forms.add(format(value, spec))
        forms.add(repr(value))
    return {form for form in forms if len(form.lstrip("-").replace(".", "").strip("0")) >= 2}


@pytest.mark.parametrize("check", CHECKS, ids=IDS)
def test_no_verdict_holds_the_package_s_numbers(check, capsys):
    exercise = EXERCISES[check]
    answers = [exercise.reference(*args) for args in exercise.cases(np.random.default_rng(defaults.SEED))]
    forms = set().union(*(_printed_forms(answer) for answer in answers))
    assert forms or check is checks.check_causal_mask  # a mask's answer has no numbers but 0 and 1
    calls = [RIGHT[check], *(wrong for wrong, _ in WRONG[check]), lambda *a: 1 / 0, 3]
    for function in calls:
        message = check(function).message
        capsys.readouterr()
        leaked = {form for form in forms if re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", message)}
        assert not leaked, f"{message!r} prints {leaked}"


def _nan_of(value):
    if isinstance(value, tuple):
        return tuple(_nan_of(v) for v in value)
    return np.asarray(value, dtype=float) * np.nan


@pytest.mark.parametrize("check", CHECKS, ids=IDS)
def test_bad_input_gets_one_line_naming_the_problem(check, capsys):
    right = RIGHT[check]
    cases = [
        (42, "needs a function"),
        ("softmax", "needs a function"),
        (..., "Not written yet"),
        (lambda *a: "abc", "Not right"),
        (lambda *a: None, "Not written yet"),
        (lambda *a: 1 / 0, "ZeroDivisionError"),
        (lambda *a: _nan_of(right(*a)), "boolean" if check is checks.check_causal_mask else "NaN"),
    ]
    for function, words in cases:
        verdict = check(function)
        assert not verdict and words in one_line(capsys, verdict), verdict
    for kwargs, words in (({"rng": -1}, "rng"), ({"rng": "seed"}, "rng"), ({"time_limit": 0}, "time_limit")):
        verdict = check(right, **kwargs)
        assert not verdict and words in one_line(capsys, verdict)


def test_the_one_step_check_writes_the_chapters_symbols(capsys):
    """A wrong step no hint names gets the formula, in the chapter's letters: labels s_j, the query's input p_{N+1}."""
    message = one_line(capsys, checks.check_one_step(lambda P, y, p, eta: eta * np.mean(y * (P @ p)) + 0.3))
    assert message == "Not right: the prediction differs: (eta / N) sum_j s_j (p_j . p_{N+1})."


def test_a_function_left_with_its_dots_is_not_written_yet(capsys):
    def stable_softmax(scores):
        shifted = scores - ...
        return shifted

    def empty(scores): ...

    for function in (stable_softmax, empty):
        verdict = checks.check_softmax(function)
        assert one_line(capsys, verdict).startswith("Not written yet: replace each ... in stable_softmax")


def test_an_error_says_its_line_in_the_reader_s_function(capsys):
    def softmax_with_a_typo(scores):
        return np.exp(scores) / scores.summ(axis=-1)

    def softmax_through_numpy(scores):
        weights = np.exp(scores)
        return np.linalg.inv(np.zeros((2, 2))) * weights.sum()  # raises inside numpy's own Python code

    for function, error in ((softmax_with_a_typo, "AttributeError"), (softmax_through_numpy, "LinAlgError")):
        message = one_line(capsys, checks.check_softmax(function))
        line = function.__code__.co_firstlineno + (1 if error == "AttributeError" else 2)
        assert message.startswith(f"Error: stable_softmax raised {error} at line {line}: "), message


def test_a_function_that_never_ends_is_stopped(capsys):
    def forever(scores):
        while True:
            pass

    start = time.monotonic()
    verdict = checks.check_softmax(forever, time_limit=0.2)
    assert time.monotonic() - start < 5  # stopped near 0.2 s, not left to run
    assert one_line(capsys, verdict).startswith("Too slow: stable_softmax stopped after 0.2 s")


def test_the_limit_is_for_the_whole_check_and_an_outer_timer_is_put_back(capsys):
    calls = []

    def slowly(scores):
        calls.append(1)
        time.sleep(0.15)
        return softmax(scores)

    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        verdict = checks.check_softmax(slowly, time_limit=0.25)  # 3 cases of 0.15 s each
        left, _ = signal.getitimer(signal.ITIMER_REAL)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert one_line(capsys, verdict).startswith("Too slow") and len(calls) == 2
    assert 90 < left <= 100


def test_off_the_main_thread_a_function_that_never_ends_is_given_up_on():
    stop, verdicts = threading.Event(), []

    def until_stopped(scores):
        while not stop.is_set():
            time.sleep(0.01)

    worker = threading.Thread(target=lambda: verdicts.append(checks.check_softmax(until_stopped, time_limit=0.2)))
    worker.start()
    worker.join(10)
    stop.set()  # lets the thread the check left behind end
    assert not worker.is_alive() and verdicts[0].message.startswith("Too slow")
    right = []
    worker = threading.Thread(target=lambda: right.append(checks.check_softmax(softmax)))
    worker.start()
    worker.join(10)
    assert right[0]


def test_a_failure_of_the_check_itself_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(_verdicts, "close", lambda *a: 1 / 0)
    verdict = checks.check_softmax(softmax)
    assert one_line(capsys, verdict).startswith("Cannot check: the check itself failed (ZeroDivisionError")


def test_the_seed_draws_the_cases():
    exercise = heads.SOFTMAX
    one, again, other = (exercise.cases(np.random.default_rng(seed)) for seed in (1, 1, 2))
    assert np.array_equal(one[0][0], again[0][0]) and not np.array_equal(one[0][0], other[0][0])
    assert checks.check_softmax(softmax, rng=np.random.default_rng(7))


def test_a_verdict_shows_once_in_a_notebook():
    verdict = checks.Verdict(False, "Not right: a sign.")
    assert not verdict and repr(verdict) == "Not right: a sign."
    assert verdict._ipython_display_() is None  # the check printed it: IPython shows nothing more
