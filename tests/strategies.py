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
