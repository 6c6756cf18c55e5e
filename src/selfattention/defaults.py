"""The book's shared defaults: one place for the settings every chapter, figure,
widget and the in-page explorer use, so that they all show the same signal.
"""

from ._validation import as_count, as_nonnegative_scalar, as_positive_scalar

#: Seed of the book's noise realisation.
SEED = 1729
#: Default number of samples.
N = 100
#: Default noise standard deviation.
SIGMA = 0.3
#: Default temperature of the engineered head.
TEMPERATURE = 0.005
#: Number of periods of the sine on [0, 1].
PERIODS = 1
#: Slider ranges (inclusive) of the interactive demos.
N_RANGE = (5, 1000)
SIGMA_RANGE = (0.0, 1.5)
#: From 1e-8, where the attention matrix is the identity even at N = 1000
#: (neighbours 1e-3 apart get weight exp(-1e-6 / 1e-8) = exp(-100)), to 10,
#: where it is nearly uniform.
TEMPERATURE_RANGE = (1e-8, 10.0)
#: The offset slider of the derivative layer's explorer (two heads at +delta and -delta), and its
#: step: from a few grid steps at N = 1000 to a quarter of the interval.
OFFSET_RANGE = (0.005, 0.25)
OFFSET_STEP = 0.005
#: That explorer's temperature slider. It starts at 1e-3 (a bandwidth of 0.022) rather than at 1e-8:
#: the package rounds the expanded square of its scores to about eps (max|p| + delta)**2, and
#: dividing by tau >= 1e-3 keeps the change this makes to a weight near 1e-13, well below the 1e-12
#: to which the browser tests hold the explorer to the package. With the largest offset it also keeps
#: exp(-delta**2 / tau), the least a row's largest entry can be in the explorer's band, far from underflow.
LAYER_TEMPERATURE_RANGE = (1e-3, 0.1)


def check_in_ranges(n, sigma, temperature):
    """Check a demo's parameters against the slider ranges above.

    Parameters
    ----------
    n : int
    sigma : float
    temperature : float

    Returns
    -------
    n : int
    sigma : float
    temperature : float
        The parameters, converted.

    Raises
    ------
    ValueError
        Naming the first parameter that is of the wrong type or out of range.
    """
    n, sigma = check_sample_ranges(n, sigma)
    return n, sigma, _in_range(as_positive_scalar(temperature, "temperature"), "temperature", TEMPERATURE_RANGE)


def check_layer_ranges(n, sigma, temperature, offset):
    """:func:`check_in_ranges` for the derivative layer's explorer, with its own temperature range and the offset.

    Parameters
    ----------
    n : int
    sigma : float
    temperature : float
    offset : float

    Returns
    -------
    n : int
    sigma : float
    temperature : float
    offset : float
    """
    n, sigma = check_sample_ranges(n, sigma)
    tau = _in_range(as_positive_scalar(temperature, "temperature"), "temperature", LAYER_TEMPERATURE_RANGE)
    return n, sigma, tau, _in_range(as_positive_scalar(offset, "offset"), "offset", OFFSET_RANGE)


def check_sample_ranges(n, sigma):
    """:func:`check_in_ranges` for the demos that take no temperature.

    Parameters
    ----------
    n : int
    sigma : float

    Returns
    -------
    n : int
    sigma : float
    """
    n = _in_range(as_count(n, "n"), "n", N_RANGE)
    return n, _in_range(as_nonnegative_scalar(sigma, "sigma"), "sigma", SIGMA_RANGE)


def _in_range(value, name: str, bounds):
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in the slider range [{low}, {high}], got {value!r}")
    return value
