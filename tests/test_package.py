"""The package imports cleanly: numpy only, no global side effects."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import selfattention


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, capture_output=True, text=True).stdout


def test_import_needs_only_numpy():
    out = run(
        """
        import sys
        import selfattention
        heavy = [m for m in ("matplotlib", "scipy", "sympy", "ipywidgets", "IPython") if m in sys.modules]
        print(heavy)
        """
    )
    assert out.strip() == "[]"


def test_figures_do_not_touch_matplotlib_global_state():
    out = run(
        """
        import sys
        import matplotlib
        before = matplotlib.rcParams.copy()
        import numpy as np
        from selfattention.figures.smoothing import plot_smoothing
        p = np.linspace(0, 1, 5)
        fig = plot_smoothing(p, p, p, p, np.eye(5))
        fig._repr_png_()
        pyplot_imported = "matplotlib.pyplot" in sys.modules
        print(matplotlib.rcParams.copy() == before, pyplot_imported)
        """
    )
    assert out.split() == ["True", "False"]


def test_public_api_is_exported():
    for name in selfattention.__all__:
        assert callable(getattr(selfattention, name))
