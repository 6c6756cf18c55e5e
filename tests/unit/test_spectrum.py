"""selfattention.spectrum: sympy's integrals against numerical quadrature, and the identities they claim."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from selfattention import spectrum


def quadrature(values, grid) -> float:
    """The trapezoid rule, on a grid fine and wide enough that its error is far below the tolerances used."""
    return float(np.sum((values[1:] + values[:-1]) / 2 * np.diff(grid)))


@pytest.fixture(scope="module")
def derived():
    return spectrum.frequency_variance()


def test_the_variance_that_gives_the_gaussian_head_is_two_over_tau(derived):
    _, variance = derived
    assert sp.simplify(variance - 2 / spectrum.tau) == 0


@pytest.mark.parametrize(("u", "v"), [(0.0, 1.0), (0.3, 400.0), (0.05, 400.0), (1.2, 2.5)])
def test_the_expected_cosine_is_the_integral_computed_numerically(derived, u, v):
    expectation, _ = derived
    omega = np.linspace(-12 * np.sqrt(v), 12 * np.sqrt(v), 400_001)
    density = np.exp(-(omega**2) / (2 * v)) / np.sqrt(2 * np.pi * v)
    numeric = quadrature(np.cos(omega * u) * density, omega)
    symbolic = float(expectation.subs({spectrum.u: u, spectrum.nu: v}))
    assert symbolic == pytest.approx(numeric, abs=1e-9)
    assert symbolic == pytest.approx(np.exp(-v * u**2 / 2), rel=1e-12)


@pytest.mark.parametrize(("u", "tau"), [(0.0, 0.005), (0.03, 0.005), (0.2, 0.5)])
def test_the_cosines_variance_is_the_numeric_one(u, tau):
    v = 2 / tau
    omega = np.linspace(-12 * np.sqrt(v), 12 * np.sqrt(v), 400_001)
    density = np.exp(-(omega**2) / (2 * v)) / np.sqrt(2 * np.pi * v)
    mean = quadrature(np.cos(omega * u) * density, omega)
    numeric = quadrature(np.cos(omega * u) ** 2 * density, omega) - mean**2
    symbolic = float(spectrum.cosine_variance().subs({spectrum.u: u, spectrum.tau: tau}))
    assert symbolic == pytest.approx(numeric, abs=1e-9)


def test_two_bumps_integrate_to_the_kernel_times_a_constant():
    integral, ratio = spectrum.bump_integral()
    assert sp.simplify(ratio - sp.sqrt(sp.pi * spectrum.tau) / 2) == 0
    x, y, tau = 0.31, 0.27, 0.005
    grid = np.linspace(-1, 2, 600_001)
    numeric = quadrature(np.exp(-2 * (x - grid) ** 2 / tau - 2 * (y - grid) ** 2 / tau), grid)
    symbolic = float(integral.subs({spectrum.x: x, spectrum.y: y, spectrum.tau: tau}))
    assert symbolic == pytest.approx(numeric, rel=1e-9)


def test_the_performers_exponent_is_a_weighted_bump():
    assert spectrum.performer_exponent() == 0
