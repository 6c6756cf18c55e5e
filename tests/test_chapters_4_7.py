"""Chapters 4-7 (quadratic trick, smoothing, knobs, kernel regression) follow the book's rules.

The fast tests read the MyST sources: every figure is named, captioned, has
alt text, is referenced and is drawn in a hidden-input cell; every glued name
is shown and every shown name glued; no number is typed into the prose of
chapters 4-6 (chapter 7's own, looser rule is in test_chapter_7.py);
included source exists. The slow tests execute chapters 4-6 each on its
own, in a fresh kernel, and compare glued numbers with the package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import selfattention as sa
from selfattention import knobs, settings, symbolic

BOOK = Path(__file__).resolve().parents[1] / "book"
#: Chapter stem -> the prefix of its figure names (fig-<prefix>-<slug>).
CHAPTERS = {"quadratic-trick": "quadratic-trick", "smoothing": "smoothing", "knobs": "knobs", "kernel-regression": "kr"}
#: Chapters whose prose may hold no typed digit at all.
DIGIT_FREE = ("quadratic-trick", "smoothing", "knobs")

FENCE = re.compile(r"^```(\{[^}]+\})?[^\n]*\n.*?^```[ \t]*$", re.S | re.M)
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
GLUE_FIGURE = re.compile(r"^```\{glue:figure\}\s+(\S+)\n(.*?)^```[ \t]*$", re.S | re.M)
GLUE_ROLE = re.compile(r"\{glue(?::text|:md)?\}`([^`:]+)(?::[^`]*)?`")
GLUE_CALL = re.compile(r"""glue\(\s*(f?)["']([^"'{]+)""")
NUMREF = re.compile(r"\{numref\}`([^`]+)`")


def source(stem: str) -> str:
    text = (BOOK / f"{stem}.md").read_text()
    return text.split("---", 2)[2]  # drop the jupytext front matter


def code_cells(stem: str) -> list[str]:
    return CODE_CELL.findall(source(stem))


def prose(stem: str) -> str:
    """The chapter's text with fenced blocks, math, roles and inline code removed."""
    text = FENCE.sub("", source(stem))
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", "", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"^\d+\. ", "", text, flags=re.M)  # numbered-list markers
    return re.sub(r"^\(([\w-]+)\)=$", "", text, flags=re.M)


def glued_names(stem: str) -> tuple[set[str], set[str]]:
    """Names glued in the chapter's code: exact names, and f-string prefixes."""
    exact, prefixes = set(), set()
    for cell in code_cells(stem):
        for is_f, name in GLUE_CALL.findall(cell):
            (prefixes if is_f else exact).add(name)
    return exact, prefixes


@pytest.mark.parametrize("stem", CHAPTERS)
def test_figures_are_named_captioned_described_referenced_and_hidden(stem):
    figures = GLUE_FIGURE.findall(source(stem))
    assert figures, f"{stem} has no figure"
    text = source(stem)
    for name, body in figures:
        assert name.startswith(f"fig-{CHAPTERS[stem]}-"), name
        assert f":name: {name}\n" in body
        alt = re.search(r"^:alt: (.+)$", body, re.M)
        assert alt and len(alt.group(1)) > 40, f"{name} needs real alt text"
        caption = "\n".join(line for line in body.splitlines() if not line.startswith(":")).strip()
        assert len(caption) > 40, f"{name} needs a caption"
        assert name in NUMREF.findall(text), f"{name} is never referenced with numref"
        drawing = [c for c in code_cells(stem) if f'glue("{name}", fig, display=False)' in c]
        assert len(drawing) == 1 and ":tags: [hide-input]" in drawing[0], f"{name} not drawn in a hide-input cell"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_glued_reference_is_glued_in_the_chapter(stem):
    exact, prefixes = glued_names(stem)
    text = source(stem)
    used = set(GLUE_ROLE.findall(text)) | {name for name, _ in GLUE_FIGURE.findall(text)}
    assert used
    for name in used:
        assert name in exact or any(name.startswith(p) for p in prefixes), f"{name} is not glued in {stem}"
    for name in exact:
        assert name in used, f"{name} is glued but never shown in {stem}"


@pytest.mark.parametrize("stem", DIGIT_FREE)
def test_no_number_is_typed_into_the_prose(stem):
    digits = re.findall(r".{0,30}\d.{0,30}", prose(stem))
    assert digits == [], f"hand-typed numbers in {stem}: {digits}"


def test_number_check_can_fail():
    assert re.search(r"\d", "The output misses it by 0.09.")
    assert not re.search(r"\d", re.sub(r"\{[\w:-]+\}`[^`]*`", "", "misses it by {glue:text}`x:.3f`."))


@pytest.mark.parametrize("stem", CHAPTERS)
def test_included_source_exists(stem):
    for path, name in re.findall(r"```\{literalinclude\} (\S+)\n:pyobject: (\w+)", source(stem)):
        tree = ast.parse((BOOK / path).read_text())
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
        assert name in defined, f"{path} has no {name}"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_chapters_use_no_pyplot_and_no_global_random_state(stem):
    code = "\n".join(code_cells(stem))
    assert "pyplot" not in code and "plt." not in code
    assert not re.search(r"np\.random\.(seed|rand|normal|standard_normal|uniform)\(", code)


def test_smoothing_keeps_the_figure_other_pages_rely_on():
    assert any(name == "fig-smoothing-result" for name, _ in GLUE_FIGURE.findall(source("smoothing")))


def test_quadratic_trick_shows_the_heads_source():
    assert "```{literalinclude} ../src/selfattention/head.py\n:pyobject: gaussian_head_weights" in source(
        "quadratic-trick"
    )


# --- slow: execute each chapter alone and compare its glued numbers ---------------


def run_chapter(stem: str) -> dict[str, str]:
    """Execute a chapter in a fresh kernel; return its glued text/plain values."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbclient import NotebookClient

    nb = read_myst_markdown_notebook((BOOK / f"{stem}.md").read_text())
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(BOOK)}}).execute()
    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                data = out["data"]  # glue(display=False) prefixes the mime types
                glued[name] = next((v for k, v in data.items() if k.endswith("text/plain")), "")
    return glued


@pytest.mark.slow
def test_quadratic_trick_runs_alone_and_glues_the_packages_numbers():
    glued = run_chapter("quadratic-trick")
    positions, _, noisy = sa.noisy_sine(settings.N, settings.SIGMA, rng=settings.SEED)
    assert glued["trick-identity-holds"] == "True"
    assert float(glued["trick-max-error"]) == symbolic.numeric_score_error(positions, noisy)
    assert float(glued["trick-profile-gap"]) < 1e-12


@pytest.mark.slow
def test_smoothing_runs_alone_and_glues_the_packages_numbers():
    glued = run_chapter("smoothing")
    rmse_in, rmse_out = knobs.smoothing_errors(settings.N, settings.SIGMA, settings.TEMPERATURE, rng=settings.SEED)
    assert float(glued["smoothing-rmse-input"]) == rmse_in
    assert float(glued["smoothing-rmse-output"]) == rmse_out
    assert "fig-smoothing-result" in glued


@pytest.mark.slow
def test_knobs_runs_alone_and_glues_the_packages_numbers():
    glued = run_chapter("knobs")
    assert float(glued["knobs-identity-gap"]) < 1e-30
    assert float(glued["knobs-uniform-gap"]) < 1e-3
    assert float(glued["knobs-noise-rmse-out"]) < float(glued["knobs-noise-rmse-in"]) / 3
    assert float(glued["knobs-samples-last"]) < float(glued["knobs-samples-first"])
    assert np.isfinite(float(glued["knobs-samples-input"]))


# --- the chapters' figure functions ------------------------------------------------


def test_figure_functions_draw_without_pyplot():
    import subprocess
    import sys

    code = """
import sys
import numpy as np
import selfattention as sa
from selfattention import knobs
from selfattention.figures import knobs as fk, trick
from selfattention.figures.smoothing import plot_smoothing
p, c, y = sa.noisy_sine(30, 0.3, rng=0)
o, w = sa.gaussian_head(y, p, 0.01)
taus = np.logspace(-6, 2, 5)
ri, ro = knobs.error_vs_samples([10, 20], 0.3, 0.01, n_draws=2, rng=0)
figs = [
    plot_smoothing(p, c, y, o, w),
    trick.plot_attention_band(p, 0.01),
    trick.plot_row_profiles(p, [0.001, 0.01], 15),
    fk.plot_temperature_extremes(p, c, y, [1e-6, 0.01, 10.0]),
    fk.plot_temperature_sweep(taus, knobs.temperature_sweep(y, p, taus)),
    fk.plot_noise_recovery(30, [0.3, 1.0], 0.01, rng=0),
    fk.plot_samples([10, 20], ri, ro, examples=(10, 20), sigma=0.3, temperature=0.01, rng=0),
]
print([len(f.axes) for f in figs], all(f._repr_png_()[:4] == b"\\x89PNG" for f in figs))
print("matplotlib.pyplot" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[3, 2, 1, 6, 2, 2, 3] True"
    assert out[1] == "False"
