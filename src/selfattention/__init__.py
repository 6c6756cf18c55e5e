"""Self-attention, by hand: the math behind the book.

Importing this package needs only numpy and changes no global state.
Plotting helpers live in :mod:`selfattention.figures` (matplotlib) and the
notebook widget in :mod:`selfattention.widgets` (ipywidgets).
"""

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

__version__ = "0.1.0"
