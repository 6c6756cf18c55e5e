r"""Token sequences, and the residual stream that carries them through layers.

A token is a symbol of a vocabulary of ``d_vocab`` symbols, numbered
``0 .. d_vocab - 1`` (shown as the letters ``a, b, c, ...``). A sequence of
``N`` tokens become ``N + 1`` rows of the residual stream: the first
row is the start marker, which holds no symbol, then one row per token.
Row ``i`` is the concatenation of four subspaces (:class:`Stream`):

- ``token``: the symbol, one-hot, :math:`o_i` (zero for the start marker);
- ``position``: the book's position features ``[p, p**2, 1]``, with
  :math:`p_i = i / N` for rows :math:`i = 0 .. N`, :math:`N` tokens (the start
  marker's row 0 at 0), centred on 0 as the heads centre them
  (:func:`~selfattention.head.centre_positions`);
- ``previous`` and ``prediction``: zero when the stream starts; the layers
  add their outputs there (:mod:`~selfattention.induction`), and the
  ``prediction`` subspace of the last row is read as the next symbol's
  scores.

Each layer adds its output to the stream instead of replacing it, so what
one layer wrote is still there for the next to read.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from . import memory
from ._validation import InputTypeError, as_count, as_counts, as_flag, as_rng, as_token_ids, naming
from .head import centre_positions

#: The symbols shown for token ids 0, 1, 2, ...: the 26 lower-case letters.
LETTERS = string.ascii_lowercase
#: The symbol shown for the start marker.
START = "^"


@dataclass(frozen=True)
class Stream:
    """The layout of the residual stream for a vocabulary of ``vocabulary`` symbols.

    Columns: ``token`` (d_vocab), ``position`` (3: ``p, p**2, 1``),
    ``previous`` (d_vocab) and ``prediction`` (d_vocab).
    """

    vocabulary: int

    def __post_init__(self):
        object.__setattr__(self, "vocabulary", as_count(self.vocabulary, "vocabulary"))
        memory.require(8 * self.d_model**2, "vocabulary",
                       f"a {self.d_model} x {self.d_model} projection")

    @property
    def token(self) -> slice:
        """The one-hot symbol :math:`o_i`."""
        return slice(0, self.vocabulary)

    @property
    def position(self) -> slice:
        """``[p, p**2, 1]``, the centred position and its square."""
        return slice(self.vocabulary, self.vocabulary + 3)

    @property
    def previous(self) -> slice:
        """Where the previous-token layer writes."""
        return slice(self.vocabulary + 3, 2 * self.vocabulary + 3)

    @property
    def prediction(self) -> slice:
        """Where the induction layer writes: the scores of the next symbol."""
        return slice(2 * self.vocabulary + 3, self.d_model)

    @property
    def d_model(self) -> int:
        """The width of the stream: ``3 d_vocab + 3``."""
        return 3 * self.vocabulary + 3


def positions(n_positions) -> np.ndarray:
    r"""The positions :math:`p_i = i / N` of the rows :math:`i = 0 .. N` (``n_positions`` :math:`= N + 1`), centred.

    Parameters
    ----------
    n_positions : int
        ``>= 2``: the start marker and the tokens, :math:`N + 1` rows.

    Returns
    -------
    ndarray, shape (N + 1,)
        ``p_i - 1/2``, from ``-1/2`` to ``1/2``.
    """
    n = as_count(n_positions, "n_positions", minimum=2)
    memory.require(16 * n, "n_positions", f"{n} positions")
    return centre_positions(np.linspace(0.0, 1.0, n))  # (N + 1,)


def residual_stream(tokens, vocabulary) -> np.ndarray:
    """The residual stream of a sequence (or a batch) before any layer.

    Parameters
    ----------
    tokens : array_like of int, shape (n,) or (count, n)
        Token ids in ``[0, vocabulary)``.
    vocabulary : int
        ``d_vocab >= 1``.

    Returns
    -------
    ndarray, shape (n + 1, d_model) or (count, n + 1, d_model)
        Row 0 the start marker, then one row per token (:class:`Stream`).
    """
    stream = Stream(vocabulary)
    ids = as_token_ids(tokens, "tokens", stream.vocabulary, ndim=(1, 2))
    batch = ids.reshape(-1, ids.shape[-1])  # (count, n)
    count, N = batch.shape[0], batch.shape[1] + 1
    memory.require(8 * count * N * stream.d_model, "tokens",
                   f"{count} streams of {N} rows of width {stream.d_model}")
    X = np.zeros((count, N, stream.d_model))  # (count, N, d_model)
    seq, rows = np.arange(count)[:, None], np.arange(1, N)[None, :]
    X[seq, rows, batch] = 1.0  # one-hot symbols; row 0 stays empty
    p = positions(N)  # (N,)
    X[:, :, stream.position] = np.stack([p, p**2, np.ones(N)], axis=1)
    return X[0] if ids.ndim == 1 else X


def random_sequences(count, length, vocabulary, *, rng=None) -> np.ndarray:
    """``count`` sequences of ``length`` tokens drawn uniformly and independently.

    Parameters
    ----------
    count, length : int
    vocabulary : int
        The symbols are ``0 .. vocabulary - 1``.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray of int, shape (count, length)
    """
    count, length = as_count(count, "count"), as_count(length, "length")
    vocabulary = as_count(vocabulary, "vocabulary")
    memory.require(8 * count * length, "count and length",
                   f"{count} sequences of {length} tokens")
    return as_rng(rng).integers(0, vocabulary, size=(count, length))


def repeated_sequences(count, half, vocabulary, *, rng=None) -> np.ndarray:
    """Random sequences whose second half repeats the first.

    Parameters
    ----------
    count : int
    half : int
        The length of each half.
    vocabulary : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray of int, shape (count, 2 half)
    """
    with naming("half", "length"):
        first = random_sequences(count, as_count(half, "half"), vocabulary, rng=rng)
    return np.concatenate([first, first], axis=1)  # (count, 2 half)


def periodic_sequences(count, length, periods, vocabulary, *,
                       rng=None) -> np.ndarray:
    """Random sequences that repeat with a period drawn from ``periods``.

    Each sequence draws its period uniformly from ``periods``, then that
    many random tokens, repeated until ``length`` tokens.

    Parameters
    ----------
    count, length : int
    periods : sequence of int
        The periods to draw from, each at least 1.
    vocabulary : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray of int, shape (count, length)
    """
    choices = as_counts(periods, "periods")
    gen = as_rng(rng)
    tokens = random_sequences(count, length, vocabulary, rng=gen)
    h = gen.choice(np.array(choices), size=tokens.shape[0])  # (count,)
    index = np.arange(tokens.shape[1])[None, :] % h[:, None]
    return np.take_along_axis(tokens, index, axis=1)  # (count, length)


def from_text(text, vocabulary=26) -> np.ndarray:
    """Token ids of a string of letters: ``"abca"`` gives ``[0, 1, 2, 0]``.

    Parameters
    ----------
    text : str
        Letters among the first ``vocabulary`` of :data:`LETTERS`.
    vocabulary : int
        At most 26.
    """
    vocabulary = as_count(vocabulary, "vocabulary", maximum=len(LETTERS))
    if not isinstance(text, str):
        raise InputTypeError(f"text must be a string of letters, got {text!r}")
    if not text:
        raise ValueError("text must hold at least one letter")
    bad = sorted(set(text) - set(LETTERS[:vocabulary]))
    if bad:
        raise ValueError(f"text must use the letters {LETTERS[:vocabulary]!r} only, "
                         f"got {''.join(bad)!r}")
    return np.array([LETTERS.index(c) for c in text])  # (n,)


def to_text(tokens, *, start=False) -> list[str]:
    """The letters of token ids, with the start marker first if ``start``.

    Parameters
    ----------
    tokens : array_like of int, shape (n,)
        Ids below 26.
    start : bool
        Put :data:`START` first, for the stream's row 0.

    Returns
    -------
    list of str
    """
    ids = as_token_ids(tokens, "tokens", len(LETTERS))
    return [START] * as_flag(start, "start") + [LETTERS[i] for i in ids]
