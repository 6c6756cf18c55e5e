"""Shared hypothesis strategies for the package's property tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

#: Moderate finite floats: large enough to be interesting, small enough that
#: products of a few of them cannot overflow.
moderate = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)

#: Any finite float, including huge ones (for softmax's stability).
finite = st.floats(allow_nan=False, allow_infinity=False)

#: Positive temperatures over many orders of magnitude.
temperatures = st.floats(min_value=1e-3, max_value=1e3)


#: Matrix dimensions.
sizes = st.integers(1, 6)


def matrices(rows=sizes, cols=sizes, elements=moderate):
    """2-D float arrays with the given row and column counts."""
    return st.tuples(rows, cols).flatmap(
        lambda shape: hnp.arrays(np.float64, shape, elements=elements)
    )


@st.composite
def qkv(draw, elements=moderate):
    """Matching ``(Q, K, V)``: shapes (n_q, d_k), (n_k, d_k), (n_k, d_v)."""
    n_q, n_k, d_k, d_v = (draw(st.integers(1, 5)) for _ in range(4))
    Q = draw(hnp.arrays(np.float64, (n_q, d_k), elements=elements))
    K = draw(hnp.arrays(np.float64, (n_k, d_k), elements=elements))
    V = draw(hnp.arrays(np.float64, (n_k, d_v), elements=elements))
    return Q, K, V


#: Positions on or around the unit interval, as a 1-D array of 1-30 values.
positions = hnp.arrays(
    np.float64,
    st.integers(1, 30),
    elements=st.floats(min_value=-2.0, max_value=2.0, allow_nan=False),
)


@st.composite
def signals_on_positions(draw, min_size=1, max_size=30):
    """A ``(signal, positions)`` pair of equal length."""
    n = draw(st.integers(min_size, max_size))
    pos = draw(hnp.arrays(np.float64, n, elements=st.floats(-2.0, 2.0)))
    sig = draw(hnp.arrays(np.float64, n, elements=st.floats(-10.0, 10.0)))
    return sig, pos


# --- bad input, one strategy per kind of argument (tests/unit/test_bad_input.py) ---------------

#: Values that are not one real number, whatever the argument.
NOT_A_NUMBER = (None, "0.5", b"1", True, np.bool_(False), 0.5 + 0j, np.datetime64("2020-01-01"), [0.5], {"x": 1},
                object(), np.array(0.5), np.ma.masked)
#: Python ints too large for a double; 10**5000 has more digits than Python prints (a message that
#: shows it raises a ValueError of its own, naming no argument).
HUGE_INTS = (10**400, -(10**400), 10**5000, -(10**5000))
#: Real numbers no argument accepts: not finite, or too large for a double.
NOT_FINITE = (float("nan"), float("inf"), -float("inf"), *HUGE_INTS)


def _one_bad_entry(valid: np.ndarray, value):
    """``valid`` as a float array with one entry replaced by ``value``."""
    arr = np.array(valid, dtype=float)
    if arr.size:
        arr.flat[arr.size // 2] = value
    return arr


def bad_arrays(valid, *, neg_inf_ok=False):
    """Arrays like ``valid`` that no real-array argument may accept, or silently convert."""
    valid = np.asarray(valid, dtype=float)
    shape = valid.shape
    bad = [
        _one_bad_entry(valid, np.nan),
        _one_bad_entry(valid, np.inf),
        valid + 1j,  # complex
        np.ma.masked_array(valid, mask=np.ones(shape, bool)),  # masked: its data must not be used
        valid.astype(str),  # numeric strings
        valid.astype(str).tolist(),
        np.full(shape, np.datetime64("2020-01-01")),
        np.full(shape, np.timedelta64(1, "s")),
        np.ones(shape, bool),  # booleans
        None,
        "1.0",
    ]
    if not neg_inf_ok:
        bad.append(_one_bad_entry(valid, -np.inf))
    if valid.size:
        mixed = valid.tolist() if valid.ndim else [valid.item()]
        flat = np.array(mixed, dtype=object)
        flat.flat[0] = True  # one boolean among numbers
        bad += [flat.tolist(), _as_object_list(valid, 10**400), _as_object_list(valid, object())]
    return st.sampled_from(bad)


def _as_object_list(valid: np.ndarray, value):
    obj = np.array(valid, dtype=object)
    obj.flat[0] = value
    return obj.tolist()


def bad_scalars(*extra):
    """Values no real scalar argument accepts, plus the kind's own (``extra``: 0, -1, ...)."""
    return st.sampled_from((*NOT_A_NUMBER, *NOT_FINITE, *extra))


_NOT_INTEGERS = (-1, 2.5, 3.0, np.float64(3.0), "3", True, None, [3], 1 + 0j, np.datetime64(3, "D"))
#: Values no count (an int >= its minimum, >= 0) accepts: floats, strings, booleans, negatives, huge ints.
bad_counts = st.sampled_from((*_NOT_INTEGERS, 2**63, *HUGE_INTS))  # 2**63: one past the largest array length
#: Values no byte count (an int >= 0 without an upper bound: a product of counts) accepts.
bad_byte_counts = st.sampled_from(_NOT_INTEGERS)
#: Values no ``rng`` (a seed >= 0, a Generator or None) accepts.
bad_rngs = st.sampled_from((-1, -(10**5000), 1.5, "seed", True, [1, -2], object(), np.random.RandomState(0), 1j))
#: Values no boolean switch accepts.
bad_flags = st.sampled_from((0, 1, "yes", None, 1.0, [True]))
#: Values no string argument accepts.
bad_strings = st.sampled_from((0, 1.5, None, b"bytes", ["a"]))
#: Values no axis accepts (for 2-D input).
bad_axes = st.sampled_from((2, -3, 10**5000, 1.5, True, "0", None))
#: Values no mapping argument accepts.
bad_mappings = st.sampled_from((None, [], "dict", 3, {}, {"unrelated": 1}))
#: Values no sequence of objects accepts.
bad_sequences = st.sampled_from((None, [], "abc", 3, [1, 2], {"a": 1}))
#: Values no token ids (a non-empty integer array of a vocabulary, 1-D or 2-D) accept.
bad_tokens = st.sampled_from(([], [[]], [2.5], [[2.5, 1.0]], [True], [[True]], [-1], [[-1]], [2**40], [[2**40]],
                              [10**5000], "ab", None, 1, np.ma.masked_array([1]), [[1], [2, 3]], {"a": 1}))
#: Values no list of layer indices (of a circuit, possibly empty) accepts.
bad_indices = st.sampled_from(("0", [2.5], [True], None, [[0]], [-1], [10**5000], [2**40], 3,
                               np.ma.masked_array([0])))
#: Values no matplotlib Axes argument accepts.
bad_axes_objects = st.sampled_from((None, 3, "ax", object()))
#: Values no named region (a key of ``studies.bias_variance.REGIONS``) accepts.
bad_regions = st.sampled_from(("middle", "", 3, None, ["whole"]))
#: Values no symbolic token entry (a sympy expression or a finite real) accepts.
bad_symbols = st.sampled_from(("p", "1", None, float("nan"), float("inf"), True, [1], 1j))


#: Values no list of step numbers (integers >= 0, possibly empty, e.g. the checkpoints of a training) accepts.
bad_steps = st.sampled_from(("0", [2.5], [True], None, [[0]], [-1], [10**5000], 3, np.ma.masked_array([0])))

#: Kinds whose valid value is a sequence (of objects, counts, layer indices, step numbers or token ids).
SEQUENCE_KINDS = ("sequence", "counts", "indices", "steps", "tokens")
#: Kinds whose valid value is an array of real numbers.
ARRAY_KINDS = ("array", "scores", "temperatures")


def wrong_shapes(kind: str, valid) -> list:
    """Values of the wrong shape for an argument of ``kind`` (currently ``valid``), each to be refused by name.

    Where a sequence is expected: a 0-d array (a number that numpy calls an array, which has no length)
    and a ragged list (rows of two lengths, which numpy will not make an array of). Where an array is
    expected: the valid array with one more axis in front, and its first entry as a 0-d array when the
    valid array has axes. Other kinds: none.
    """
    if kind in SEQUENCE_KINDS:
        extra = [np.asarray(valid)[None]] if kind == "tokens" else []  # token ids of one rank more
        return [np.array(5.0), np.array(1), [[0], [0, 1]], *extra]
    if kind not in ARRAY_KINDS or isinstance(valid, dict):
        return []
    arr = np.asarray(valid, dtype=float)
    zero_d = [np.array(arr.flat[0])] if arr.ndim and arr.size else []
    return [arr[None], *zero_d, [[0.5], [0.5, 0.25]]]


def bad_masks(shape):
    """Masks of ``shape`` that attention must refuse: numbers, masked arrays, wrong shapes."""
    ones = np.ones(shape, bool)
    return st.sampled_from((ones.astype(float), ones.astype(int), np.ma.masked_array(ones), ones[:-1],
                            [*ones.tolist(), [True] * shape[1]], "mask"))


# --- the full double range (tests/unit/test_input_audit.py) ----------------------------------

#: Any finite double, subnormals and the largest included.
any_double = st.floats(allow_nan=False, allow_infinity=False)
#: Any positive finite double.
any_positive = st.floats(min_value=0.0, exclude_min=True, allow_infinity=False)
#: Any non-negative finite double.
any_nonnegative = st.floats(min_value=0.0, allow_infinity=False)


def extreme_values(kind: str, valid):
    """Valid values of ``kind`` from the whole double range, shaped like ``valid``; other kinds keep ``valid``."""
    scalars = {"real": any_double, "positive": any_positive, "nonnegative": any_nonnegative,
               "temperature": any_positive}
    if kind in scalars:
        return scalars[kind]
    if kind in ("array", "scores", "temperatures") and np.ndim(valid):
        elements = any_positive if kind == "temperatures" else any_double
        return hnp.arrays(np.float64, np.shape(valid), elements=elements)
    return st.just(valid)


#: The double range's corners: the largest, values whose squares or products overflow or underflow,
#: the smallest subnormal, and zero.
_LARGEST = float(np.finfo(float).max)
_CORNERS = {
    "real": (_LARGEST, -_LARGEST, 1e292, -1e292, 1e154, -1e154, 5e-324, 1e-300, 0.0),
    "positive": (_LARGEST, 1e292, 1e154, 5e-324, 1e-300),
}
_CORNERS["temperature"] = _CORNERS["positive"]
_CORNERS["nonnegative"] = (*_CORNERS["positive"], 0.0)


def extreme_corners(kind: str, valid) -> list | None:
    """Valid values of ``kind`` at the double range's corners, shaped like ``valid``; None for other kinds.

    Arrays are filled with one corner (every entry equal) or are ``valid`` scaled to near the largest,
    to 1e154 (squares near the largest) and to 1e-300 (steps near the smallest), keeping its pattern.
    """
    if kind in _CORNERS:
        return list(_CORNERS[kind])
    if kind not in ("array", "scores", "temperatures") or not np.ndim(valid):
        return None
    v = np.asarray(valid, dtype=float)
    fills = _CORNERS["positive"] if kind == "temperatures" else (_LARGEST, -_LARGEST, 1e292, -1e292)
    return [np.full(v.shape, x) for x in fills] + [v * scale for scale in (1e300, 1e154, 1e-300)]
