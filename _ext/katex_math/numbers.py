r"""Glued numbers in Python's e-notation typeset as powers of ten: ``6.4e-06`` becomes $6.4 \times 10^{-6}$.

A chapter glues a number (``glue("name", value, display=False)``) and the
prose formats it with a format spec (``{glue:text}`name:.1e```); Python
writes ``6.4e-06``, ``3e-10`` or ``1e-03``, which a reader should not have to
decode. Every glued text (myst-nb's ``pasted-text`` inline) that is one
number in e-notation gets, in place of its text, the formula
:func:`as_power` writes, typeset by KaTeX with the page's other math: one
rule for every glued number, whatever its format spec (``:.1e``, ``:g``, or a
string a chapter formatted itself).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms import SphinxTransform

#: One number in e-notation, as Python's formats write it (``-6.4e-06``, ``1E+20``, ``3e-10``), and nothing else.
E_NOTATION = re.compile(r"([-\u2212]?)(\d+(?:\.\d*)?)[eE]([-+]?)(\d+)")


def as_power(text: str) -> str | None:
    r"""The LaTeX of ``text`` as a power of ten (``6.4 \times 10^{-6}``, ``10^{-3}``), or None if not e-notation.

    A mantissa of exactly 1 is left out (``1e-03``: ``10^{-3}``); an exponent of 0 leaves the mantissa alone.
    """
    found = E_NOTATION.fullmatch(text.strip())
    if not found:
        return None
    sign, mantissa, exponent_sign, exponent = found.groups()
    sign = "-" if sign else ""
    exponent = exponent.lstrip("0")
    if not exponent:
        return f"{sign}{mantissa}"
    power = f"10^{{{'-' if exponent_sign == '-' else ''}{exponent}}}"
    if float(mantissa) == 1:
        return f"{sign}{power}"
    return f"{sign}{mantissa} \\times {power}"


class GluedPowers(SphinxTransform):
    """Replace the text of each glued number in e-notation by its formula (a ``math`` node)."""

    default_priority = 700  # after parsing, where myst-nb's glue roles have pasted their text

    def apply(self) -> None:
        for pasted in list(self.document.findall(nodes.inline)):
            if "pasted-text" not in pasted["classes"]:
                continue
            latex = as_power(pasted.astext())
            if latex is not None:
                pasted.children = []
                pasted += nodes.math(latex, latex)
