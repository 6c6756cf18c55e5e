"""Bad input gets a ValueError or TypeError naming the caller's argument: the cases of issue 14.

The systematic audit, over every public function and every kind of bad
value, is ``test_input_audit.py``; these are the calls the issue reported,
which imports of the package's top level can reach.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import selfattention as sa
from selfattention import kernel, metrics


def names(message: str, argument: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(argument)}(?![\w])", message) is not None


# --- the issue's reproductions, one by one ------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument", "message"),
    [
        (lambda: sa.gaussian_head([1.0, 2.0], [0.0, 1e200], 1.0), "positions", "must span at most"),
        (lambda: sa.gaussian_head([0, 0, 0], [0.82, -1.38, -2.75], 5e-324), "temperature", "smallest normal"),
        (lambda: sa.gaussian_head([1.0, 2.0], [0.0, 1.0], 10**400), "temperature", "too large for a double"),
        (lambda: sa.noisy_sine(2**62, 0.3), "n", "memory limit"),
        (lambda: sa.noisy_sine(2**63, 0.3), "n", r"at most 9223372036854775807 \(the largest length of an array\)"),
        (lambda: sa.noisy_sine(3, 0.3, rng=-1), "rng", "seed >= 0"),
        (lambda: sa.noisy_sine(3, 0.3, rng="seed"), "rng", "integer seed"),
        (lambda: sa.softmax([1.0, 2.0], axis=3), "axis", "must lie in"),
        (lambda: sa.softmax(np.ma.masked_array([1.0, 2e9], mask=[False, True])), "x", "masked array"),
        (lambda: sa.softmax(["1", "2"]), "x", "strings"),
        (lambda: sa.softmax([1 + 1j, 2.0]), "x", "complex"),
        (lambda: sa.softmax(np.array(["2020-01-01"], dtype="datetime64[D]")), "x", "datetimes"),
        (lambda: metrics.entropy([[True, False]]), "weights", "booleans"),
        (lambda: metrics.entropy([[True, 0.0]]), "weights", "real numbers only"),
    ],
)
def test_the_issues_bad_calls_name_the_callers_argument(call, argument, message):
    with pytest.raises((ValueError, TypeError), match=message) as caught:
        call()
    assert names(str(caught.value), argument), caught.value
    assert not isinstance(caught.value, (OverflowError, IndexError))


# Given ids: pytest would name a case str(n), and str(10**5000) fails.
@pytest.mark.parametrize("n", [2**63, 10**400, 10**5000], ids=["2**63", "10**400", "10**5000"])
@pytest.mark.parametrize("call", [lambda n: sa.noisy_sine(n, 0.3), sa.unit_noise, lambda n: sa.signals.step_sine(n, 1)],
                         ids=["noisy_sine", "unit_noise", "step_sine"])
def test_a_count_beyond_the_largest_array_is_refused_naming_it(call, n):
    """Issue 19: ``noisy_sine(10**400, ...)`` raised an ``OverflowError`` (from the memory check's message)."""
    with pytest.raises(ValueError, match=r"^n must be at most 9223372036854775807 \(the largest length of an array\)"):
        call(n)


def test_attention_at_the_smallest_temperature_answers_instead_of_blaming_x():
    """``x contains infinite values``, for a valid temperature, named softmax's internal argument."""
    output, weights = sa.attention([[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]], [[3.0], [4.0]], 5e-324)
    assert weights.tolist() == [[0.0, 1.0]] and output.tolist() == [[4.0]]


def test_masked_values_are_never_used_as_data():
    masked = np.ma.masked_array([0.0, 1e9], mask=[False, True])
    with pytest.raises(TypeError, match="masked"):
        kernel.choose_temperature(masked, [0.0, 1.0])


def test_a_type_error_is_a_value_error_too_for_callers_that_catch_either():
    with pytest.raises(ValueError):
        sa.noisy_sine(3.5, 0.3)
    with pytest.raises(TypeError):
        sa.noisy_sine(3.5, 0.3)
