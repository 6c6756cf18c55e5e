"""Glued numbers in e-notation become powers of ten (``_ext/katex_math/numbers.py``)."""

from __future__ import annotations

import pytest

from _ext.katex_math.numbers import as_power


@pytest.mark.parametrize(("text", "latex"), [
    ("6.4e-06", r"6.4 \times 10^{-6}"),
    ("3e-10", r"3 \times 10^{-10}"),
    ("1e-03", "10^{-3}"),
    ("1.0e+20", "10^{20}"),
    ("-2.5e+07", r"-2.5 \times 10^{7}"),
    ("\u22124.5E-5", r"-4.5 \times 10^{-5}"),
    ("1.5e+00", "1.5"),
    (" 8.1e-09 ", r"8.1 \times 10^{-9}"),
])
def test_e_notation_is_written_as_a_power_of_ten(text, latex):
    assert as_power(text) == latex


@pytest.mark.parametrize("text", ["0.25", "12", "1,024", "e-5", "1e", "6.4e-06 s", "x1e-3", "inf", ""])
def test_anything_else_is_left_alone(text):
    assert as_power(text) is None
