"""Self-attention, by hand: the math behind the book.

Importing this package needs only numpy and changes no global state. It is
organised by concept:

* :mod:`~selfattention.core`: the softmax, scaled dot-product attention and its
  masks (the causal mask);
* :mod:`~selfattention.head`: the engineered attention head that smooths a signal;
* :mod:`~selfattention.signals`: the noisy sine it smooths, and a sine with a jump;
* :mod:`~selfattention.kernel`: kernel regression, and choosing the temperature
  by leave-one-out cross-validation;
* :mod:`~selfattention.metrics`: errors and summaries of attention matrices;
* :mod:`~selfattention.defaults`: the settings every page and demo shares;
* :mod:`~selfattention.memory`: the limit on the memory of one n x n computation;
* :mod:`~selfattention.work`: the limit on the pairs of tokens one computation
  scores, for work that grows as n**2 in little memory;
* :mod:`~selfattention.bilateral`: the engineered head whose scores compare values
  as well as positions (the bilateral filter);
* :mod:`~selfattention.positional`: positional encodings as kernels: sinusoidal
  encodings, rotated queries and keys (RoPE), and ALiBi's bias on the scores;
* :mod:`~selfattention.learning`: a head's loss and its gradient, derived by hand;
* :mod:`~selfattention.training`: gradient descent and Adam on that loss;
* :mod:`~selfattention.multihead`: several heads side by side, combined by an
  output projection (multi-head attention);
* :mod:`~selfattention.cost`: what a head costs, its operations and bytes
  counted, and the laws fitted to measured times;
* :mod:`~selfattention.decoding`: producing tokens one at a time, with and
  without a key-value cache;
* :mod:`~selfattention.random_features` and
  :mod:`~selfattention.positive_features`: the Gaussian head from random
  features (cosines, or positive bumps), in time linear in the tokens;
* :mod:`~selfattention.window`: the Gaussian head cut to a local window;
* :mod:`~selfattention.tokens`: sequences of symbols, and the residual stream
  that carries them through layers;
* :mod:`~selfattention.induction`: two heads that work together, a
  previous-token head and an induction head, built by hand;
* :mod:`~selfattention.circuit_learning`: the next-token loss of layers of
  heads and its gradient, derived by hand (``training.fit_circuit`` trains them);
* :mod:`~selfattention.symbolic`: the heads' scores derived with sympy;
  :mod:`~selfattention.spectrum`: the Gaussian kernel as an average of
  cosines (Bochner's theorem) and of bumps, with sympy;
* :mod:`~selfattention.studies`: one module per experiment of the book;
* :mod:`~selfattention.figures`: the book's figures (matplotlib), data passed in;
* :mod:`~selfattention.interactive`: the in-page explorer's data and the
  notebook widget (ipywidgets).
"""

from importlib.metadata import version

from .core import attention, softmax
from .head import gaussian_head, gaussian_head_weights, positional_features
from .kernel import choose_temperature, nadaraya_watson
from .signals import noisy_sine, unit_noise

__all__ = [
    "attention",
    "choose_temperature",
    "gaussian_head",
    "gaussian_head_weights",
    "nadaraya_watson",
    "noisy_sine",
    "positional_features",
    "softmax",
    "unit_noise",
]

#: The installed distribution's version: ``pyproject.toml`` is its one source.
__version__ = version("selfattention")
