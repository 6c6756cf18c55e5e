r"""Positional encodings as kernels: sinusoidal encodings, rotated queries and keys (RoPE), ALiBi's bias.

The engineered head (:mod:`~selfattention.head`) gives each token its
position as ``[p, p**2, 1]``. Transformers give it in other ways, and each
way, with hand-set projections, is a head whose scores depend on the
positions through ``p_i - p_j`` only: a kernel.

* **Sinusoidal encodings** (Vaswani et al.): tokens ``[s, PE(p)]`` with
  ``PE(p) = [cos omega_1 p, sin omega_1 p, ..., cos omega_F p, sin omega_F p]``, and
  projections that give the score

  .. math:: q_i \cdot k_j = \xi_1 \cos(\omega_1 (p_i - p_j)) + \dots + \xi_F \cos(\omega_F (p_i - p_j)).

  The original transformer's frequencies, a geometric progression, are
  :func:`transformer_frequencies`.

* **Rotary encodings** (RoPE, Su et al.): tokens ``[s, 1]``, whose query and
  key are rotated, each pair of coordinates by its own angle ``omega p``; the same
  score, from tokens of two numbers whatever ``F``.
* **ALiBi** (Press et al.): tokens ``[s]``, no position in them at all, and
  the bias ``-zeta |p_i - p_j|`` added to the scores: a Laplace kernel.

The cosine heads divide their scores by 1: the amplitudes ``xi_n`` do the
temperature's job. Near the diagonal ``xi cos(omega u) = xi - xi omega**2 u**2 / 2
+ ...``, so one frequency gives the engineered head's Gaussian band at the
temperature ``2 / (xi omega**2)`` (:func:`gaussian_amplitude`); the band decreases
with distance over the whole span of the positions while ``omega`` times the span
is at most ``pi`` (:func:`alias_free_frequency`).

Every head centres its positions first (:func:`~selfattention.head.centre_positions`:
the scores depend on differences only) and refuses inputs on which the
rounding of its scores could move a row of weights by more than
:data:`~selfattention.head.ROUNDING_TOLERANCE`.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    TINY,
    as_array,
    as_count,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_series,
    as_temperature,
    finite_result,
)
from .core import attention
from .head import ROUNDING_TOLERANCE, _weight_shift, centre_positions

_EPS = float(np.finfo(float).eps)


def sinusoidal_encoding(positions, frequencies) -> np.ndarray:
    r"""The sinusoidal encoding of each position, one row per position.

    .. math:: \operatorname{PE}(p) = [\cos \omega_1 p,\ \sin \omega_1 p,\ \dots,\ \cos \omega_F p,\ \sin \omega_F p]

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequencies : array_like, shape (F,)
        ``omega_1, ..., omega_F > 0``, in radians per unit of position.

    Returns
    -------
    ndarray, shape (n, 2 F)
    """
    (p,) = as_series(positions=positions)
    omega = _as_frequencies(frequencies)
    angles = _angles(p, omega)  # (n, F)
    encoding = np.empty((p.size, 2 * omega.size))  # (n, 2F)
    encoding[:, 0::2], encoding[:, 1::2] = np.cos(angles), np.sin(angles)
    return encoding


def sinusoidal_head_weights(amplitudes):
    r"""Projections that turn tokens ``[s, PE(p)]`` into the score of a sum of cosines.

    Each pair ``cos(omega p), sin(omega p)`` of the token goes to its own pair of
    query and key dimensions, scaled by the square root of its amplitude's size
    (the query carries the amplitude's sign), and the identity
    ``cos(omega p_i) cos(omega p_j) + sin(omega p_i) sin(omega p_j) = cos(omega (p_i - p_j))``
    does the rest:

    .. math:: q_i \cdot k_j = \xi_1 \cos(\omega_1 (p_i - p_j)) + \dots + \xi_F \cos(\omega_F (p_i - p_j))

    Parameters
    ----------
    amplitudes : array_like, shape (F,)
        ``xi_1, ..., xi_F``, finite.

    Returns
    -------
    W_Q : ndarray, shape (1 + 2 F, 2 F)
    W_K : ndarray, shape (1 + 2 F, 2 F)
    W_V : ndarray, shape (1 + 2 F, 1)
        ``W_V`` copies the signal, the first column of the token.
    """
    xi = _as_amplitudes(amplitudes)
    # (2F,): sqrt|xi_n| for both coordinates of the pair of frequency n
    root = np.repeat(np.sqrt(np.abs(xi)), 2)
    # (1 + 2F, 2F): the signal's row is 0, the encoding's rows the diagonal
    W_K = np.vstack([np.zeros((1, root.size)), np.diag(root)])
    W_Q = W_K * np.repeat(np.sign(xi), 2)  # the sign of xi_n rides on q
    W_V = np.zeros((root.size + 1, 1))
    W_V[0, 0] = 1.0
    return W_Q, W_K, W_V


def sinusoidal_head(signal, positions, frequencies, amplitudes, *, mask=None):
    r"""Run the head on tokens ``[s, PE(p)]``: a smoother whose kernel is a sum of cosines.

    .. math:: \text{output}_i = \sum_j a_{ij} s_j, \qquad
        a_{ij} \propto \exp\!\big(\xi_1 \cos(\omega_1 (p_i - p_j)) + \dots + \xi_F \cos(\omega_F (p_i - p_j))\big)

    The scores are divided by 1: the amplitudes play the part of ``1 / tau``.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    frequencies : array_like, shape (F,)
        ``omega_n > 0``.
    amplitudes : array_like, shape (F,)
        ``xi_n``, finite.
    mask : array_like of bool, shape (n, n), optional
        Passed to :func:`~selfattention.core.attention`; ``False`` entries get weight 0.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)

    Raises
    ------
    ValueError
        On bad input, beyond the memory limit, or if the rounding of the
        cosines could move the weights by more than
        :data:`~selfattention.head.ROUNDING_TOLERANCE`.
    """
    s, p, omega, xi = _cosine_inputs(signal, positions, frequencies, amplitudes)
    X = np.column_stack([s, sinusoidal_encoding(p, omega)])  # (n, 1 + 2F): [s, PE(p)]
    W_Q, W_K, W_V = sinusoidal_head_weights(xi)
    output, weights = attention(X @ W_Q, X @ W_K, X @ W_V, 1.0, mask=mask)
    _check_cosine_rounding(p, omega, xi, weights)
    return output[:, 0], weights  # (n,), (n, n)


def rotate(vectors, positions, frequencies) -> np.ndarray:
    r"""Rotate each row's pairs of coordinates by the angles of its position (RoPE).

    Each pair of coordinates of row ``i`` (the first and second, the third
    and fourth, ...) is multiplied, as a row, by the rotation by the angle
    ``omega p_i`` of its frequency ``omega`` (the pair's entry of ``frequencies``):

    .. math:: \operatorname{rot}(\omega p_i) = \begin{bmatrix} \cos \omega p_i & \sin \omega p_i \\
        -\sin \omega p_i & \cos \omega p_i \end{bmatrix} .

    Rotations compose by adding angles, and the transpose of one turns it
    back, so each pair contributes to the dot product of a rotated query and
    a rotated key the dot product of the query's unrotated pair, turned by
    ``omega (p_i - p_j)``, with the key's unrotated pair: a function of the
    difference of the positions only, whatever the vectors.

    Parameters
    ----------
    vectors : array_like, shape (n, 2 F)
        Queries or keys, one per row.
    positions : array_like, shape (n,)
    frequencies : array_like, shape (F,)
        ``omega_n > 0``.

    Returns
    -------
    ndarray, shape (n, 2 F)
    """
    V = as_array(vectors, "vectors", ndim=2)
    (p,) = as_series(positions=positions)
    omega = _as_frequencies(frequencies)
    _check_pairs(V, p, omega)
    angles = _angles(p, omega)  # (n, F): omega_n p_i
    cos, sin = np.cos(angles), np.sin(angles)
    # (n, F) each: the two coordinates of every pair
    first, second = V[:, 0::2], V[:, 1::2]
    rotated = np.empty_like(V)  # (n, 2F)
    with np.errstate(over="ignore", invalid="ignore"):
        rotated[:, 0::2] = first * cos - second * sin
        rotated[:, 1::2] = first * sin + second * cos
    return finite_result(rotated, _ROTATED_OVERFLOW)


#: What :func:`rotate` says when a rotated coordinate leaves the double range.
_ROTATED_OVERFLOW = "vectors: a rotated coordinate overflows the double range"


def _check_pairs(V: np.ndarray, p: np.ndarray, omega: np.ndarray) -> None:
    """Refuse ``vectors`` unless they hold one pair of coordinates per frequency for each position."""
    if V.shape != (p.size, 2 * omega.size):
        raise ValueError(f"vectors must have shape (len(positions), 2 len(frequencies)) = "
                         f"{(p.size, 2 * omega.size)}, got {V.shape}")


def rotary_head_weights(amplitudes):
    r"""Projections of tokens ``[s, 1]`` whose rotated queries and keys give a sum of cosines.

    The constant feature goes to the first coordinate of every pair: the
    square root of the pair's amplitude's size (times its sign, in the
    query). Rotated by ``omega p``, that pair is ``[cos omega p, sin omega p]``
    times the same root, the sinusoidal encoding's pair, so with one
    frequency ``omega`` and its amplitude ``xi`` (``F = 1``: the query and
    the key are one pair each)

    .. math:: q_i \operatorname{rot}(\omega p_i) \cdot k_j \operatorname{rot}(\omega p_j)
        = \xi \cos(\omega (p_i - p_j)) ,

    and with several the score is the sum of such terms, one per pair.

    Parameters
    ----------
    amplitudes : array_like, shape (F,)
        ``xi_n``, finite.

    Returns
    -------
    W_Q : ndarray, shape (2, 2 F)
    W_K : ndarray, shape (2, 2 F)
    W_V : ndarray, shape (2, 1)
    """
    xi = _as_amplitudes(amplitudes)
    W_K = np.zeros((2, 2 * xi.size))
    # the constant feature, to the first coordinate of each pair
    W_K[1, 0::2] = np.sqrt(np.abs(xi))
    W_Q = W_K.copy()
    W_Q[1, 0::2] *= np.sign(xi)
    return W_Q, W_K, np.array([[1.0], [0.0]])


def rotary_head(signal, positions, frequencies, amplitudes, *, mask=None):
    r"""Run the RoPE head on tokens ``[s, 1]``: its queries and keys rotated by their positions.

    The same weights as :func:`sinusoidal_head` with the same frequencies
    and amplitudes (to rounding), from tokens of two numbers.

    Parameters
    ----------
    signal, positions, frequencies, amplitudes, mask
        As for :func:`sinusoidal_head`.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
    """
    s, p, omega, xi = _cosine_inputs(signal, positions, frequencies, amplitudes)
    X = np.column_stack([s, np.ones_like(s)])  # (n, 2): [s, 1]
    W_Q, W_K, W_V = rotary_head_weights(xi)
    Q, K = rotate(X @ W_Q, p, omega), rotate(X @ W_K, p, omega)  # (n, 2F) each
    output, weights = attention(Q, K, X @ W_V, 1.0, mask=mask)
    _check_cosine_rounding(p, omega, xi, weights)
    return output[:, 0], weights  # (n,), (n, n)


def alibi_bias(positions, slope) -> np.ndarray:
    r"""ALiBi's bias: a penalty on the scores that grows with the distance.

    .. math:: -\zeta\, |p_i - p_j|

    Parameters
    ----------
    positions : array_like, shape (n,)
    slope : float
        ``zeta >= 0``.

    Returns
    -------
    ndarray, shape (n, n)
        0 on the diagonal, negative elsewhere.

    Raises
    ------
    ValueError
        If a product ``zeta |p_i - p_j|`` overflows the double range.
    """
    (p,) = as_series(positions=positions)
    zeta = as_nonnegative_scalar(slope, "slope")
    memory.require_matrix(p.size, p.size, "positions")
    if zeta == 0:
        return np.zeros((p.size, p.size))
    with np.errstate(over="ignore"):
        bias = -zeta * np.abs(p[:, None] - p[None, :])  # (n, n)
    return finite_result(bias, "slope and positions: the bias -zeta |p_i - p_j| overflows the double range")


def alibi_head(signal, positions, slope, *, mask=None):
    r"""Run the ALiBi head on tokens of one number: the bias alone brings the positions in.

    The tokens are ``x_i = [s_i]`` and ``W_Q = W_K = 0``, so every
    query-key score is 0 and the weights are the bias's alone:

    .. math:: a_{ij} = \frac{\exp(-\zeta\, |p_i - p_j|)}{\sum_l \exp(-\zeta\, |p_i - p_l|)},

    a Laplace kernel, whose rows have the standard deviation ``sqrt(2) / zeta``
    on a dense grid, away from the ends.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    slope : float
        ``zeta >= 0``; 0 gives the plain mean.
    mask : array_like of bool, shape (n, n), optional
        Passed to :func:`~selfattention.core.attention`.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
    """
    s, p = as_series(signal=signal, positions=positions)
    memory.require_matrix(p.size, p.size, "positions")
    # (n,): centred, the distances are as accurate as the spread allows
    centred = centre_positions(p)
    zeta = as_nonnegative_scalar(slope, "slope")
    X = s[:, None]  # (n, 1): the token is the sample
    zero = np.zeros((1, 1))  # W_Q = W_K = 0: no query-key score at all
    bias = alibi_bias(centred, zeta)  # (n, n): -zeta |p_i - p_j|
    output, weights = attention(X @ zero, X @ zero, X, 1.0, mask=mask,
                                bias=bias)
    _check_alibi_rounding(centred, zeta, weights, np.ptp(p))
    return output[:, 0], weights  # (n,), (n, n)


def _check_alibi_rounding(centred, zeta: float, weights, span: float) -> None:
    """Refuse a slope for which the rounding of the distances could move :func:`alibi_head`'s weights."""
    with np.errstate(over="ignore"):  # each |p_i - p_j| is off by at most 3 eps P, times zeta
        eta = 4 * _EPS * zeta * float(np.max(np.abs(centred)))
    _refuse(eta, weights, f"slope {zeta:.3g} is too large for positions spanning {span:.3g}")


def gaussian_amplitude(frequency, temperature) -> float:
    r"""The amplitude whose cosine matches the Gaussian band at ``temperature`` near the diagonal.

    .. math:: \xi \cos(\omega u) = \xi - \tfrac12 \xi\, \omega^2 u^2 + \dots,
        \qquad -\tfrac12 \xi\, \omega^2 u^2 = -\frac{u^2}{\tau}
        \iff \xi = \frac{2}{\tau\, \omega^2}

    (``u = p_i - p_j``; the constant ``xi`` is the same for every key of a
    row, which the softmax ignores).

    Parameters
    ----------
    frequency : float
        ``omega > 0``.
    temperature : float
        ``tau > 0`` of the Gaussian head.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming frequency and temperature when ``xi`` overflows, or underflows
        below the smallest normal double (a zero amplitude would make the
        head uniform).
    """
    omega = as_temperature(frequency, "frequency")
    tau = as_temperature(temperature, "temperature")
    with np.errstate(over="ignore"):
        xi = np.float64(2.0) / tau / omega / omega  # divided in turn: omega**2 alone may underflow to 0
    finite_result(xi, "frequency and temperature: the amplitude 2 / (tau omega**2) overflows")
    if xi < TINY:  # 0 or subnormal: a zero amplitude makes the head uniform, a subnormal one has lost its digits
        raise ValueError(f"frequency and temperature: the amplitude 2 / (tau omega**2) underflows below {TINY:.6g} "
                         f"(the smallest normal double) at frequency {omega:.6g} and temperature {tau:.6g}")
    return float(xi)


def alias_free_frequency(positions) -> float:
    r"""The largest frequency whose cosine decreases over the whole span of the positions.

    .. math:: \omega \, (\max_j p_j - \min_j p_j) \le \pi

    ``cos(omega u)`` falls from 1 at ``u = 0`` to -1 at ``u = pi / omega``
    and rises again after: beyond that distance a key farther away would get
    more weight than a nearer one (distances ``u`` and ``2 pi / omega - u``
    share one score). With every frequency at most this one and every
    amplitude positive, a sum of cosines decreases with the distance over
    the whole span.

    Parameters
    ----------
    positions : array_like, shape (n,)
        At least two different positions.

    Returns
    -------
    float
        ``pi`` divided by the span of the positions.
    """
    (p,) = as_series(positions=positions)
    half_span = float(np.max(p) / 2 - np.min(p) / 2)  # halved, so that it cannot overflow
    if half_span == 0:
        raise ValueError("positions must hold at least two different positions")
    with np.errstate(over="ignore"):
        omega = (np.pi / 2) / half_span
    return float(finite_result(omega, "positions: their span is too small for pi / span to be a double"))


def transformer_frequencies(count, base=10000.0) -> np.ndarray:
    r"""The frequencies of the original transformer's sinusoidal encoding, in radians per token.

    Vaswani et al. encode position ``pos`` (in tokens) by ``sin(pos / base**(2 i / d_model))`` and
    ``cos(pos / base**(2 i / d_model))`` for ``i = 0, ..., d_model / 2 - 1``, with ``base = 10000``:
    ``F = d_model / 2`` frequencies in a geometric progression from 1 down, each the one before divided
    by ``base**(1 / F)``,

    .. math:: \omega_1, \omega_2, \dots, \omega_F = 1,\ \text{base}^{-1/F},\ \dots,\ \text{base}^{-(F-1)/F},

    whose wavelengths ``2 pi / omega`` run from ``2 pi`` to nearly ``2 pi base`` tokens.

    Parameters
    ----------
    count : int
        ``F >= 1``, the number of frequencies (half the width of the encoding).
    base : float
        Greater than 1; 10000 in the original transformer.

    Returns
    -------
    ndarray, shape (F,)
        Decreasing from 1, all positive.
    """
    F = as_count(count, "count")
    memory.require(8 * F, "count", f"{F} frequencies")
    b = as_positive_scalar(base, "base")
    if not b > 1:
        raise ValueError(f"base must be greater than 1, so that the frequencies fall, got {base!r}")
    return b ** (-np.arange(F) / F)  # (F,): at least 1 / b > 0, never below the double range


# --- checks shared by the cosine heads ---------------------------------------------------------


def _as_frequencies(frequencies) -> np.ndarray:
    omega = as_array(frequencies, "frequencies", ndim=1)
    if omega.size == 0 or (omega <= 0).any():
        raise ValueError(f"frequencies must be a non-empty list of positive numbers, got {omega!r}")
    return omega


def _as_amplitudes(amplitudes) -> np.ndarray:
    xi = as_array(amplitudes, "amplitudes", ndim=1)
    if xi.size == 0:
        raise ValueError("amplitudes must hold at least one amplitude")
    return xi


def _angles(p: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """``omega_n p_i``, (n, F), refused by name if one overflows."""
    with np.errstate(over="ignore"):
        angles = p[:, None] * omega[None, :]  # (n, F)
    return finite_result(angles, "positions and frequencies: an angle omega p overflows the double range")


def _cosine_inputs(signal, positions, frequencies, amplitudes):
    """The cosine heads' arguments checked, the positions centred (their scores depend on differences only)."""
    s, p = as_series(signal=signal, positions=positions)
    omega, xi = _as_frequencies(frequencies), _as_amplitudes(amplitudes)
    if omega.size != xi.size:
        raise ValueError(f"frequencies and amplitudes must have the same length, got {omega.size} and {xi.size}")
    memory.require_matrix(p.size, p.size, "positions")
    with np.errstate(over="ignore"):
        bound = 2 * float(np.sum(np.abs(xi)))  # every score is at most sum |xi_n|; twice that leaves room to round
    if not np.isfinite(bound):
        raise ValueError("amplitudes: the sum of their sizes bounds the scores and overflows the double range")
    return s, centre_positions(p), omega, xi


def _check_cosine_rounding(centred, omega, xi, weights) -> None:
    r"""Raise unless the rounding of the cosine scores moves every row of weights by at most the tolerance.

    Each angle ``omega_n p`` is rounded to ``eps/2`` of itself and each
    cosine or sine evaluated to ``eps``, so an encoding entry is off by at
    most ``eps (1 + omega_n P)`` (``P = max |p|`` after centring); with the
    square roots, the products and the sum of ``2F`` terms, every score is
    off by at most

    .. math:: \eta = (8 + 2F)\, \text{eps} \sum_n |\xi_n| (1 + \omega_n P).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        P = float(np.max(np.abs(centred)))
        eta = (8 + 2 * omega.size) * _EPS * float(np.sum(np.abs(xi) * (1 + omega * P)))
    _refuse(eta, weights, f"amplitudes up to {np.max(np.abs(xi)):.3g} with frequencies up to {np.max(omega):.3g} "
                          f"are too large for positions spanning {2 * P:.3g}")


def _refuse(eta: float, weights: np.ndarray, what: str) -> None:
    if not np.isfinite(eta) or _weight_shift(eta, weights) > ROUNDING_TOLERANCE:
        raise ValueError(f"{what}: the rounding of the scores could move the weights by more than "
                         f"{ROUNDING_TOLERANCE:g}")
