"""Input checks shared by the package's public functions.

Every public function validates its arguments up front, so that bad input
fails with a ``ValueError`` that names the argument, instead of a cryptic
numpy error (or, worse, a silently wrong result) further down.
"""

from __future__ import annotations

import numbers

import numpy as np


def as_array(x, name: str, *, ndim: int | None = None, allow_neg_inf: bool = False) -> np.ndarray:
    """Return ``x`` as a float array after checking its shape and values.

    Parameters
    ----------
    x : array_like
        The value to check.
    name : str
        The argument's name, used in error messages.
    ndim : int, optional
        The required number of dimensions.
    allow_neg_inf : bool
        Whether ``-inf`` is allowed (as a masked score); NaN and ``+inf``
        never are.
    """
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers, got {x!r}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    bad_inf = np.isposinf(arr) if allow_neg_inf else np.isinf(arr)
    if bad_inf.any():
        raise ValueError(f"{name} contains infinite values")
    return arr


def as_positive_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is finite and > 0."""
    value = as_nonnegative_scalar(x, name)
    if value == 0:
        raise ValueError(f"{name} must be positive, got {x!r}")
    return value


def as_nonnegative_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is finite and >= 0."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    value = float(x)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {x!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {x!r}")
    return value


def as_real(x, name: str) -> float:
    """Return ``x`` as a float after checking it is a finite real number (of either sign)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not np.isfinite(x):
        raise ValueError(f"{name} must be a finite real number, got {x!r}")
    return float(x)


def as_count(x, name: str, *, minimum: int = 1) -> int:
    """Return ``x`` as an int after checking it is an integer >= ``minimum``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {x!r}")
    if x < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {x!r}")
    return int(x)


def as_temperatures(x, name: str) -> np.ndarray:
    """Return ``x`` as a non-empty 1-D float array of temperatures, all ``> 0``."""
    taus = as_array(x, name, ndim=1)
    if taus.size == 0:
        raise ValueError(f"{name} must hold at least one temperature")
    if (taus <= 0).any():
        raise ValueError(f"{name} must all be positive, got {float(taus[taus <= 0][0])!r}")
    return taus


def as_seed(rng) -> int:
    """One integer seed standing for ``rng``, so that every use replays the same draws.

    An integer is its own seed; a :class:`numpy.random.Generator` (or None)
    gives one seed drawn from it.
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return int(rng)
    return int(np.random.default_rng(rng).integers(2**63))


def same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """Raise unless ``a`` and ``b`` have the same length along axis 0."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{name_a} and {name_b} must have the same length, "
            f"got {a.shape[0]} and {b.shape[0]}"
        )


def as_token_batch(X, y, targets=None):
    """Tokens, values and targets of one signal or of a batch, checked and batched.

    ``X`` has shape (n, d) or (b, n, d) with ``n >= 2``; ``y`` and ``targets``
    (``y`` itself when None) have ``X``'s shape without its last axis.
    Returns arrays of shapes (b, n, d), (b, n), (b, n), with ``b = 1`` for one signal.
    """
    X = as_array(X, "X")
    if X.ndim not in (2, 3) or X.shape[-2] < 2 or X.shape[-1] < 1:
        raise ValueError(f"X must have shape (n, d) or (b, n, d) with n >= 2, got {X.shape}")
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
