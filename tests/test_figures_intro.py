"""Figures of chapters 2 and 3: each returns a figure with the expected artists."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.image import AxesImage
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

import selfattention as sa
from selfattention.figures import diagrams, signal
from selfattention.figures._style import BookFigure
from selfattention.onedim import onedim_head
from selfattention.scaling import scaling_experiment


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def png_size(fig):
    from io import BytesIO

    from matplotlib.image import imread

    return imread(BytesIO(fig._repr_png_())).shape


def test_overview_has_boxes_arrows_and_every_role():
    fig = diagrams.draw_overview()
    assert isinstance(fig, BookFigure)
    (ax,) = fig.axes
    assert sum(isinstance(p, FancyBboxPatch) for p in ax.patches) == 10
    assert sum(isinstance(p, FancyArrowPatch) for p in ax.patches) >= 10
    labels = " ".join(texts(fig))
    for needle in ("$X$", "W_Q", "W_K", "W_V", "queries", "keys", "values", "softmax", "output"):
        assert needle in labels
    assert png_size(fig)[0] > 100


@pytest.mark.parametrize(("n", "d_model", "d_k", "d_v"), [(4, 3, 2, 2), (3, 5, 4, 1)])
def test_detailed_draws_one_cell_per_matrix_entry(n, d_model, d_k, d_v):
    fig = diagrams.draw_detailed(n=n, d_model=d_model, d_k=d_k, d_v=d_v)
    (ax,) = fig.axes
    cells = sum(isinstance(p, Rectangle) and not isinstance(p, FancyBboxPatch) for p in ax.patches)
    # Top row: 3 x (X + W + result); bottom row: Q, K^T, scores, weights, V, output.
    top = 3 * n * d_model + 2 * (d_model * d_k + n * d_k) + d_model * d_v + n * d_v
    bottom = 2 * n * d_k + 2 * n * n + 2 * n * d_v
    assert cells == top + bottom
    labels = " ".join(texts(fig))
    assert f"({n}×{d_model})" in labels and "rows sum to 1" in labels


def test_detailed_rejects_shapes_too_large_to_draw():
    with pytest.raises(ValueError, match="at most 8"):
        diagrams.draw_detailed(n=9)
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        diagrams.draw_detailed(d_k=0)


def test_scaling_figure_plots_measurements_and_sqrt_curve():
    result = scaling_experiment([1, 4, 16], n_queries=20, n_pairs=50, rng=0)
    fig = signal.plot_scaling(result)
    ax_std, ax_max = fig.axes
    assert len(ax_std.lines) == 2 and len(ax_max.lines) == 2
    np.testing.assert_allclose(ax_std.lines[1].get_ydata(), [1, 2, 4])
    np.testing.assert_array_equal(ax_max.lines[0].get_ydata(), result["max_weight_unscaled"])
    assert ax_std.get_xscale() == "log" and ax_max.get_xscale() == "log"


def test_noisy_signal_figure_has_truth_and_dots():
    p, clean, noisy = sa.noisy_sine(30, 0.2, rng=1)
    fig = signal.plot_noisy_signal(p, clean, noisy)
    (ax,) = fig.axes
    assert [line.get_linestyle() for line in ax.lines] == ["--", "None"]
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), noisy)


def test_onedim_figure_has_signal_heat_map_and_value_scatter():
    p, clean, noisy = sa.noisy_sine(30, 0.2, rng=1)
    output, weights = onedim_head(noisy)
    fig = signal.plot_onedim_head(p, clean, noisy, output, weights)
    ax_sig, ax_w, ax_val, _colorbar = fig.axes
    np.testing.assert_array_equal(ax_sig.lines[2].get_ydata(), output)
    (im,) = [a for a in ax_w.get_children() if isinstance(a, AxesImage)]
    np.testing.assert_array_equal(im.get_array(), weights)
    np.testing.assert_array_equal(ax_val.collections[0].get_offsets(), np.column_stack([noisy, output]))


def test_strength_sweep_figure_has_reference_lines():
    fig = signal.plot_strength_sweep(np.array([0.0, 1.0]), np.array([0.5, 0.3]), 0.4, 0.1)
    (ax,) = fig.axes
    assert len(ax.lines) == 3 and ax.get_yscale() == "log"
    fig = signal.plot_strength_sweep(np.array([0.0, 1.0]), np.array([0.5, 0.3]), 0.4)
    assert len(fig.axes[0].lines) == 2


def test_figures_are_drawn_without_pyplot_or_global_state():
    import subprocess
    import sys

    code = (
        "import sys, matplotlib\n"
        "rc = lambda: {k: matplotlib.rcParams[k] for k in matplotlib.rcParams if k != 'backend'}\n"
        "before = rc()\n"
        "import numpy as np\n"
        "from selfattention.figures import diagrams, signal\n"
        "from selfattention.scaling import scaling_experiment\n"
        "diagrams.draw_overview()._repr_png_(); diagrams.draw_detailed()._repr_png_()\n"
        "signal.plot_scaling(scaling_experiment([1, 2], n_queries=5, n_pairs=5, rng=0))._repr_png_()\n"
        "p = np.linspace(0, 1, 5)\n"
        "signal.plot_onedim_head(p, p, p, p, np.eye(5))._repr_png_()\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot was imported'\n"
        "assert rc() == before, 'rcParams changed'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
