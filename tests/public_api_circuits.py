"""The audit's entries (:class:`public_api.Call`) for tokens, the residual stream and the induction circuit.

:mod:`selfattention.tokens`, :mod:`selfattention.induction`,
:mod:`selfattention.circuit_learning`, ``training.fit_circuit``, the study
and the figures of the chapter "Heads that work together". Kinds as in
:mod:`public_api`, with ``tokens`` for token ids (integers of the
vocabulary); each valid call is small (a vocabulary of three symbols,
sequences of four tokens).
"""

from __future__ import annotations

import numpy as np

from selfattention import circuit_learning as cl
from selfattention import induction, tokens, training
from selfattention.interactive import circuit_data
from selfattention.studies import induction as si
from selfattention.studies import induction_reach as reach

#: Three symbols, sequences of four tokens (two halves of two), a stream of width 12.
VOC = 3
SEQS = np.array([[0, 1, 0, 1], [2, 0, 2, 0]])
LAYERS = induction.hand_built_circuit(VOC, 5)
WEIGHTS = cl.projections(LAYERS)
BATCHES = np.stack([SEQS, SEQS[::-1]])
FIT = training.fit_circuit(BATCHES, VOC, d_head=2, rng=1, checkpoints=(0, 2))
A = np.stack([np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None]] * 2)


def circuit_calls() -> list:
    """Entries of the tokens, the hand-built circuit, its learning and its study."""
    from public_api import Call

    c, t, s = "count", "tokens", "sequence"
    return [
        Call("tokens.Stream", tokens.Stream, {"vocabulary": VOC}, {"vocabulary": c}),
        Call("circuit_data.start_text", circuit_data.start_text, {}, {}, False),
        Call("circuit_data.circuit_explorer_data", circuit_data.circuit_explorer_data,
             {"text": "abab", "margin": 8.0}, {"text": "string", "margin": "positive"}, False, optional=("text",)),
        Call("circuit_data.circuit_json", circuit_data.circuit_json, {"text": "abab", "margin": 8.0},
             {"text": "string", "margin": "positive"}, False, optional=("text",)),
        Call("circuit_data.circuit_run", circuit_data.circuit_run, {"text": "abab", "margin": 8.0,
             "knocked_out": True}, {"text": "string", "margin": "positive", "knocked_out": "flag"}, False),
        Call("circuit_data.circuit_labels", circuit_data.circuit_labels, {"text": "abab"}, {"text": "string"},
             False),
        Call("tokens.positions", tokens.positions, {"n_positions": 5}, {"n_positions": c}),
        Call("tokens.residual_stream", tokens.residual_stream, {"tokens": SEQS, "vocabulary": VOC},
             {"tokens": t, "vocabulary": c}),
        Call("tokens.random_sequences", tokens.random_sequences, {"count": 2, "length": 3, "vocabulary": VOC,
             "rng": 1}, {"count": c, "length": c, "vocabulary": c, "rng": "rng"}),
        Call("tokens.repeated_sequences", tokens.repeated_sequences, {"count": 2, "half": 3, "vocabulary": VOC,
             "rng": 1}, {"count": c, "half": c, "vocabulary": c, "rng": "rng"}),
        Call("tokens.periodic_sequences", tokens.periodic_sequences, {"count": 2, "length": 5, "periods": [2, 3],
             "vocabulary": VOC, "rng": 1}, {"count": c, "length": c, "periods": "counts", "vocabulary": c,
                                            "rng": "rng"}),
        Call("tokens.from_text", tokens.from_text, {"text": "abca", "vocabulary": VOC},
             {"text": "string", "vocabulary": c}),
        Call("tokens.to_text", tokens.to_text, {"tokens": SEQS[0], "start": True}, {"tokens": t, "start": "flag"},
             numeric=False),
        Call("induction.Layer", induction.Layer, {"head": LAYERS[0].head, "W_O": LAYERS[0].W_O},
             {"head": "instance", "W_O": "array"}),
        Call("induction.previous_token_layer", induction.previous_token_layer, {"vocabulary": VOC,
             "n_positions": 5, "margin": 8.0}, {"vocabulary": c, "n_positions": c, "margin": "positive"}),
        Call("induction.induction_layer", induction.induction_layer, {"vocabulary": VOC, "margin": 8.0},
             {"vocabulary": c, "margin": "positive"}),
        Call("induction.hand_built_circuit", induction.hand_built_circuit, {"vocabulary": VOC, "n_positions": 5,
             "margin": 8.0}, {"vocabulary": c, "n_positions": c, "margin": "positive"}),
        Call("induction.run_circuit", induction.run_circuit, {"tokens": SEQS[0], "layers": LAYERS,
             "knocked_out": [0]}, {"tokens": t, "layers": s, "knocked_out": "indices"}),
        Call("induction.previous_token_score", induction.previous_token_score, {"weights": A[0]},
             {"weights": "array"}),
        Call("induction.prefix_matching_score", induction.prefix_matching_score, {"weights": A, "half": 2},
             {"weights": "array", "half": c}),
        *_learning_calls(),
        *_study_calls(),
        *figure_calls(),
        *_circuits_view_calls(),
    ]


def _circuits_view_calls() -> list:
    """Entries of :mod:`selfattention.circuits`, :mod:`selfattention.circuit_paths` and their figure."""
    from public_api import Call

    from selfattention import circuit_paths, circuits
    from selfattention.figures import circuits as circuit_figures
    from selfattention.studies import circuits as sc

    c, t, s = "count", "tokens", "sequence"
    scores = circuit_paths.ablated_scores(WEIGHTS, SEQS, VOC)
    return [
        Call("circuits.qk_circuit", circuits.qk_circuit, {"weights": WEIGHTS, "layer": 1, "vocabulary": VOC,
             "query": "token", "key": "previous"}, {"weights": s, "layer": c, "vocabulary": c, "query": "string",
                                                    "key": "string"}),
        Call("circuits.ov_circuit", circuits.ov_circuit, {"weights": WEIGHTS, "layer": 1, "vocabulary": VOC,
             "read": "token", "write": "prediction"}, {"weights": s, "layer": c, "vocabulary": c, "read": "string",
                                                       "write": "string"}),
        Call("circuits.copying_score", circuits.copying_score, {"matrix": np.eye(3)}, {"matrix": "array"}),
        Call("circuits.diagonal_summary", circuits.diagonal_summary, {"matrix": np.eye(3)}, {"matrix": "array"}),
        Call("circuits.composition_scores", circuits.composition_scores, {"weights": WEIGHTS, "vocabulary": VOC},
             {"weights": s, "vocabulary": c}),
        Call("circuits.composition_baseline", circuits.composition_baseline, {"vocabulary": VOC, "d_head": 2,
             "draws": 2, "rng": 1}, {"vocabulary": c, "d_head": c, "draws": c, "rng": "rng"}),
        Call("circuit_paths.path_logits", circuit_paths.path_logits, {"weights": WEIGHTS, "sequences": SEQS,
             "vocabulary": VOC}, {"weights": s, "sequences": t, "vocabulary": c}),
        Call("circuit_paths.ablated_scores", circuit_paths.ablated_scores, {"weights": WEIGHTS, "sequences": SEQS,
             "vocabulary": VOC, "ablation": "keys"}, {"weights": s, "sequences": t, "vocabulary": c,
                                                      "ablation": "string"}),
        Call("circuit_paths.output_shares", circuit_paths.output_shares, {"weights": WEIGHTS, "sequences": SEQS,
             "vocabulary": VOC}, {"weights": s, "sequences": t, "vocabulary": c}),
        Call("circuit_paths.repeat_accuracy", circuit_paths.repeat_accuracy, {"scores": scores, "sequences": SEQS,
             "half": 2}, {"scores": "array", "sequences": t, "half": c}),
        Call("studies.circuits.chapter_fit", sc.chapter_fit, {"steps": 2, "every": 1, "data_rng": 1, "init_rng": 2},
             {"steps": c, "every": c, "data_rng": "rng", "init_rng": "rng"}, numeric=False),
        Call("studies.circuits.row_losses", sc.row_losses, {"weights": WEIGHTS, "sequences": SEQS,
             "vocabulary": VOC, "ablation": "mean"}, {"weights": s, "sequences": t, "vocabulary": c,
                                                      "ablation": "string"}),
        Call("studies.circuits.row_loss_errors", sc.row_loss_errors, {"weights": WEIGHTS, "sequences": SEQS,
             "vocabulary": VOC, "ablation": "mean"}, {"weights": s, "sequences": t, "vocabulary": c,
                                                      "ablation": "string"}),
        Call("studies.circuits.icl_scores", sc.icl_scores, {"checkpoints": FIT.checkpoints, "sequences": SEQS,
             "vocabulary": VOC, "early": 0, "late": 3}, {"checkpoints": "mapping", "sequences": t,
                                                         "vocabulary": c, "early": c, "late": c}),
        Call("figures.circuits.plot_circuits", circuit_figures.plot_circuits, {"circuits": {"a": np.eye(3),
             "b": -np.eye(3)}}, {"circuits": "mapping"}, numeric=False),
    ]


def _learning_calls() -> list:
    from public_api import Call

    c, t, s = "count", "tokens", "sequence"
    return [
        Call("circuit_learning.as_circuit", cl.as_circuit, {"weights": WEIGHTS, "vocabulary": VOC},
             {"weights": s, "vocabulary": c}),
        Call("circuit_learning.circuit_loss_and_grad", cl.circuit_loss_and_grad, {"weights": WEIGHTS,
             "sequences": SEQS, "vocabulary": VOC}, {"weights": s, "sequences": t, "vocabulary": c}),
        Call("circuit_learning.circuit_backprop", cl.circuit_backprop, {"weights": WEIGHTS,
             "X": tokens.residual_stream(SEQS, VOC), "targets": SEQS}, {"weights": s, "X": "array", "targets": t}),
        Call("circuit_learning.numerical_circuit_gradient", cl.numerical_circuit_gradient,
             {"weights": [tuple(w[:, :1] if k < 3 else w[:1] for k, w in enumerate(FIT.weights[0]))],
              "sequences": SEQS[:1, :2], "vocabulary": VOC, "step": 1e-6},
             {"weights": s, "sequences": t, "vocabulary": c, "step": "positive"}),
        Call("circuit_learning.circuit_forward", cl.circuit_forward, {"weights": WEIGHTS, "sequences": SEQS,
             "vocabulary": VOC, "knocked_out": [0]}, {"weights": s, "sequences": t, "vocabulary": c,
                                                      "knocked_out": "indices"}),
        Call("circuit_learning.projections", cl.projections, {"layers": LAYERS}, {"layers": s}),
        Call("circuit_learning.as_layers", cl.as_layers, {"weights": FIT.weights, "vocabulary": VOC},
             {"weights": s, "vocabulary": c}),
        Call("training.fit_circuit", training.fit_circuit, {"batches": BATCHES, "vocabulary": VOC, "layers": 2,
             "d_head": 2, "learning_rate": 0.02, "init_scale": 0.1, "checkpoints": [0, 1], "rng": 1},
             {"batches": t, "vocabulary": c, "layers": c, "d_head": c, "learning_rate": "positive",
              "init_scale": "positive", "checkpoints": "steps", "rng": "rng"}),
    ]


def _study_calls() -> list:
    from public_api import Call

    c, t, s = "count", "tokens", "sequence"
    return [
        Call("studies.induction.halves", si.halves, {"hits": np.arange(4.0), "half": 2},
             {"hits": "array", "half": c}),
        Call("studies.induction.hits", si.hits, {"weights": WEIGHTS, "sequences": SEQS, "vocabulary": VOC,
             "knocked_out": [0]}, {"weights": s, "sequences": t, "vocabulary": c, "knocked_out": "indices"}),
        Call("studies.induction.accuracy", si.accuracy, {"weights": WEIGHTS, "sequences": SEQS, "vocabulary": VOC,
             "half": 2}, {"weights": s, "sequences": t, "vocabulary": c, "half": c}),
        Call("studies.induction.ambiguity", si.ambiguity, {"sequences": SEQS, "half": 2},
             {"sequences": t, "half": c}),
        Call("studies.induction.split_by_ambiguity", si.split_by_ambiguity, {"weights": WEIGHTS,
             "sequences": np.array([[0, 1, 0, 1], [0, 0, 0, 0]]), "vocabulary": VOC, "half": 2},
             {"weights": s, "sequences": t, "vocabulary": c, "half": c}),
        Call("studies.induction.composed_scores", si.composed_scores, {"weights": WEIGHTS, "vocabulary": VOC},
             {"weights": s, "vocabulary": c}),
        Call("studies.induction.positional_shortcut", si.positional_shortcut, {"vocabulary": VOC, "half": 2,
             "margin": 8.0}, {"vocabulary": c, "half": c, "margin": "positive"}),
        Call("studies.induction.training_batches", si.training_batches, {"steps": 2, "batch": 2, "length": 4,
             "periods": [2], "vocabulary": VOC, "rng": 1}, {"steps": c, "batch": c, "length": c,
                                                            "periods": "counts", "vocabulary": c, "rng": "rng"}),
        Call("studies.induction.track", si.track, {"checkpoints": FIT.checkpoints, "sequences": SEQS,
             "vocabulary": VOC, "half": 2}, {"checkpoints": "mapping", "sequences": t, "vocabulary": c,
                                             "half": c}),
        Call("studies.induction.steepest_drop", si.steepest_drop, {"losses": [3.0, 3.0, 1.0, 1.0], "window": 2},
             {"losses": "array", "window": c}),
        Call("studies.induction_reach.knockout_by_vocabulary", reach.knockout_by_vocabulary,
             {"vocabularies": [2, 3], "half": 2, "count": 2, "rng": 1},
             {"vocabularies": "counts", "half": c, "count": c, "rng": "rng"}),
        Call("studies.induction_reach.accuracy_by_half", reach.accuracy_by_half,
             {"halves": [2, 3], "vocabulary": VOC, "rows": 4, "rng": 1},
             {"halves": "counts", "vocabulary": c, "rows": c, "rng": "rng"}),
        Call("studies.induction_reach.match_weight", reach.match_weight,
             {"vocabulary": VOC, "length": 5, "margin": 8.0}, {"vocabulary": c, "length": c, "margin": "positive"}),
        Call("studies.induction_reach.knockout_along_training", reach.knockout_along_training,
             {"checkpoints": FIT.checkpoints, "sequences": SEQS, "vocabulary": VOC, "half": 2},
             {"checkpoints": "mapping", "sequences": t, "vocabulary": c, "half": c}),
        Call("studies.induction_reach.drop_starts", reach.drop_starts, {"seeds": [1], "steps": 2, "window": 1},
             {"seeds": "counts", "steps": c, "window": c}),
    ]


def figure_calls() -> list:
    """Entries of :mod:`selfattention.figures.induction`."""
    from public_api import Call

    from selfattention.figures import induction as figures

    labels = ["^", "a", "b", "a", "b"]
    stream = tokens.residual_stream(SEQS[0], VOC)  # (5, 12)
    return [
        Call("figures.induction.plot_stream", figures.plot_stream, {"stream": stream,
             "columns": {"token": 3, "position": 3, "previous": 3, "prediction": 3}, "labels": labels},
             {"stream": "array", "columns": "mapping", "labels": "sequence"}, numeric=False),
        Call("figures.induction.plot_layers", figures.plot_layers, {"weights": list(A), "labels": labels,
             "titles": ("one", "two")}, {"weights": "sequence", "labels": "sequence", "titles": "sequence"},
             numeric=False),
        Call("figures.induction.plot_accuracy", figures.plot_accuracy, {"accuracy": {"a": np.linspace(0, 1, 4)},
             "chance": 0.1, "half": 2}, {"accuracy": "mapping", "chance": "nonnegative", "half": "count"},
             numeric=False),
        Call("figures.induction.plot_circuit_training", figures.plot_circuit_training, {"losses": [3.0, 2.0, 1.0],
             "tracked": {"a": ([0, 2], [0.1, 0.9])}, "hand_built": {"a": 0.95}},
             {"losses": "array", "tracked": "mapping", "hand_built": "mapping"}, numeric=False),
    ]
