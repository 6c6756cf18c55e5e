r"""Running a reader's function against the package's own, and saying what is wrong in one line.

A check (one per code exercise, in the sibling modules) is an
:class:`Exercise`: how to draw seeded inputs, how to call the reader's
function and read its answer as an array, the package's answer, and the
typical wrong answers, each with the hint that names its fault.
:func:`judge` runs it and returns a :class:`Verdict`: what was verified, or
a hint. No verdict ever holds a number of the package's answer (a hint
names a fault: a shape, a missing term, a sign, a scale, an off-by-one, a
transpose, an overflow), and no error of the reader's function, nor of the
check itself, escapes as a traceback. The reader's function runs under a
time limit (a timer signal in the main thread; elsewhere a thread that is
given up on), so that a loop that never ends cannot hang the session.
"""

from __future__ import annotations

import dis
import inspect
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_positive_scalar, as_rng
from ._time_limit import TimeUp, limited

#: Seconds a check gives the reader's function, all calls together.
TIME_LIMIT = 10.0

#: The longest verdict: a line that a code cell's output box shows whole (the book's 79 columns).
LINE = 79

#: Relative agreement that counts as right. Equivalent formulas (sums in
#: another order, a softmax shifted by another constant) differ from the
#: package's by rounding, a few units of 1e-16 relative per operation over
#: at most a few hundred operations, far below it; the faults the hints name
#: change entries by orders of magnitude more (tests/unit/test_checks.py).
RTOL = 1e-7


@dataclass(frozen=True)
class Verdict:
    """A check's one-line answer; true when the reader's function is right.

    Its ``repr`` is the line itself, and the check has printed it already,
    so a notebook shows nothing more for it.
    """

    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _ipython_display_(self) -> None:
        """Show nothing: the check printed the line already."""


#: The parameters every check takes, appended to its docstring by :func:`documented`.
PARAMETERS = """

Parameters
----------
function : callable
    The reader's function, called as the exercise asks. Anything else, an
    error it raises, NaN it returns, or a run longer than ``time_limit``
    gets a verdict naming the problem, not an exception.
rng : int, numpy.random.Generator or None
    Draws the inputs (the book's seed by default).
time_limit : float
    Seconds the function may run, all its calls together.

Returns
-------
Verdict
    Printed as well; true when the function is right.
"""


def documented(check):
    """Append :data:`PARAMETERS` to a check's docstring."""
    check.__doc__ = inspect.cleandoc(check.__doc__) + PARAMETERS
    return check


class Refused(Exception):
    """Raised inside a check to stop it with a verdict that is not a pass."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Exercise:
    """What a check needs to judge one exercise.

    Attributes
    ----------
    name : str
        The function the reader writes, as the exercise names it.
    cases : callable
        ``cases(rng)``: a list of argument tuples, drawn with ``rng``.
    answer : callable
        ``answer(call, *args)``: the reader's answer as an array, from
        ``call(*args)`` (which calls the reader's function under the limit).
    reference : callable
        ``reference(*args)``: the package's answer, the same shape.
    faults : callable
        ``faults(*args)``: ``[(hint, wrong answer), ...]``, the typical wrong answers.
    verified : str
        What a pass verified.
    fallback : str
        The hint when the answer is wrong in no way the check recognises.
    compare : callable
        ``compare(answer)``: what is compared (identity by default).
    """

    name: str
    cases: Callable
    answer: Callable
    reference: Callable
    faults: Callable
    verified: str
    fallback: str
    compare: Callable = field(default=lambda a: a)


def judge(exercise: Exercise, function, rng, time_limit) -> Verdict:
    """Run ``function`` on the exercise's cases; print and return the verdict."""
    try:
        verdict = _judged(exercise, function, rng, time_limit)
    except Refused as refusal:
        verdict = Verdict(False, refusal.message)
    except Exception as error:
        verdict = Verdict(False, f"Cannot check: the check itself failed "
                                 f"({type(error).__name__}: {_first_line(error)})")
    if len(verdict.message) > LINE:  # a reader's error message, cut to fit a phone's line
        verdict = Verdict(verdict.passed, verdict.message[: LINE - 1] + "…")
    print(verdict.message)
    return verdict


def _judged(exercise: Exercise, function, rng, time_limit) -> Verdict:
    if function is Ellipsis:
        raise Refused(f"Not written yet: define {exercise.name} and pass it to the check.")
    if not callable(function):
        raise Refused(f"Cannot check: the check needs a function, got {type(function).__name__[:20]}.")
    try:
        generator = as_rng(rng)
        limit = as_positive_scalar(time_limit, "time_limit")
    except ValueError as error:
        raise Refused(f"Cannot check: {_first_line(error)}.") from None
    clock = _Clock(function, exercise.name, limit)
    cases = exercise.cases(generator)
    for args in cases:
        got = exercise.compare(exercise.answer(clock.call, *args))
        want = exercise.compare(exercise.reference(*args))
        if not close(got, want):
            faults = [(hint, exercise.compare(wrong)) for hint, wrong in exercise.faults(*args)]
            raise Refused(f"Not right: {diagnose(got, want, faults, exercise.fallback)}")
    return Verdict(True, f"Right: {exercise.verified} ({len(cases)} random cases).")


def close(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether ``got`` agrees with ``want`` within :data:`RTOL` of ``want``'s largest entry."""
    if got.shape != want.shape:
        return False
    scale = float(np.max(np.abs(want), initial=0.0))
    return bool(np.all(np.abs(got - want) <= RTOL * max(scale, 1e-300)))


def diagnose(got: np.ndarray, want: np.ndarray, faults: Sequence, fallback: str) -> str:
    """The hint for a wrong answer of the right shape: a known fault first, then a generic one."""
    for hint, wrong in faults:
        if close(got, np.asarray(wrong, dtype=float)):
            return hint
    if want.ndim and close(got, -want):
        return "a sign: every entry has the opposite sign."
    if want.ndim == 2 and want.shape[0] == want.shape[1] and close(got, want.T):
        return "a transpose: rows and columns are swapped."
    for axis in range(want.ndim):
        if any(close(got, np.roll(want, k, axis=axis)) for k in (-1, 1)):
            return f"an off-by-one: shifted by one along axis {axis}."
    norm = float(np.vdot(want, want))
    if want.ndim and norm > 0 and close(got, want * (float(np.vdot(got, want)) / norm)):
        return "a scale: right up to a constant factor (a missing or extra factor)."
    return fallback


def as_result(value, name: str, shape: tuple, what: str, nonfinite: str | None = None) -> np.ndarray:
    """The reader's ``value`` as a float array of ``shape``, or :class:`Refused` naming what is wrong.

    ``nonfinite`` is the hint for NaN or inf, when the exercise knows its cause.
    """
    if value is Ellipsis or (isinstance(value, tuple) and Ellipsis in value):
        raise Refused(f"Not written yet: replace each ... in {name} with your code.")
    if value is None:
        raise Refused(f"Not right: {name} returns None; end it with return.")
    try:
        array = np.asarray(value)
    except Exception:
        array = np.asarray(None)
    if array.dtype.kind not in "biuf":
        raise Refused(f"Not right: a type: {what} is a {type(value).__name__[:20]}, not numbers.")
    if array.shape != shape:
        if array.shape == shape[::-1]:
            raise Refused(f"Not right: a transpose: got {array.shape} for {what}, not {shape}.")
        raise Refused(f"Not right: a shape: got {array.shape} for {what}, not {shape}.")
    array = array.astype(float)
    if not np.isfinite(array).all():
        raise Refused(f"Not right: {nonfinite or f'NaN or inf in {what} (an overflow, or a division by zero).'}")
    return array


class _Clock:
    """Calls the reader's function under one time limit for the whole check, errors in one line."""

    def __init__(self, function, name: str, limit: float):
        self.function, self.name, self.left = function, name, limit
        self.limit = limit

    def call(self, *args):
        value = self._timed(args)
        if value is None and (_unwritten(self.function) or _empty(self.function)):
            raise Refused(f"Not written yet: replace each ... in {self.name} with your code.")
        return value

    def _timed(self, args: tuple):
        start = time.perf_counter()
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # an overflow is judged by its result
                return limited(self.function, args, self.left)
        except TimeUp:
            raise Refused(f"Too slow: {self.name} stopped after {self.limit:g} s (a loop that never ends?).") from None
        except Exception as error:
            raise Refused(self._error(error)) from None
        finally:
            self.left = max(self.left - (time.perf_counter() - start), 1e-3)

    def _error(self, error: Exception) -> str:
        text = _first_line(error)
        if _unwritten(self.function):
            return f"Not written yet: replace each ... in {self.name} with your code."
        code = getattr(self.function, "__code__", None)  # the line is the reader's, not numpy's
        frames = [f for f in traceback.extract_tb(error.__traceback__) if code and f.filename == code.co_filename]
        where = f" at line {frames[-1].lineno}" if frames and frames[-1].lineno else ""
        return f"Error: {self.name} raised {type(error).__name__}{where}: {text}"


def _unwritten(function) -> bool:
    """Whether ``function``'s code still holds a ``...`` (the starter's blanks)."""
    code = getattr(function, "__code__", None)
    return code is not None and any(const is Ellipsis for const in code.co_consts)


def _empty(function) -> bool:
    """Whether ``function`` does nothing but return None (a body of ``...`` or a docstring alone)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    steps = [step for step in dis.get_instructions(code) if step.opname not in ("RESUME", "NOP", "CACHE")]
    return len(steps) <= 2 and all(step.opname == "RETURN_VALUE" or step.argval is None for step in steps)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else "(no message)"
    return text if len(text) <= 160 else text[:157] + "..."
