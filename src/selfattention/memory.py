r"""How much memory one computation of the package may allocate: checked before allocating.

Attention builds an ``(n_queries, n_keys)`` matrix of weights, so the
engineered head on ``n`` tokens, and everything built on it, needs memory that
grows as ``n**2``: at ``n = 20,000`` one matrix of doubles is 3 GiB, at
``n = 200,000`` it is 300 GiB. Rather than start such a computation and die
in the allocator (a ``MemoryError`` after seconds of work, or the operating
system killing the process), every function that builds large arrays calls
:func:`require` first, which raises a ``ValueError`` that names the caller's
argument, says what ``n`` asks for and how much memory that needs, and gives
the limit.

The limit is a package-level setting, :func:`set_limit` (or, for one block of
code, the context manager :func:`limit`), not an argument of every function:
the matrices are built deep inside the studies (``monte_carlo_parts`` calls
``gaussian_head``, which calls ``attention``), and one setting reaches every
level without threading an argument through thirty signatures. It is held in
a :class:`contextvars.ContextVar`, so a change made in one thread or task
leaves the others alone. The default, :data:`DEFAULT_LIMIT`, is fixed rather
than a share of this machine's memory, so that a call succeeds or fails the
same way on every machine that runs the book.
"""

from __future__ import annotations

import contextlib
import contextvars
from decimal import Decimal

from ._validation import InputTypeError, as_count

#: The default limit, in bytes: 4 GiB, a tenth of what a laptop may have, and
#: far above the book's largest computation (N = 1000: 8 MB per matrix).
DEFAULT_LIMIT = 4 * 2**30
#: Bytes per entry budgeted for an ``(n_queries, n_keys)`` attention. Its
#: measured peak is about 9: the weights (8 bytes, computed in place from the
#: scores) and a boolean mask (1); the budget leaves room for what the studies
#: hold beside them (a second n x n matrix, its products). ``tests/unit/test_memory.py``
#: measures the peak with :mod:`tracemalloc` and checks that it stays below.
BYTES_PER_ENTRY = 24

_LIMIT = contextvars.ContextVar("selfattention_memory_limit", default=DEFAULT_LIMIT)


def get_limit() -> int:
    """The current limit, in bytes."""
    return _LIMIT.get()


def set_limit(nbytes) -> None:
    """Set the limit, in bytes, for the current thread or task (and the tasks it starts).

    Parameters
    ----------
    nbytes : int
        At least 1; e.g. ``16 * 2**30`` to allow matrices of 16 GiB.
    """
    _LIMIT.set(as_count(nbytes, "nbytes"))


def limit(nbytes):
    """Use another limit, in bytes, inside a ``with`` block only.

    Parameters
    ----------
    nbytes : int
        At least 1.

    Returns
    -------
    contextlib.AbstractContextManager
        ``with selfattention.memory.limit(2**20): ...`` runs the block with a 1 MiB limit.
    """
    return _limited(as_count(nbytes, "nbytes"))


@contextlib.contextmanager
def _limited(nbytes: int):
    token = _LIMIT.set(nbytes)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def require(nbytes: int, name: str, what: str) -> None:
    """Raise a ``ValueError`` if a computation needs more than :func:`get_limit` bytes.

    Parameters
    ----------
    nbytes : int
        The bytes the computation would allocate at its peak.
    name : str
        The caller's argument that sets the size, named first in the message.
    what : str
        What would be allocated, e.g. ``"a 20000 x 20000 attention matrix (n = 20000)"``.
    """
    nbytes = as_count(nbytes, "nbytes", minimum=0, maximum=None)  # a product of counts: it may pass 2**63
    if not isinstance(name, str) or not isinstance(what, str):
        raise InputTypeError(f"name and what must be strings, got {name!r} and {what!r}")
    if nbytes > get_limit():
        raise ValueError(
            f"{name}: {what} would need about {_size(nbytes)} at its peak, more than the memory limit "
            f"of {_size(get_limit())} (selfattention.memory.set_limit changes it)"
        )


def require_matrix(n_rows: int, n_cols: int, name: str, *, count: int = 1, bytes_per_entry=BYTES_PER_ENTRY) -> None:
    """:func:`require` for ``count`` matrices of ``n_rows`` x ``n_cols`` entries.

    Parameters
    ----------
    n_rows, n_cols : int
        The shape of one matrix.
    name : str
        The caller's argument that sets the size.
    count : int
        How many such matrices are held at once.
    bytes_per_entry : int
        Bytes per entry at the peak; :data:`BYTES_PER_ENTRY` (an attention) by default.
    """
    n_rows, n_cols = as_count(n_rows, "n_rows", minimum=0), as_count(n_cols, "n_cols", minimum=0)
    count, bytes_per_entry = as_count(count, "count", minimum=0), as_count(bytes_per_entry, "bytes_per_entry")
    what = f"{count} x " if count > 1 else "a "
    what += f"{n_rows} x {n_cols} attention matrix" + (f" (n = {n_rows})" if n_rows == n_cols else "")
    require(count * n_rows * n_cols * bytes_per_entry, name, what)


def _size(nbytes: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{Decimal(nbytes) / size:.3g} {unit}"  # a float would overflow from 2**1024 bytes on
    return f"{nbytes} bytes"
