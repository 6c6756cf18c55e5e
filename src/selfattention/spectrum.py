r"""The Gaussian kernel as an average, derived with sympy (Bochner's theorem, and positive bumps).

A kernel that depends on the distance ``u = p_i - p_j`` alone, and is
positive definite, is the expectation of ``cos(omega u)`` over some
distribution of frequencies (Bochner's theorem). For the Gaussian head's
``exp(-u**2 / tau)`` that distribution is normal:

.. math:: \int_{-\infty}^{\infty} \cos(\omega u)\,
    \frac{\exp(-\omega^2 / (2 \nu))}{\sqrt{2 \pi \nu}}\, \mathrm{d}\omega
    = \exp(-\nu u^2 / 2) = \exp(-u^2 / \tau) \iff \nu = \frac{2}{\tau}.

:func:`frequency_variance` computes the integral and solves for the
variance ``nu``; :func:`cosine_variance` gives the variance of one cosine,
which sets the error of an average of ``D`` of them;
:func:`bump_integral` the integral of two Gaussian bumps over their common
centre, which makes positive features; :func:`performer_exponent` checks
that the Performer's features are such bumps, and
:func:`performer_relative_variance` gives the variance of one product of
them relative to the kernel it estimates.

:func:`latex` writes the results for a page, with ``\exp`` for the
exponential: in the book ``e`` is a score, ``e_ij``.

sympy is imported here, in :mod:`~selfattention.symbolic` and inside
:func:`~selfattention.online_softmax.rescaling_identity` only, so
``import selfattention`` never needs it.
"""

from __future__ import annotations

import functools

import sympy as sp
from sympy.printing.latex import LatexPrinter

from .symbolic import _symbolic

#: The symbols: a distance, a frequency, a temperature, the frequencies'
#: variance, two positions and a bump's centre.
u = sp.Symbol("u", real=True)
omega = sp.Symbol("omega", real=True)
tau = sp.Symbol("tau", positive=True)
nu = sp.Symbol("nu", positive=True)
x, y, centre = sp.symbols("p_i p_j \\bar{p}", real=True)


def _normal_density(variable, variance) -> sp.Expr:
    r"""The density of :math:`\mathcal N(0, \text{variance})` at ``variable``.

    Parameters
    ----------
    variable : sympy.Symbol
    variance : sympy.Expr
        Positive.

    Returns
    -------
    sympy.Expr
    """
    if not isinstance(variable, sp.Symbol):
        raise TypeError(f"variable must be a sympy Symbol, got {variable!r}")
    variance = sp.sympify(variance)
    return sp.exp(-variable**2 / (2 * variance)) / sp.sqrt(2 * sp.pi * variance)


def frequency_variance():
    r"""The expected cosine over normal frequencies, and the variance that gives the Gaussian head.

    .. math:: \mathbb E\big[\cos(\omega u)\big] = \exp(-\nu u^2 / 2)
        \quad\text{for } \omega \sim \mathcal N(0, \nu);
        \qquad \exp(-\nu u^2 / 2) = \exp(-u^2/\tau) \iff \nu = 2 / \tau

    Computed once, then remembered (sympy's expressions do not change).

    Returns
    -------
    expectation : sympy.Expr
        The integral, a function of ``u`` and ``nu``.
    variance : sympy.Expr
        The ``nu`` for which it equals ``exp(-u**2 / tau)``: ``2 / tau``.
    """
    return _derived_frequency_variance()


@functools.cache
def _derived_frequency_variance():
    """:func:`frequency_variance`'s derivation, run once (the public function stays a plain function)."""
    integrand = sp.cos(omega * u) * _normal_density(omega, nu)
    expectation = sp.simplify(sp.integrate(integrand, (omega, -sp.oo, sp.oo)))
    exponent = sp.expand(sp.log(expectation), force=True)
    (variance,) = sp.solve(sp.Eq(exponent, -u**2 / tau), nu)
    return expectation, variance


def cosine_variance():
    r"""The variance of one feature product :math:`\cos(\omega u)` at :math:`\nu = 2 / \tau`.

    .. math:: \operatorname{Var}\cos(\omega u) = \tfrac12 \big(1 +
        \exp(-4 u^2 / \tau)\big) - \exp(-2 u^2 / \tau),

    from :math:`\cos^2 = (1 + \cos 2 \omega u) / 2`; an average of ``D``
    independent draws has ``1 / D`` of it, so its error falls as
    :math:`D^{-1/2}`.

    Returns
    -------
    sympy.Expr
        A function of ``u`` and ``tau``.
    """
    expectation, variance = frequency_variance()
    mean = expectation.subs(nu, variance)  # E[cos(omega u)] at nu = 2 / tau
    square = (1 + expectation.subs({nu: variance, u: 2 * u})) / 2  # E[cos^2]
    return sp.simplify(square - mean**2)


def bump_integral():
    r"""Two bumps of width :math:`\sqrt\tau / 2`, integrated over their common centre.

    .. math:: \int_{-\infty}^{\infty} \exp(-2 (p_i - \bar p)^2 / \tau)\,
        \exp(-2 (p_j - \bar p)^2 / \tau)\, \mathrm{d}\bar p
        = \sqrt{\pi \tau / 4}\; \exp(-(p_i - p_j)^2 / \tau)

    Returns
    -------
    integral : sympy.Expr
    ratio : sympy.Expr
        The integral divided by the kernel ``exp(-(p_i - p_j)**2 / tau)``:
        a constant, ``sqrt(pi tau) / 2``.
    """
    bumps = sp.exp(-2 * (x - centre) ** 2 / tau - 2 * (y - centre) ** 2 / tau)
    # conds="none": tau > 0 (the symbol says so), so the integral converges
    integral = sp.simplify(sp.integrate(bumps, (centre, -sp.oo, sp.oo),
                                        conds="none"))
    ratio = sp.simplify(integral / sp.exp(-(x - y) ** 2 / tau))
    return integral, ratio


def performer_exponent():
    r"""The Performer's exponent rewritten as a bump: the difference, which simplifies to 0.

    .. math:: \omega p - \frac{2 p^2}{\tau} - \Big(\frac{2 \bar p^2}{\tau}
        - \frac{2 (p - \bar p)^2}{\tau}\Big) = 0
        \quad\text{at } \bar p = \omega \tau / 4

    Returns
    -------
    sympy.Expr
        The difference, simplified (0 when the identity holds).
    """
    bump_at = omega * tau / 4
    performer = omega * x - 2 * x**2 / tau
    bump = 2 * bump_at**2 / tau - 2 * (x - bump_at) ** 2 / tau
    return sp.simplify(performer - bump)


def performer_relative_variance():
    r"""The variance of one product of two Performer features, over the square of its mean.

    .. math:: \text{product} = \exp\big(\omega (p_i + p_j) - 2 (p_i^2 + p_j^2) / \tau\big),
        \quad \omega \sim \mathcal N(0, 2 / \tau): \qquad
        \frac{\operatorname{Var}(\text{product})}{(\mathbb E\, \text{product})^2}
        = \exp\big(2 (p_i + p_j)^2 / \tau\big) - 1

    The mean is the kernel :math:`\exp(-(p_i - p_j)^2 / \tau)`; the
    relative variance grows with the distance of the pair's sum from 0,
    the position the features are written about, not with the pair's
    distance. Written about another origin, :math:`p_i + p_j` becomes
    :math:`p_i + p_j - 2\,\text{origin}`.

    Returns
    -------
    mean : sympy.Expr
        The mean of the product, a function of ``p_i``, ``p_j`` and ``tau``.
    relative : sympy.Expr
        Its variance over the square of its mean.
    """
    return _derived_performer_relative_variance()


@functools.cache
def _derived_performer_relative_variance():
    slope = sp.Symbol("a", real=True)
    # E[exp(a omega)] over omega ~ N(0, 2 / tau), once; X**k has a = k (p_i + p_j)
    generating = sp.simplify(sp.integrate(sp.exp(slope * omega) * _normal_density(omega, 2 / tau),
                                          (omega, -sp.oo, sp.oo), conds="none"))
    weight = sp.exp(-2 * (x**2 + y**2) / tau)
    mean = generating.subs(slope, x + y) * weight
    square = generating.subs(slope, 2 * (x + y)) * weight**2
    return sp.simplify(sp.powsimp(mean)), sp.simplify(sp.powsimp(square / mean**2) - 1)


#: The length of the interval the spread centres are drawn from.
length = sp.Symbol("Lambda", positive=True)


def spread_relative_variance():
    r"""The variance of one product of two spread bumps, over the square of its mean.

    The centre :math:`\bar p` is uniform on an interval of length
    :math:`\Lambda` that holds both bumps (their tails beyond it neglected);
    the product of the bumps at ``p_i`` and ``p_j``, times :math:`\Lambda` (``length``) and over
    the constant ``sqrt(pi tau) / 2`` of :func:`bump_integral`, has the
    kernel as its mean and

    .. math:: \frac{\operatorname{Var}}{\text{mean}^2}
        = \sqrt{\frac{2}{\pi}}\, \frac{\Lambda}{\sqrt\tau} - 1,

    the same for every pair: :math:`\sqrt{2/\pi}` times the number of
    lengths :math:`\sqrt\tau` (twice a bump's width) in the interval, less one.

    Returns
    -------
    mean : sympy.Expr
        The kernel, a function of ``p_i``, ``p_j`` and ``tau``.
    relative : sympy.Expr
        A function of ``length`` (Lambda) and ``tau``.
    """
    return _derived_spread_relative_variance()


@functools.cache
def _derived_spread_relative_variance():
    exponent = -2 * (x - centre) ** 2 / tau - 2 * (y - centre) ** 2 / tau  # of one product of two bumps
    constant = sp.simplify(_gaussian_integral(exponent) / sp.exp(-(x - y) ** 2 / tau))  # sqrt(pi tau) / 2
    mean = sp.simplify(_gaussian_integral(exponent) / constant)  # (Lambda / c) * integral / Lambda
    square = length / constant**2 * _gaussian_integral(2 * exponent)  # (Lambda / c)**2 * integral / Lambda
    return mean, sp.simplify(sp.powsimp(square / mean**2) - 1)


@functools.cache
def _gaussian_integral_of(a, b):
    """``integral exp(-a t**2 + b t) dt`` over the line, for symbols ``a > 0`` and real ``b``: once."""
    t = sp.Symbol("t", real=True)
    return sp.simplify(sp.integrate(sp.exp(-a * t**2 + b * t), (t, -sp.oo, sp.oo), conds="none"))


def _gaussian_integral(exponent) -> sp.Expr:
    """The integral over the bump's centre of ``exp(exponent)``, a quadratic in it falling at both ends."""
    a, b = sp.Symbol("a", positive=True), sp.Symbol("b", real=True)
    curvature, slope, rest = sp.Poly(sp.expand(exponent), centre).all_coeffs()
    return _gaussian_integral_of(a, b).subs({a: -curvature, b: slope}) * sp.exp(rest)


#: A random phase, uniform on one period.
phase = sp.Symbol("phase", real=True)


def random_phase_variance():
    r"""The mean and variance of one product of two random-phase features.

    The product is :math:`2 \cos(\omega p_i + \text{phase}) \cos(\omega p_j + \text{phase})`.

    With :math:`\text{phase}` uniform on :math:`[0, 2\pi)` and
    :math:`\omega \sim \mathcal N(0, 2/\tau)`: averaged over the phase,
    the product is :math:`\cos(\omega u)` and its square
    :math:`\cos^2(\omega u) + \tfrac12`, so its variance is that of
    :func:`cosine_variance` plus one half (Sutherland and Schneider, 2015).

    Returns
    -------
    mean : sympy.Expr
        The kernel, a function of ``u`` and ``tau``.
    variance : sympy.Expr
    """
    return _derived_random_phase_variance()


@functools.cache
def _derived_random_phase_variance():
    product = 2 * sp.cos(omega * x + phase) * sp.cos(omega * y + phase)
    expectation, variance = frequency_variance()
    at = {nu: variance}

    def over_frequency(expr):  # a sum of c cos(k omega u): E cos(k omega u) = expectation at k u
        expr = sp.expand(expr.subs(x - y, u).subs(x, y + u))
        return sp.expand(expr.replace(lambda e: isinstance(e, sp.cos) and e.has(omega),
                                      lambda e: expectation.subs(at).subs(u, e.args[0] / omega)))

    mean = over_frequency(_over_phase(product))
    square = over_frequency(_over_phase(product**2))
    return sp.simplify(mean), sp.simplify(square - mean**2)


def _over_phase(expr) -> sp.Expr:
    """The mean of ``expr`` over the phase, uniform on one period: products turned into sums first."""
    from sympy.simplify.fu import TR8

    terms = sp.expand(TR8(sp.expand(expr)))
    return sp.simplify(sp.integrate(terms, (phase, 0, 2 * sp.pi)) / (2 * sp.pi))


class _Printer(LatexPrinter):
    r"""sympy's LaTeX, but the exponential as ``\exp(...)`` rather than ``e^{...}``."""

    def _print_exp(self, expr, exp=None):
        tex = rf"\exp\left({self._print(expr.args[0])}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


def latex(expr) -> str:
    r"""``expr`` as LaTeX, the exponential written :math:`\exp(u)`.

    Parameters
    ----------
    expr : sympy.Expr or float

    Returns
    -------
    str
    """
    return _Printer().doprint(_symbolic(expr, "expr"))
