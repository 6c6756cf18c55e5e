r"""What one layer of a transformer costs, part by part, and what its key-value cache holds.

A layer of ``M`` heads on ``n`` tokens of width ``d = d_model`` (``d_k = d_v =
d_model / M`` each) multiplies every token by four ``d x d`` projections (queries, keys,
values and the output's), scores every pair of tokens in every head and
averages the values, and then runs each token through an MLP of hidden
width ``d_ff`` (``matrices`` matrices of ``d x d_ff``: two in the original
transformer, with ``d_ff = 4 d``; three in a gated MLP such as SwiGLU):

==============  ===========================  ===================  ===========================
part            multiply-adds                evaluations          bytes it produces
==============  ===========================  ===================  ===========================
projections     ``4 n d**2``                 0                    ``8 * 4 n d`` (Q, K, V, out)
attention       ``2 n**2 d`` (``QK^T``, AV)  ``M n**2`` exp       ``8 M n**2`` (every weight)
MLP             ``matrices * n d d_ff``      ``n d_ff``           ``8 n d_ff`` (its hidden layer)
==============  ===========================  ===================  ===========================

The projections and the MLP grow as ``n d**2``, attention as ``n**2 d``:
attention's multiply-adds pass the projections' from ``n = 2 d`` on, and
the projections' and the MLP's together from ``n = 2 d + matrices d_ff / 2``
(``6 d`` for two matrices of ``4 d``).

While a model writes, it keeps every earlier token's key and value in each
layer and each key-value head: :func:`kv_cache_bytes`,
``2 layers M_kv d_k n`` numbers. Multi-query attention (one key-value head
shared by every query head) and grouped-query attention (``M_kv`` groups)
divide it by ``M / M_kv``; a sliding window of ``m`` keys keeps at most
``m`` tokens, so its cache stops growing at ``m``.
"""

from __future__ import annotations

from types import MappingProxyType

from ._validation import as_count
from .cost import DOUBLE, Cost

#: A published configuration: Llama 2 7B. Its layers, heads and width are
#: LLaMA's 6.7B model's (Touvron et al. 2023a, Table 2), whose architecture
#: Llama 2 keeps, with a context of 4,096 tokens and multi-head attention at
#: this size (Touvron et al. 2023b, Table 1 and Appendix A.2.1).
LLAMA_2_7B = MappingProxyType({"name": "Llama 2 7B", "layers": 32, "heads": 32, "d_model": 4096,
                               "context": 4096})
#: The key-value projections of the grouped-query attention of Llama 2's
#: 34B and 70B models (Touvron et al. 2023b, Appendix A.2.1).
LLAMA_2_GQA_KV_HEADS = 8
#: Bytes of a 16-bit number, as models are usually served.
HALF = 2


def layer_cost(n, d_model, heads, d_ff, matrices=2) -> dict:
    r"""The multiply-adds, evaluations and bytes of one transformer layer on ``n`` tokens, part by part.

    Projections ``4 n d_model**2``, attention ``2 n**2 d_model``, MLP
    ``matrices n d_model d_ff`` multiply-adds.

    Parameters
    ----------
    n : int
        Tokens, at least 1.
    d_model : int
        The width of a token; a multiple of ``heads``.
    heads : int
        ``M``, the heads of the layer (``d_k = d_v = d_model / M`` each).
    d_ff : int
        The MLP's hidden width.
    matrices : int
        The MLP's ``d x d_ff`` matrices: 2 (``W_1``, ``W_2``), or 3 for a gated MLP.

    Returns
    -------
    dict of str to Cost
        ``"projections"``, ``"attention"`` and ``"mlp"``.
    """
    n, d, heads = as_count(n, "n"), as_count(d_model, "d_model"), as_count(heads, "heads")
    d_ff, matrices = as_count(d_ff, "d_ff"), as_count(matrices, "matrices")
    if d % heads:
        raise ValueError(f"d_model must be a multiple of heads, got {d} and {heads}")
    return {
        "projections": Cost(4 * n * d * d, 0, DOUBLE * 4 * n * d),
        "attention": Cost(2 * n * n * d, heads * n * n, DOUBLE * heads * n * n),
        "mlp": Cost(matrices * n * d * d_ff, n * d_ff, DOUBLE * n * d_ff),
    }


def attention_dominates_from(d_model, d_ff=None, matrices=2) -> float:
    r"""The ``n`` from which attention's multiply-adds pass the rest of the layer's.

    ``2 n**2 d`` against ``n d (4 d + matrices d_ff)``:

    ``n* = (4 d_model + matrices d_ff) / 2``, ``2 d_model`` without the MLP.

    Parameters
    ----------
    d_model : int
        The width of a token.
    d_ff : int, optional
        The MLP's hidden width; None leaves the MLP out (the projections alone).
    matrices : int
        The MLP's ``d x d_ff`` matrices.

    Returns
    -------
    float
    """
    d, matrices = as_count(d_model, "d_model"), as_count(matrices, "matrices")
    mlp = 0 if d_ff is None else matrices * as_count(d_ff, "d_ff")
    return (4 * d + mlp) / 2


def kv_cache_bytes(n, layers, kv_heads, d_head, bytes_per_number=2, window=None) -> int:
    r"""The bytes of a key-value cache of ``n`` tokens: a key and a value per token, layer and key-value head.

    .. math:: 2 \cdot \text{layers} \cdot M_{\text{kv}} \cdot d_k \cdot \min(n, m) \cdot \text{bytes}

    Parameters
    ----------
    n : int
        Tokens read or written so far, at least 1.
    layers : int
        The model's layers.
    kv_heads : int
        ``M_kv``: ``M`` for multi-head attention, 1 for multi-query attention,
        the groups of grouped-query attention.
    d_head : int
        The width of one head's key (and value).
    bytes_per_number : int
        2 for 16-bit numbers, as models are usually served; 8 for the book's doubles.
    window : int, optional
        ``m``: a sliding window keeps only the last ``m`` tokens. None: every token.

    Returns
    -------
    int
    """
    n, layers = as_count(n, "n"), as_count(layers, "layers")
    kv_heads, d_head = as_count(kv_heads, "kv_heads"), as_count(d_head, "d_head")
    kept = n if window is None else min(n, as_count(window, "window"))
    return 2 * layers * kv_heads * d_head * kept * as_count(bytes_per_number, "bytes_per_number")
