r"""Three heads of one width on many noise draws: Gaussian, cosine and Laplace (ALiBi) kernels side by side.

At the temperature ``tau`` the Gaussian head's rows have the standard
deviation :math:`h = \sqrt{\tau / 2}`. The one-frequency cosine head at the
largest frequency the span allows (:func:`~selfattention.positional.alias_free_frequency`),
with the amplitude :math:`\xi = 2 / (\tau \omega^2)`, has near the diagonal the
same weights; the ALiBi head of slope :math:`\zeta = \sqrt 2 / h` has rows of the
same standard deviation (on a dense grid, away from the ends). On one noise
draw the three smooth about equally well; :func:`errors_on_draws` measures
them over many.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_count, as_counts, as_temperature, finite_result, naming
from ..head import gaussian_head
from ..kernel import temperature_to_bandwidth
from ..metrics import rmse
from ..positional import alias_free_frequency, alibi_head, gaussian_amplitude, sinusoidal_head
from ..signals import noisy_sine


def _weights(positions: np.ndarray, tau: float) -> dict:
    """The three heads' weights, (n, n) each: they depend on the positions only, not on the samples."""
    zeros = np.zeros_like(positions)
    omega = alias_free_frequency(positions)  # pi / span
    with naming("temperature", "amplitudes", "slope"):  # both set from tau
        _, gaussian = gaussian_head(zeros, positions, tau)
        _, cosine = sinusoidal_head(zeros, positions, [omega], [gaussian_amplitude(omega, tau)])
        _, laplace = alibi_head(zeros, positions, np.sqrt(2) / temperature_to_bandwidth(tau))
    return {"gaussian": gaussian, "cosine": cosine, "laplace": laplace}


def errors_on_draws(n, sigma, temperature, seeds) -> dict:
    r"""The error of each of the three heads of one width on the book's sine, with the noise of each seed.

    For the draw :math:`s_i = f(p_i) + \sigma z_i` of each seed
    (:func:`~selfattention.noisy_sine`), the samples stacked as the values
    :math:`V`, every head's output :math:`\text{output} = A V` is set against
    the clean sine:

    .. math:: \operatorname{RMSE} = \sqrt{\tfrac1N \textstyle\sum_i \big(\text{output}_i - f(p_i)\big)^2}

    Parameters
    ----------
    n : int
        ``N``, the number of samples, at least 2.
    sigma : float
        The noise's standard deviation, ``>= 0``.
    temperature : float
        ``tau`` of the Gaussian head, which sets the width of all three.
    seeds : sequence of int
        One noise draw per seed.

    Returns
    -------
    dict of str -> ndarray, shape (r,)
        ``"gaussian"``, ``"cosine"`` and ``"laplace"``: each head's error on each draw.
    """
    n, seeds = as_count(n, "n", minimum=2), as_counts(seeds, "seeds", minimum=0)
    tau = as_temperature(temperature, "temperature")
    draws = [noisy_sine(n, sigma, rng=seed) for seed in seeds]
    positions, clean = draws[0][0], draws[0][1]  # (n,) each: the same for every seed
    noisy = np.array([s for _, _, s in draws])  # (r, n)
    with naming("n", "positions", "signal"):  # the heads' positions are the n samples'
        weights = _weights(positions, tau)
    errors = {}
    for name, A in weights.items():
        with np.errstate(over="ignore", invalid="ignore"):
            outputs = finite_result(noisy @ A.T, "sigma: an output overflows the double range")  # (r, n)
        errors[name] = np.array([rmse(output, clean) for output in outputs])  # (r,)
    return errors
