"""The audit: every public function refuses bad input, naming the caller's argument, and returns no NaN or inf.

For each argument of each public function (``tests/public_api.py``),
hypothesis draws values of that argument's kind that must be refused:
NaN and infinities, complex numbers, masked arrays, numeric strings,
datetimes, booleans, Python ints beyond the doubles, bad seeds, axes,
masks and mappings (``tests/strategies.py``). The function must raise a
``ValueError`` or ``TypeError`` (never an ``OverflowError``, ``IndexError``,
numpy's ``AxisError`` or a ``SeedSequence`` error, and never return), and
the message must name the argument, not an internal variable.

Valid values from the whole double range must give a finite result or such
an error: drawn by hypothesis for every argument, and, deterministically,
every pair of numeric arguments at the range's corners (``extreme_corners``).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from public_api import NO_USER_DATA, calls, covered, public_callables
from strategies import (
    bad_arrays,
    bad_axes,
    bad_axes_objects,
    bad_byte_counts,
    bad_counts,
    bad_flags,
    bad_indices,
    bad_mappings,
    bad_masks,
    bad_regions,
    bad_rngs,
    bad_scalars,
    bad_sequences,
    bad_steps,
    bad_strings,
    bad_symbols,
    bad_tokens,
    extreme_corners,
    extreme_values,
    wrong_shapes,
)

from selfattention import memory, work

ARGUMENTS = [(call, name) for call in calls() for name in call.kinds]


def bad_values(kind: str, valid):
    """The strategy of values an argument of ``kind`` (currently ``valid``) must refuse."""
    if kind in ("array", "scores"):
        return bad_arrays(valid, neg_inf_ok=kind == "scores")
    if kind == "temperatures":
        return bad_arrays(valid) | st.sampled_from(([0.0], [-1.0], [], [5e-324], [[0.1]]))
    scalars = {"real": (), "positive": (0, -1.0, -0.0), "nonnegative": (-1.0, -1e-300), "temperature": (0, -1, 5e-324)}
    if kind in scalars:
        return bad_scalars(*scalars[kind])
    if kind == "counts":
        return st.sampled_from(([], "3", [2.5], [True], None, [[3]], np.array([2.0]), [-1], np.ma.masked_array([3]),
                                [2**63], [3, 10**5000]))
    if kind == "mask":
        return bad_masks(np.shape(valid))
    return {"count": bad_counts, "bytes": bad_byte_counts, "rng": bad_rngs, "flag": bad_flags,
            "string": bad_strings, "axis": bad_axes, "mapping": bad_mappings, "sequence": bad_sequences,
            "axes": bad_axes_objects, "region": bad_regions, "symbol": bad_symbols, "tokens": bad_tokens,
            "indices": bad_indices, "steps": bad_steps,
            "instance": st.sampled_from((None, {}, 3, "parts")),
            "options": st.sampled_from((3, "upper right", ["loc"]))}[kind]


def optional(call, argument) -> bool:
    """Whether None is a valid value of the argument (its default, or said so in the audit's entry)."""
    func = call.func if inspect.isroutine(call.func) or inspect.isclass(call.func) else call.func.__call__
    parameter = inspect.signature(func).parameters.get(argument)
    return argument in call.optional or (parameter is not None and parameter.default is None)


def names(message: str, argument: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(argument)}(?![\w])", message) is not None


def test_every_public_callable_is_audited():
    """A new public function must get an entry in tests/public_api.py (or a reason to have none)."""
    assert public_callables() - covered() == set(NO_USER_DATA)
    assert covered() <= public_callables()


@pytest.mark.parametrize("call", calls(), ids=repr)
def test_the_valid_call_of_the_audit_is_accepted(call):
    call.func(**call.kwargs)


@pytest.mark.parametrize(("call", "argument"), ARGUMENTS, ids=[f"{c.name}-{a}" for c, a in ARGUMENTS])
@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bad_input_is_refused_naming_the_argument(call, argument, data):
    bad = data.draw(bad_values(call.kinds[argument], call.kwargs.get(argument)), label=argument)
    assume(not (bad is None and optional(call, argument)))
    with pytest.raises((ValueError, TypeError)) as caught:
        call.func(**{**call.kwargs, argument: bad})
    assert names(str(caught.value), argument), f"{call.name}({argument}={bad!r}): {caught.value}"


#: Arguments that accept a value of :func:`strategies.wrong_shapes` (its index), with the reason.
WRONG_SHAPE_IS_VALID = {
    "core.softmax-x-0": "any number of axes: the softmax runs along one",
    "kernel.leave_one_out_scores-signal-0": "(n,) or (k, n): k signals at the same positions",
    "kernel.pick_temperature-scores-0": "(m,) or (k, m): k rows of scores",
    "learning.token_features-signal-0": "(n,) or (n_signals, n)",
    "metrics.mean_attended_distance-weights-0": "(n, n) or (k, n, n)",
    "induction.previous_token_score-weights-0": "(N, N) or (count, N, N)",
    **{f"power_laws.PowerLaw.__call__-{key}": "numbers or arrays, which broadcast"
       for key in ("n-0", "n-1", "sigma-0")},
}
SHAPED = [(call, name, k, bad) for call, name in ARGUMENTS
          for k, bad in enumerate(wrong_shapes(call.kinds[name], call.kwargs.get(name)))
          if f"{call.name}-{name}-{k}" not in WRONG_SHAPE_IS_VALID]


def test_every_wrong_shape_said_to_be_valid_is_one_the_audit_makes():
    made = {f"{c.name}-{a}-{k}" for c, a in ARGUMENTS for k, _ in enumerate(wrong_shapes(c.kinds[a], c.kwargs.get(a)))}
    assert set(WRONG_SHAPE_IS_VALID) <= made


@pytest.mark.parametrize(("call", "argument", "k", "bad"), SHAPED, ids=[f"{c.name}-{a}-{k}" for c, a, k, _ in SHAPED])
def test_a_value_of_the_wrong_shape_is_refused_naming_the_argument(call, argument, k, bad):
    """A 0-d array or a ragged list where a sequence is expected, an array of the wrong rank: refused by name.

    Deterministic, every shape for every argument (hypothesis's dozen draws from a kind's bad values
    need not reach them): these are the values whose errors came from numpy or Python itself
    ("len() of unsized object", "inhomogeneous shape") or named an internal array.
    """
    with pytest.raises((ValueError, TypeError)) as caught:
        call.func(**{**call.kwargs, argument: bad})
    assert names(str(caught.value), argument), f"{call.name}({argument}={bad!r}): {caught.value}"


# --- no silent NaN or inf, over the whole double range ------------------------------------------

NUMERIC = [call for call in calls() if call.numeric]


def non_finite(result, path="result"):
    """Where ``result`` (arrays, numbers, tuples, dicts, dataclasses) holds NaN or inf, or None."""
    if isinstance(result, np.ndarray) and result.dtype.kind in "fc":
        return None if np.isfinite(result).all() else path
    if isinstance(result, float | np.floating | complex):
        return None if np.isfinite(result) else path
    if dataclasses.is_dataclass(result):
        result = dataclasses.asdict(result)
    if isinstance(result, dict):
        items = result.items()
    elif isinstance(result, tuple | list):
        items = enumerate(result)
    else:
        return None
    return next((bad for key, value in items if (bad := non_finite(value, f"{path}[{key!r}]"))), None)


def finite_or_named(call, kwargs, where: str) -> None:
    """``call.func(**kwargs)`` returns no NaN or inf, or raises a ValueError or TypeError naming an argument."""
    try:
        result = call.func(**kwargs)
    except (ValueError, TypeError) as exc:
        assert any(names(str(exc), name) for name in call.kwargs), f"{where}: {exc}"
        return
    assert non_finite(result) is None, f"{where} returned a non-finite {non_finite(result)}"


@pytest.mark.parametrize("call", NUMERIC, ids=repr)
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_no_public_function_returns_nan_or_inf_without_raising(call, data):
    """Each argument valid or drawn from the whole double range: a finite result, or a clear error."""
    kwargs = {name: data.draw(st.just(value) | extreme_values(call.kinds.get(name, ""), value), label=name)
              for name, value in call.kwargs.items()}
    finite_or_named(call, kwargs, call.name)


@pytest.mark.parametrize("call", NUMERIC, ids=repr)
def test_no_public_function_returns_nan_or_inf_at_the_corners_of_two_arguments(call):
    """Every pair of numeric arguments at the double range's corners: a finite result, or a clear error.

    Deterministic, unlike the draws above, which rarely put two arguments at opposite corners at once
    (a signal near 1.8e308 against a clean signal near -1e292; positions spanning 1e154 with offset 1e154).
    """
    corners = {name: c for name, value in call.kwargs.items()
               if (c := extreme_corners(call.kinds.get(name, ""), value)) is not None}
    for first, second in itertools.combinations(corners, 2):
        for a, b in itertools.product(corners[first], corners[second]):
            finite_or_named(call, {**call.kwargs, first: a, second: b},
                            f"{call.name}({first}={_short(a)}, {second}={_short(b)})")


def _short(value) -> str:
    return f"{value:.3g}" if np.ndim(value) == 0 else f"array {np.ravel(value)[:2]}..."


# --- a count no memory holds ------------------------------------------------------------------

#: Count arguments that may be 2**62 (an int64 that no memory holds as a length), with the reason.
HUGE_COUNT_IS_VALID = {
    "memory.set_limit-nbytes": "a memory limit: it allocates nothing",
    "memory.limit-nbytes": "a memory limit: it allocates nothing",
    "work.set_work_limit-pairs": "a work limit: it computes nothing",
    "work.work_limit-pairs": "a work limit: it computes nothing",
    "bias_variance.ErrorParts-draws": "how many draws made results already computed",
    "leave_one_out.loo_choices-seeds": "a seed",
    "studies.induction_reach.drop_starts-seeds": "a seed",
    "noise_and_samples.plot_samples-sample_counts": "numbers to plot",
    "power_laws.plot_power_laws-ns": "numbers to plot",
    "figures.multihead.plot_error_laws-ns": "numbers to plot",
    "derivative.leading_order_noise-n": "a number in a formula: it allocates nothing",
    "jackknife.leading_order_variance-n": "a number in a formula: it allocates nothing",
    "differences.small_spacing_noise-n": "a number in a formula: it allocates nothing",
    "alibi.other_draws-seeds": "a seed",
    "equal_width.errors_on_draws-seeds": "a seed",
    **{f"cost.{f}-{a}": "a number in a formula: it allocates nothing"
       for f, args in (("exact_cost", ("n", "d_k", "d_v")), ("feature_cost", ("n", "columns", "d_v")),
                       ("window_cost", ("pairs", "d_k", "d_v")), ("decoding_cost", ("n", "d_k", "d_v")),
                       ("largest_n", ("bytes_per_entry",)))
       for a in args},
    "approximate_heads.nonpositive_draw-tries": "the most draws to try: the first that crosses 0 ends them",
    **{f"{name}-vocabulary": "the range of the symbols drawn: it allocates nothing"
       for name in ("tokens.random_sequences", "tokens.repeated_sequences", "tokens.periodic_sequences",
                    "studies.induction.training_batches")},
    "tokens.periodic_sequences-periods": "a period longer than the sequences: it allocates nothing",
    "studies.induction.training_batches-periods": "a period longer than the sequences: it allocates nothing",
    "induction.previous_token_layer-n_positions": "a number in the head's offset and temperature",
    "induction.hand_built_circuit-n_positions": "a number in the head's offset and temperature",
    "studies.induction.positional_shortcut-half": "a number in the head's offset and temperature",
    "cost.plot_quadratic_wall-guard_n": "a number to plot",
    "approximate_heads.plot_exact_and_features-count": "a number to plot",
    "linear_memory.plot_peak_memory-guard_n": "a number to plot",
    **{f"online_softmax.{f}-block": "keys a block: at most every key is taken at once"
       for f in ("online_attention", "online_gaussian_head", "rounding_bound")},
    **{f"model_cost.{f}-{a}": "a number in a formula: it allocates nothing"
       for f, args in (("layer_cost", ("n", "d_model", "d_ff", "matrices")),
                       ("attention_dominates_from", ("d_model", "d_ff", "matrices")),
                       ("kv_cache_bytes", ("n", "layers", "kv_heads", "d_head", "bytes_per_number", "window")))
       for a in args},
    "quadrature.trapezoid_rate-count": "a number in a formula",
    **{f"feature_error.{f}-{a}": "a number in a formula: it allocates nothing"
       for f, args in (("uniform_bound", ("count", "dims")), ("uniform_bound_count", ("dims",)),
                       ("delta_sd", ("count",)))
       for a in args},
    "feature_error.plot_ratio_spread-counts": "a number to plot",
    **{f"studies.in_context_risks.{f}-{a}": "a number in a formula: it allocates nothing"
       for f, args in (("one_step_risk", ("examples", "dimension")), ("best_one_step", ("examples", "dimension")),
                       ("least_squares_risk", ("examples", "dimension")))
       for a in args},
    "studies.in_context.wins_from-counts": "numbers of examples to compare: it allocates nothing",
    "figures.in_context.plot_learner_errors-counts": "numbers to plot",
    "figures.in_context.plot_layer_errors-layers": "numbers to plot",
}
#: Arguments refused under another name: the memory check names what its caller passes as ``name``.
REFUSED_AS = {f"memory.require_matrix-{a}": "n" for a in ("n_rows", "n_cols", "count", "bytes_per_entry")}
COUNTS = [(call, name) for call, name in ARGUMENTS if call.kinds[name] in ("count", "counts")]


@pytest.mark.parametrize(("call", "argument"), COUNTS, ids=[f"{c.name}-{a}" for c, a in COUNTS])
def test_a_count_no_memory_holds_is_refused_by_name_before_anything_is_allocated(call, argument):
    """2**62 samples, steps, draws or dimensions: a ValueError naming the count (not numpy's, not a MemoryError)."""
    key, valid = f"{call.name}-{argument}", call.kwargs[argument]
    huge = 2**62 if call.kinds[argument] == "count" else [*valid[:-1], 2**62]  # the last of the valid counts
    # memory.set_limit(2**62) and work.set_work_limit(2**62) hold inside this block only
    with memory.limit(memory.DEFAULT_LIMIT), work.work_limit(work.DEFAULT_LIMIT):
        if key in HUGE_COUNT_IS_VALID:
            call.func(**{**call.kwargs, argument: huge})
            return
        with pytest.raises(ValueError) as caught:
            call.func(**{**call.kwargs, argument: huge})
    assert names(str(caught.value), REFUSED_AS.get(key, argument)), f"{key}: {caught.value}"
