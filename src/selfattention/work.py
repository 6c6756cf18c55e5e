r"""How much work one computation of the package may do: checked before it starts.

Some computations hold little memory but do work that grows as ``n**2`` or
faster: the window head (:func:`~selfattention.window.window_head`) scores
each of ``n`` queries against a window of up to ``n`` keys, a block of
queries at a time; the decoders (:mod:`~selfattention.decoding`) score
step ``i``'s query against ``i`` cached keys, or recompute ``i x i``
pairs. Within a few megabytes, ``n = 10**6`` tokens would run for hours.
The memory limit (:mod:`~selfattention.memory`) cannot see this, so every
such function calls :func:`require_work` first, which raises a ``ValueError``
that names the caller's argument, says how many pairs of tokens the call
would score, and gives the limit.

The limit counts pairs scored (a score and an exponential each; the
window head's blocks count their padding too). Like the memory limit it
is a package-level setting, :func:`set_work_limit` (or, for one block of code,
the context manager :func:`work_limit`), held in a
:class:`contextvars.ContextVar`, so that a change made in one thread or
task leaves the others alone. The default, :data:`DEFAULT_LIMIT`, is
fixed rather than a share of this machine's speed, so that a call succeeds
or fails the same way on every machine that runs the book.
"""

from __future__ import annotations

import contextlib
import contextvars
from decimal import Decimal

from ._validation import InputTypeError, as_count

#: The default limit, in pairs scored: 2**30, about 1.1e9. Measured on the
#: book's 2-core machine (processor time, under load): the window head scores
#: about 1e8 pairs a second (some 10 s at the limit), the decoders, a step at a
#: time, about 2.5e7 (some 45 s). The benchmarks' largest calls score 5.4e8
#: (a window of 257 keys on 2**21 tokens) and 3.6e8 (recomputing 1024 tokens).
DEFAULT_LIMIT = 2**30

_LIMIT = contextvars.ContextVar("selfattention_work_limit", default=DEFAULT_LIMIT)


def get_work_limit() -> int:
    """The current limit, in pairs scored."""
    return _LIMIT.get()


def set_work_limit(pairs) -> None:
    """Set the limit, in pairs scored, for the current thread or task (and the tasks it starts).

    Parameters
    ----------
    pairs : int
        At least 1; e.g. ``2**34`` to allow a window head of 131,072 tokens
        that keeps every key.
    """
    _LIMIT.set(as_count(pairs, "pairs"))


def work_limit(pairs):
    """Use another limit, in pairs scored, inside a ``with`` block only.

    Parameters
    ----------
    pairs : int
        At least 1.

    Returns
    -------
    contextlib.AbstractContextManager
        ``with selfattention.work.work_limit(10**6): ...`` runs the block with a
        limit of a million pairs.
    """
    return _limited(as_count(pairs, "pairs"))


@contextlib.contextmanager
def _limited(pairs: int):
    token = _LIMIT.set(pairs)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def require_work(pairs, name: str, what: str) -> None:
    """Raise a ``ValueError`` if a computation would score more than :func:`get_work_limit` pairs.

    Parameters
    ----------
    pairs : int
        The pairs of tokens the computation would score.
    name : str
        The caller's argument that sets the work, named first in the message.
    what : str
        What would be computed, e.g. ``"decoding 100000 tokens with a cache"``.
    """
    pairs = as_count(pairs, "pairs", minimum=0, maximum=None)  # a product of counts: it may pass 2**63
    if not isinstance(name, str) or not isinstance(what, str):
        raise InputTypeError(f"name and what must be strings, got {name!r} and {what!r}")
    if pairs > get_work_limit():
        raise ValueError(f"{name}: {what} would score {_count(pairs)} pairs of tokens, more than the work "
                         f"limit of {_count(get_work_limit())} (selfattention.work.set_work_limit changes it)")


def _count(pairs: int) -> str:
    """``pairs`` in digits below a million, in three significant digits from there (a float would overflow)."""
    return str(pairs) if pairs < 10**6 else f"{Decimal(pairs):.3g}".replace("e+", "e")
