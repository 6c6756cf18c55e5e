"""Input checks shared by the package's public functions: one checker per kind of argument.

Every public function validates its arguments up front, so that bad input
fails with a ``ValueError`` or ``TypeError`` that names the caller's
argument, instead of a cryptic numpy error (or, worse, a silently wrong
result) further down. Values are never converted silently: booleans, complex
numbers, strings (even numeric ones), datetimes and masked arrays are
refused, not turned into floats.

A value of the wrong type raises :class:`InputTypeError`, which is both a
``TypeError`` and a ``ValueError`` (as numpy's ``AxisError`` is both a
``ValueError`` and an ``IndexError``), so that callers catching either see it.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import re
from collections.abc import Mapping, Sequence

import numpy as np

#: The smallest positive normal double. Temperatures and bandwidths below it
#: (subnormal numbers) carry too few significant digits to divide by.
TINY = float(np.finfo(float).tiny)
#: The largest count (a length, a number of steps or draws): the largest
#: length of a numpy array, 2**63 - 1 on 64-bit machines. Python's integers
#: have no bound; beyond this one, no computation could use them.
MAX_COUNT = int(np.iinfo(np.intp).max)
#: The spacing of doubles near 1, 2**-52: a double's relative rounding is at most half of it.
EPS = float(np.finfo(float).eps)


class InputTypeError(TypeError, ValueError):
    """An argument of the wrong type; both a ``TypeError`` and a ``ValueError``."""


def as_array(x, name: str, *, ndim: int | None = None, allow_neg_inf: bool = False) -> np.ndarray:
    """Return ``x`` as a float array after checking its type, shape and values.

    Parameters
    ----------
    x : array_like
        The value to check: real numbers (no booleans, complex numbers,
        strings, datetimes or masked arrays).
    name : str
        The argument's name, used in error messages.
    ndim : int, optional
        The required number of dimensions.
    allow_neg_inf : bool
        Whether ``-inf`` is allowed (as a masked score); NaN and ``+inf``
        never are.
    """
    arr = _real_array(x, name)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    bad_inf = np.isposinf(arr) if allow_neg_inf else np.isinf(arr)
    if bad_inf.any():
        raise ValueError(f"{name} contains infinite values")
    return arr


def _real_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array, refusing every type that is not plainly real numbers."""
    if isinstance(x, np.ma.MaskedArray):
        raise InputTypeError(f"{name} must not be a masked array (its masked values would be used as data)")
    if x is None or isinstance(x, str | bytes | dict | set):
        raise InputTypeError(f"{name} must be an array of real numbers, got {x!r}")
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nesting
        raise ValueError(f"{name} must be a rectangular array of real numbers, got {x!r}") from exc
    kind = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "strings", "M": "datetimes",
            "m": "timedeltas", "V": "structured values"}.get(raw.dtype.kind)
    if kind is not None:
        raise InputTypeError(f"{name} must hold real numbers, not {kind}")
    if raw.dtype.kind == "O" or (isinstance(x, list | tuple) and raw.size):
        return _from_objects(raw if raw.dtype.kind == "O" else np.asarray(x, dtype=object), name)
    arr = raw.astype(float, copy=False)
    if arr.dtype != raw.dtype and np.isinf(arr).any() and not np.isinf(raw).any():
        raise ValueError(f"{name} holds values too large for a double")
    return arr


def _from_objects(objects: np.ndarray, name: str) -> np.ndarray:
    """Convert an object array (or a list's elements) to float, refusing anything not a real number."""
    for value in objects.flat:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise InputTypeError(f"{name} must hold real numbers only, got {value!r}")
    try:
        return np.array([float(v) for v in objects.flat], dtype=float).reshape(objects.shape)
    except OverflowError as exc:
        raise ValueError(f"{name} holds values too large for a double") from exc


def shown(x) -> str:
    """``repr(x)``, but an integer of 20 digits or more as its order of magnitude.

    Python refuses to print an integer of more than 4300 digits (a
    ``ValueError`` that names no argument), and one of 400 digits drowns its
    message: ``10**400`` is shown as ``an integer near 10**400``.
    """
    if isinstance(x, numbers.Integral) and not isinstance(x, bool | np.bool_) and abs(int(x)) >= 10**19:
        return f"an integer near {'-' if x < 0 else ''}10**{math.log10(abs(int(x))):.0f}"
    return repr(x)


def as_real_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is one finite real number (not a bool)."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {x!r}")
    try:
        value = float(x)
    except OverflowError as exc:
        raise ValueError(f"{name} is too large for a double, got {shown(x)}") from exc
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {shown(x)}")
    return value


def as_nonnegative_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is finite and >= 0."""
    value = as_real_scalar(x, name)
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {shown(x)}")
    return value


def as_positive_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is finite and > 0."""
    value = as_nonnegative_scalar(x, name)
    if value == 0:
        raise ValueError(f"{name} must be positive, got {shown(x)}")
    return value


def as_temperature(x, name: str) -> float:
    """A temperature or bandwidth: finite and at least :data:`TINY` (a normal double)."""
    value = as_positive_scalar(x, name)
    if value < TINY:
        raise ValueError(f"{name} must be at least {TINY:.6g} (the smallest normal double), got {shown(x)}")
    return value


def as_difference_step(x, name: str, entries) -> float:
    r"""A central difference's step :math:`\Delta`, for entries :math:`\theta` up to :math:`s = \max(1, \max|\theta|)`.

    Refused unless :math:`\sqrt{\mathrm{eps}}\, s \le \Delta \le s`, with
    :math:`\mathrm{eps} = 2^{-52}` the spacing of doubles near 1. A double
    carries 53 bits: the shifted entries :math:`\theta \pm \Delta` are
    rounded to :math:`\mathrm{eps}\, s / 2` and the two losses to
    :math:`\mathrm{eps}\, |L| / 2`, so the difference quotient errs by about
    :math:`\mathrm{eps}\, s / \Delta` of a gradient on the loss's own scale,
    :math:`|L| / s`. Below :math:`\sqrt{\mathrm{eps}}\, s` (about
    :math:`1.5 \times 10^{-8} s`) rounding takes more than half of its 16
    digits, and at the smallest steps the shifted entries round back to
    the entries: a gradient of zeros. Above :math:`s` the difference spans
    more than the entries themselves and measures no derivative at them (at
    the largest steps the losses saturate, again to zeros).

    Parameters
    ----------
    x : float
        The step.
    name : str
        The argument's name, used in error messages.
    entries : sequence of ndarray
        The arrays whose entries are shifted.
    """
    step = as_positive_scalar(x, name)
    scale = max([1.0, *(float(np.max(np.abs(e))) for e in entries if np.size(e))])
    low = math.sqrt(EPS) * scale
    if step < low:
        raise ValueError(f"{name} must be at least {low:.3g} (sqrt(2**-52) times the largest entry, or 1): "
                         f"below it rounding takes more than half of the difference's 16 digits, got {shown(x)}")
    if step > scale:
        raise ValueError(f"{name} must be at most {scale:.3g} (the largest entry, or 1): a larger step spans "
                         f"more than the entries and measures no derivative, got {shown(x)}")
    return step


def as_temperatures(x, name: str) -> np.ndarray:
    """Return ``x`` as a non-empty 1-D float array of temperatures, all ``>=`` :data:`TINY`."""
    taus = as_array(x, name, ndim=1)
    if taus.size == 0:
        raise ValueError(f"{name} must hold at least one temperature")
    if (taus <= 0).any():
        raise ValueError(f"{name} must all be positive, got {float(taus[taus <= 0][0])!r}")
    if (taus < TINY).any():
        raise ValueError(f"{name} must all be at least {TINY:.6g} (the smallest normal double)")
    return taus


def as_count(x, name: str, *, minimum: int = 1, maximum: int | None = MAX_COUNT) -> int:
    """Return ``x`` as an int after checking it is an integer in [``minimum``, ``maximum``].

    ``maximum`` is :data:`MAX_COUNT` unless given (None: no bound, for
    byte counts, which are products of counts).
    """
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
        raise InputTypeError(f"{name} must be an integer, got {x!r}")
    if x < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {shown(x)}")
    if maximum is not None and x > maximum:
        why = " (the largest length of an array)" if maximum == MAX_COUNT else ""
        raise ValueError(f"{name} must be at most {maximum}{why}, got {shown(x)}")
    return int(x)


def as_counts(x, name: str, *, minimum: int = 1) -> list[int]:
    """A non-empty 1-D sequence of integers, each ``>= minimum``, as a list of ints."""
    if isinstance(x, np.ma.MaskedArray | str | bytes) or not isinstance(x, list | tuple | range | np.ndarray) \
            or _ndim(x) == 0:  # a 0-d array is a number, of no length
        raise InputTypeError(f"{name} must be a sequence of integers, got {x!r}")
    values = list(x.tolist() if isinstance(x, np.ndarray) else x)
    if not values or _ndim(x) != 1:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers, got {x!r}")
    return [as_count(v, name, minimum=minimum) for v in values]


def _ndim(x) -> int | None:
    """``np.ndim(x)``, or None for a ragged nesting (rows of different lengths, of which numpy makes no array)."""
    try:
        return np.ndim(x)
    except ValueError:
        return None


def as_flag(x, name: str) -> bool:
    """A boolean switch: ``True`` or ``False`` only (not 0, 1 or a string)."""
    if not isinstance(x, bool | np.bool_):
        raise InputTypeError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def as_choice(x, name: str, options) -> str:
    """One of the strings ``options``."""
    if not isinstance(x, str):
        raise InputTypeError(f"{name} must be one of {sorted(options)}, got {x!r}")
    if x not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {x!r}")
    return x


def as_rng(rng, name: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from a seed (an integer >= 0), a generator, or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.BitGenerator | np.random.SeedSequence):
        return np.random.default_rng(rng)
    if rng is not None and (isinstance(rng, bool | np.bool_) or not isinstance(rng, numbers.Integral)):
        raise InputTypeError(f"{name} must be an integer seed, a numpy.random.Generator or None, got {rng!r}")
    if rng is not None and rng < 0:
        raise ValueError(f"{name} must be a seed >= 0, got {shown(rng)}")
    return np.random.default_rng(None if rng is None else int(rng))


def as_seed(rng, name: str = "rng") -> int:
    """One integer seed standing for ``rng``, so that every use replays the same draws.

    An integer (>= 0) is its own seed; a :class:`numpy.random.Generator`
    (or None) gives one seed drawn from it.
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool | np.bool_) and rng >= 0:
        return int(rng)
    return int(as_rng(rng, name).integers(2**63))


def as_axis(axis, ndim: int, name: str = "axis") -> int:
    """An axis of an array of ``ndim`` dimensions, as a non-negative int."""
    if isinstance(axis, bool | np.bool_) or not isinstance(axis, numbers.Integral):
        raise InputTypeError(f"{name} must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} must lie in [{-ndim}, {ndim - 1}] for an array of {ndim} dimensions, "
                         f"got {shown(axis)}")
    return int(axis) % ndim


def as_mask(mask, shape: tuple, name: str = "mask") -> np.ndarray:
    """A boolean array of exactly ``shape`` (no masked arrays, no numbers)."""
    if isinstance(mask, np.ma.MaskedArray):
        raise InputTypeError(f"{name} must not be a masked array")
    arr = np.asarray(mask)
    if arr.dtype != bool:
        raise InputTypeError(f"{name} must be a boolean array, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr


def as_weights(x, name: str, *, square: bool = False, block: bool = False) -> np.ndarray:
    """An attention matrix: a non-empty 2-D array of non-negative rows that sum to 1 (to 1e-6).

    With ``block``, a block cut from one (some keys left out): rows may sum to less than 1.
    """
    w = as_array(x, name, ndim=2)
    if w.size == 0 or (square and w.shape[0] != w.shape[1]):
        raise ValueError(f"{name} must be a non-empty {'square ' if square else ''}matrix, got shape {w.shape}")
    if (w < 0).any() or (w > 1 + 1e-6).any():
        raise ValueError(f"{name} must lie in [0, 1] (attention weights)")
    sums = w.sum(axis=1)  # (n_queries,)
    if (sums > 1 + 1e-6).any() if block else not np.allclose(sums, 1.0, rtol=0, atol=1e-6):
        raise ValueError(f"{name} must have rows that sum to {'at most ' if block else ''}1 (attention weights)")
    return w


def same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """Raise unless ``a`` and ``b`` have the same length along axis 0."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{name_a} and {name_b} must have the same length, "
            f"got {a.shape[0]} and {b.shape[0]}"
        )


def as_series(optional=(), /, **arrays) -> list:
    """Non-empty 1-D arrays of one common length, by keyword; None passes through for the ``optional`` names."""
    checked = {name: None if x is None and name in optional else as_array(x, name, ndim=1)
               for name, x in arrays.items()}
    given = [(name, arr) for name, arr in checked.items() if arr is not None]
    for name, arr in given:
        if arr.size == 0:
            raise ValueError(f"{name} must hold at least one value")
        same_length(given[0][1], arr, given[0][0], name)
    return list(checked.values())


def finite_result(value, message: str):
    """Return ``value`` (array or float) if it is finite everywhere, else raise ``ValueError(message)``."""
    if not np.isfinite(value).all():
        raise ValueError(message)
    return value


def power_of_two(x: float) -> float:
    """A power of two in (x / 2, x] for ``x > 0`` (1 for ``x = 0``): dividing by it is exact, never overflows."""
    return float(np.ldexp(1.0, np.frexp(x)[1] - 1)) if x > 0 else 1.0


def as_entries(x, name: str, keys, *, series: bool = False) -> dict:
    """The arrays ``x[key]`` of a mapping, each checked as ``name[key]``; other keys are ignored.

    With ``series``, they must be non-empty 1-D arrays of one length (:func:`as_series`).
    """
    if not isinstance(x, Mapping):
        raise InputTypeError(f"{name} must be a mapping with keys {list(keys)}, got {type(x).__name__}")
    missing = [key for key in keys if key not in x]
    if missing:
        raise ValueError(f"{name} lacks {', '.join(map(repr, missing))}")
    if series:
        return dict(zip(keys, as_series(**{f"{name}[{key!r}]": x[key] for key in keys}), strict=True))
    return {key: as_array(x[key], f"{name}[{key!r}]") for key in keys}


def as_sequence(x, name: str):
    """A sequence (list, tuple, range or array), not a string, bytes or mapping; returned as it is."""
    if isinstance(x, str | bytes | Mapping | np.ma.MaskedArray) or not isinstance(x, Sequence | np.ndarray):
        raise InputTypeError(f"{name} must be a sequence, got {type(x).__name__}")
    if isinstance(x, np.ndarray) and x.ndim == 0:  # a number, of no length
        raise InputTypeError(f"{name} must be a sequence, got a 0-d array {x!r}")
    return x


def as_labels(x, name: str, count: int) -> list[str]:
    """``count`` strings (a list or tuple), as a list."""
    if isinstance(x, str | bytes | Mapping) or not isinstance(x, Sequence) or not all(isinstance(v, str) for v in x):
        raise InputTypeError(f"{name} must be a sequence of strings, got {x!r}")
    if len(x) != count:
        raise ValueError(f"{name} must hold {count} labels, got {len(x)}")
    return list(x)


def as_instance(x, name: str, cls):
    """``x`` itself, after checking it is an instance of ``cls``."""
    if not isinstance(x, cls):
        raise InputTypeError(f"{name} must be a {getattr(cls, '__name__', cls)}, got {type(x).__name__}")
    return x


def as_instances(x, name: str, cls) -> list:
    """A non-empty sequence whose items are all instances of ``cls``, as a list."""
    if isinstance(x, str | bytes | Mapping) or not isinstance(x, Sequence):
        raise InputTypeError(f"{name} must be a sequence of {cls.__name__}, got {type(x).__name__}")
    bad = [item for item in x if not isinstance(item, cls)]
    if bad or not x:
        raise InputTypeError(f"{name} must be a non-empty sequence of {cls.__name__}, got {bad[:1] or x!r}")
    return list(x)


@contextlib.contextmanager
def naming(outer: str, *inner: str):
    """Inside the block, an error that names one of ``inner`` (and not ``outer``) gets ``outer: `` first.

    For functions that pass their argument ``outer`` on as another
    function's ``inner`` (a study's ``temperatures`` become the head's
    ``temperature``), so that the error still names the caller's argument.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        if not any(_names(str(exc), name) for name in inner) or _names(str(exc), outer):
            raise
        raise type(exc)(f"{outer}: {exc}") from exc


def _names(message: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) is not None
def as_token_batch(X, y, targets=None):
    """Tokens, values and targets of one signal or of a batch, checked and batched.

    ``X`` has shape (n, d) or (n_signals, n, d) with ``n >= 2``; ``y`` and ``targets``
    (``y`` itself when None) have ``X``'s shape without its last axis.
    Returns arrays of shapes (n_signals, n, d), (n_signals, n), (n_signals, n), with ``n_signals = 1`` for one signal.
    """
    X = as_array(X, "X")
    if X.ndim not in (2, 3) or X.shape[-2] < 2 or X.shape[-1] < 1:
        raise ValueError(f"X must have shape (n, d) or (n_signals, n, d) with n >= 2, got {X.shape}")
    v = as_array(y, "y")
    t = v if targets is None else as_array(targets, "targets")
    for name, arr in (("y", v), ("targets", t)):
        if arr.shape != X.shape[:-1]:
            raise ValueError(f"{name} must have shape {X.shape[:-1]} to match X, got {arr.shape}")
    return (X, v, t) if X.ndim == 3 else (X[None], v[None], t[None])


def as_projections(W_Q, W_K, d: int):
    """``W_Q`` and ``W_K`` as float arrays, after checking both have shape (d, d_k)."""
    W_Q = as_array(W_Q, "W_Q", ndim=2)
    W_K = as_array(W_K, "W_K", ndim=2)
    if W_Q.shape[0] != d or W_K.shape != W_Q.shape:
        raise ValueError(f"W_Q and W_K must both have shape ({d}, d_k), got {W_Q.shape} and {W_K.shape}")
    return W_Q, W_K


def as_token_ids(x, name: str, vocabulary: int, *, ndim=(1,)) -> np.ndarray:
    """Token ids: a non-empty integer array of ``ndim`` dimensions, each in [0, ``vocabulary``).

    Booleans, floats (even whole ones), strings, masked and empty arrays are
    refused, not converted.
    """
    if isinstance(x, np.ma.MaskedArray | str | bytes | Mapping) or not isinstance(x, np.ndarray | Sequence | range):
        raise InputTypeError(f"{name} must be an array of integer token ids, got {x!r}")
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nesting
        raise ValueError(f"{name} must be a rectangular array of token ids") from exc
    if arr.ndim not in ndim or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty {' or '.join(f'{d}-D' for d in ndim)} array of token "
                         f"ids, got shape {arr.shape}")
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "O" and _integers(arr)):
        raise InputTypeError(f"{name} must hold integer token ids, got dtype {arr.dtype}")
    low, high = int(arr.min()), int(arr.max())
    if low < 0 or high >= vocabulary:
        raise ValueError(f"{name} must lie in [0, {vocabulary}) (a vocabulary of {vocabulary} symbols), "
                         f"got {shown(low if low < 0 else high)}")
    return arr.astype(np.intp)


def _integers(objects: np.ndarray) -> bool:
    """Whether an object array holds Python or numpy integers only (no booleans)."""
    return all(isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_) for v in objects.flat)
