r"""The data of the induction circuit's explorer, embedded in its page at build time.

The explorer (``attention_explorer.js``, kind ``induction``) runs the
hand-built circuit of :mod:`selfattention.induction` in the reader's browser,
with no kernel: a previous-token head, then an induction head, on a sequence
of letters the reader types, each head under the causal mask. Its sliders
and switches: the heads' sharpness (the ``margin`` of
:func:`~selfattention.induction.hand_built_circuit`, both heads') and the
knock-out of the first head. It computes what :func:`circuit_run` computes
here, from the formulas of the package:

* the stream's positions :math:`p_i - 1/2`, :math:`p_i = i/N` for :math:`N` tokens (row 0 the
  start marker, :func:`~selfattention.tokens.positions`);
* layer 1's scaled scores :math:`-(p_i + \delta - p_j)^2 / \tau^{[1]}`,
  :math:`\delta = -1/N`, :math:`\tau^{[1]} = \delta^2 / \text{margin}`,
  its output the symbols :math:`o_j` it averages, written in ``previous``;
* layer 2's scaled scores :math:`o_i \cdot x_{j,\text{previous}}^{[1]}
  \cdot \text{margin}`, its output the symbols it averages, the prediction.
"""

from __future__ import annotations

import json

from .. import defaults, induction, tokens
from .._validation import InputTypeError, as_flag, as_positive_scalar, naming

#: The most tokens a reader may type (the explorer redraws 64 in one frame).
MAX_TOKENS = 64
#: The range and the step of the sharpness slider (the heads' margin).
MARGIN_RANGE = (0.5, 16.0)
MARGIN_STEP = 0.5
#: The explorer's vocabulary: the 26 letters.
VOCABULARY = len(tokens.LETTERS)


#: The length of each half of the starting sequence (the chapter's example).
HALF = 6


def start_text() -> str:
    """The chapter's example: :data:`HALF` random letters, then the same again (the book's seed)."""
    ids = tokens.repeated_sequences(1, HALF, VOCABULARY, rng=defaults.SEED)[0]
    return "".join(tokens.to_text(ids))


def circuit_explorer_data(text=None, margin=induction.MARGIN) -> dict:
    """The explorer's settings: the starting sequence and margin, and the slider's range.

    Parameters
    ----------
    text : str or None
        The starting sequence, 1 to :data:`MAX_TOKENS` letters ``a`` to
        ``z``; ``None`` for :func:`start_text`.
    margin : float
        The starting margin, in :data:`MARGIN_RANGE`.

    Returns
    -------
    dict
    """
    text = start_text() if text is None else text
    ids = tokens.from_text(text, VOCABULARY)  # refuses non-letters by name
    if ids.size > MAX_TOKENS:
        raise ValueError(f"text must hold at most {MAX_TOKENS} letters, got {ids.size}")
    margin = as_positive_scalar(margin, "margin")
    low, high = MARGIN_RANGE
    if not low <= margin <= high:
        raise ValueError(f"margin must be in [{low}, {high}], got {margin!r}")
    return {"layer": "induction", "text": text, "margin": margin,
            "margin_range": list(MARGIN_RANGE), "margin_step": MARGIN_STEP,
            "max_tokens": MAX_TOKENS, "letters": tokens.LETTERS, "start": tokens.START}


def circuit_json(text=None, margin=induction.MARGIN) -> str:
    """:func:`circuit_explorer_data` as compact JSON (floats by ``repr``: the browser reads the same doubles).

    Parameters
    ----------
    text, margin
        As in :func:`circuit_explorer_data`.

    Returns
    -------
    str
    """
    return json.dumps(circuit_explorer_data(text, margin), separators=(",", ":"), allow_nan=False)


def circuit_run(text, margin=induction.MARGIN, *, knocked_out=False) -> induction.CircuitRun:
    """What the explorer shows for a sequence: the hand-built circuit's run on it.

    Parameters
    ----------
    text : str
        Letters ``a`` to ``z``.
    margin : float
        ``> 0``, both heads'.
    knocked_out : bool
        Leave the first layer's output out of the stream.

    Returns
    -------
    CircuitRun
    """
    if not isinstance(text, str):
        raise InputTypeError(f"text must be a string of letters, got {text!r}")
    ids = tokens.from_text(text, VOCABULARY)  # (n,)
    layers = induction.hand_built_circuit(VOCABULARY, ids.size + 1, margin)
    off = [0] if as_flag(knocked_out, "knocked_out") else []
    with naming("text", "tokens"):  # too many letters: the run's memory
        return induction.run_circuit(ids, layers, knocked_out=off)


def circuit_labels(text) -> list[str]:
    """The rows' letters, the start marker first (the heat maps' labels)."""
    return tokens.to_text(tokens.from_text(text, VOCABULARY), start=True)

