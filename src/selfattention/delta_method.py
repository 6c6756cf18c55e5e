r"""The cosine head's ratio to first order, derived with sympy: the delta method.

The head's output is :math:`\text{num}_i / \text{den}_i`, two averages over random frequencies
(:mod:`~selfattention.random_features`). Near their means the ratio is nearly linear in them;
:func:`ratio_variance` expands it to first order and takes the variance of the linear part.
:func:`cosine_product_mean` derives the mean of a product of two cosines of one frequency, which
gives the variances and the covariance of the two averages
(:func:`~selfattention.feature_error.frequency_moments`).

Like :mod:`~selfattention.spectrum`, this module needs sympy; ``import selfattention`` does not
import it.
"""

from __future__ import annotations

import functools

import sympy as sp

from .spectrum import frequency_variance, nu, omega, u

#: A second difference of positions, :math:`u'`.
u_other = sp.Symbol("u'", real=True)
#: The means, the variances and the covariance of the head's estimated numerator and denominator.
mean_num = sp.Symbol(r"\mathbb{E}\,\text{num}_i", positive=True)
mean_den = sp.Symbol(r"\left(\mathbb{E}\,\text{den}_i\right)", positive=True)  # printed squared
var_num = sp.Symbol(r"\operatorname{Var}\text{num}_i", positive=True)
var_den = sp.Symbol(r"\operatorname{Var}\text{den}_i", positive=True)
cov = sp.Symbol(r"\operatorname{Cov}(\text{num}_i,\text{den}_i)", real=True)
#: The exact head's output, the ratio of the means.
output = sp.Symbol(r"\text{output}_i", real=True)


def cosine_product_mean():
    r"""The mean of :math:`\cos(\omega u) \cos(\omega u')` over :math:`\omega \sim \mathcal N(0, 2/\tau)`.

    .. math:: \cos(\omega u) \cos(\omega u') = \tfrac12 \big(\cos(\omega (u - u')) + \cos(\omega (u + u'))\big),
        \qquad \mathbb{E} = \tfrac12 \big(\exp(-(u - u')^2/\tau) + \exp(-(u + u')^2/\tau)\big)

    The mean of each cosine is :func:`~selfattention.spectrum.frequency_variance`'s integral.

    Returns
    -------
    sympy.Expr
        A function of ``u``, ``u'`` and ``tau``.
    """
    return _derived_cosine_product_mean()


@functools.cache
def _derived_cosine_product_mean():
    expectation, variance = frequency_variance()
    mean_cos = expectation.subs(nu, variance)  # E cos(omega u) at nu = 2 / tau
    from sympy.simplify.fu import TR8

    summed = TR8(sp.cos(omega * u) * sp.cos(omega * u_other))  # a sum of cosines of omega (u -+ u')
    return sp.simplify(summed.replace(lambda e: isinstance(e, sp.cos),
                                      lambda e: mean_cos.subs(u, sp.simplify(e.args[0] / omega))))


def ratio_variance():
    r"""The variance of :math:`\text{num}_i / \text{den}_i` to first order in their deviations from their means.

    .. math:: \frac{\text{num}_i}{\text{den}_i} \approx \text{output}_i
        + \frac{\text{num}_i - \mathbb{E}\,\text{num}_i}{\mathbb{E}\,\text{den}_i}
        - \text{output}_i\, \frac{\text{den}_i - \mathbb{E}\,\text{den}_i}{\mathbb{E}\,\text{den}_i},
        \qquad \text{output}_i = \frac{\mathbb{E}\,\text{num}_i}{\mathbb{E}\,\text{den}_i}

    whose variance is

    .. math:: \frac{\operatorname{Var} \text{num}_i - 2\, \text{output}_i \operatorname{Cov}(\text{num}_i,
        \text{den}_i) + \text{output}_i^2 \operatorname{Var} \text{den}_i}{(\mathbb{E}\, \text{den}_i)^2}

    Returns
    -------
    sympy.Expr
        In the module's symbols ``output``, ``var_num``, ``cov``, ``var_den`` and ``mean_den``.
    """
    return _derived_ratio_variance()


@functools.cache
def _derived_ratio_variance():
    num, den = sp.symbols("n d", real=True)
    ratio = num / den
    at_means = {num: mean_num, den: mean_den}
    gradient = sp.Matrix([sp.diff(ratio, v).subs(at_means) for v in (num, den)])  # (2, 1)
    covariance = sp.Matrix([[var_num, cov], [cov, var_den]])
    variance = (gradient.T * covariance * gradient)[0, 0]
    return sp.factor(sp.expand(variance.subs(mean_num, output * mean_den)), mean_den)
