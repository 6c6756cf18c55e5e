"""The figures of the chapter "Heads that work together" draw the data they are given."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.image import AxesImage

from selfattention import induction, tokens
from selfattention.figures import induction as figures

LABELS = tokens.to_text(tokens.from_text("abcabc"), start=True)
RUN = induction.run_circuit(tokens.from_text("abcabc"), induction.hand_built_circuit(26, 7))


def images(fig):
    return [artist for ax in fig.axes for artist in ax.get_children() if isinstance(artist, AxesImage)]


def test_the_layers_figure_draws_both_matrices_labelled_by_symbol():
    fig = figures.plot_layers(RUN.weights, LABELS, titles=("one", "two"))
    drawn = images(fig)
    assert len(drawn) == 2
    for image, A in zip(drawn, RUN.weights, strict=True):
        np.testing.assert_array_equal(image.get_array(), A)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == LABELS
    assert [ax.get_title() for ax in fig.axes] == ["one", "two"]


def test_the_stream_figure_draws_the_stream_and_names_its_four_groups():
    X = RUN.streams[2][:, [0, 1, 2, 26, 27, 28, 29, 30, 31, 55, 56, 57]]
    fig = figures.plot_stream(X, {"token": 3, "position": 3, "previous": 3, "prediction": 3}, LABELS)
    np.testing.assert_array_equal(images(fig)[0].get_array(), X)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == list(figures.SUBSPACES)
    with pytest.raises(ValueError, match="columns must be positive counts adding up to the stream's 12"):
        figures.plot_stream(X, {"token": 3, "position": 3, "previous": 3, "prediction": 2}, LABELS)


def test_the_accuracy_figure_draws_each_circuit_and_chance():
    curves = {"a": np.linspace(0, 1, 6), "b": np.full(6, 0.2)}
    fig = figures.plot_accuracy(curves, 0.05, 3)
    lines = fig.axes[0].get_lines()
    np.testing.assert_array_equal(lines[0].get_ydata(), curves["a"])
    np.testing.assert_array_equal(lines[1].get_ydata(), curves["b"])
    assert lines[2].get_ydata()[0] == 0.05


def test_the_training_figure_draws_the_losses_and_each_tracked_value_with_its_level():
    losses = np.linspace(3, 1, 50)
    tracked = {"x": ([0, 10, 20], [0.1, 0.5, 0.9]), "y": ([0, 10, 20], [0.2, 0.3, 0.4])}
    fig = figures.plot_circuit_training(losses, tracked, {"x": 0.95, "y": 0.99})
    np.testing.assert_array_equal(fig.axes[0].get_lines()[0].get_ydata(), losses)
    right = fig.axes[1].get_lines()
    np.testing.assert_array_equal(right[0].get_ydata(), [0.1, 0.5, 0.9])
    assert right[1].get_ydata()[0] == 0.95
    with pytest.raises(ValueError, match="tracked and hand_built"):
        figures.plot_circuit_training(losses, tracked, {"x": 0.95})


def test_every_figure_is_drawn_for_the_column_with_legible_text():
    """At most WIDTH inches wide, no text under TEXT_PT points, as the book's figure style asks."""
    from selfattention.figures._style import TEXT_PT, WIDTH, png_meta, render_png

    drawn = [
        figures.plot_layers(RUN.weights, LABELS),
        figures.plot_stream(RUN.streams[2][:, :12], {"token": 3, "position": 3, "previous": 3, "prediction": 3},
                            LABELS),
        figures.plot_accuracy({"a": np.linspace(0, 1, 6)}, 0.05, 3),
        figures.plot_circuit_training(np.linspace(3, 1, 50), {"x": ([0, 10], [0.1, 0.9])}, {"x": 0.95}),
    ]
    for fig in drawn:
        meta = png_meta(render_png(fig))
        assert fig.get_size_inches()[0] <= WIDTH
        assert float(meta["smallest"]) >= TEXT_PT, meta
