"""Every page follows the book's rules, read from its MyST source.

Every figure is glued, named ``fig-<page>-<slug>``, captioned, described by
alt text, referenced and drawn in a hidden-input cell; a page's first code
cell, when it sets up (starts with an import), is collapsed or not shown; every glued name is
shown and every shown name glued; every number in the prose is glued (the
one rule, with its listed exceptions); included source exists; no page uses
pyplot or numpy's global random state.
"""

from __future__ import annotations

import ast
import re

import pytest
from chapters.book import (
    ANSWER_BOX,
    BOOK,
    FENCE,
    GLUE_FIGURE,
    GLUE_ROLE,
    NUMBER,
    NUMREF,
    STEMS,
    code_cells,
    glued_names,
    source,
    typed_numbers,
)

#: Page -> the prefix of its figure names (fig-<prefix>-<slug>), for the pages with figures.
FIGURE_PREFIXES = {
    "attention": "attention",
    "noisy-signal": "noisy-signal",
    "quadratic-trick": "quadratic-trick",
    "smoothing": "smoothing",
    "knobs": "knobs",
    "kernel-regression": "kr",
    "learning": "learning",
    "content-attention": "content",
    "many-heads": "mh",
    "positions-and-masks": "pos",
    "heads-together": "heads",
    "circuits": "circuits",
    "attention-cost": "cost",
    "linear-memory": "linear-memory",
    "random-features": "random-features",
    "in-context": "in-context",
}
#: The numbers typed into the prose instead of glued, and what states each.
#: Each value is a function of the page's run (see book.run_chapter) giving the
#: number the package or the bibliography states; None marks a number that
#: the test named in the comment reads from the prose and checks itself.
TYPED_NUMBERS = {
    "attention": {"1024": lambda ch: max(ch.namespace["result"]["d_k"])},  # "d_k from 1 to 1024"
    "kernel-regression": {
        "1964": lambda ch: _bib_years("nadaraya1964estimating", "watson1964smooth"),  # "In 1964"
        "400": lambda ch: max(ch.namespace["loo_ns"]),  # "N up to 400"
        "2": lambda ch: ch.glued["kr-loo-factor"],  # "by more than a factor 2"
        "20": None,  # "a factor 20 does not": test_kernel_regression.py::test_the_bottom_of_the_u_is_flat
    },
}

#: Pages held to two rules the earlier pages do not meet yet: no number typed into a
#: figure's caption or alt text, and none of the retired symbols of the notation in the
#: math (w_ij for the weights, y_i, K_h for the kernel, epsilon for the noise).
STRICT_PAGES = ("learning", "content-attention", "many-heads", "positions-and-masks", "heads-together",
                "attention-cost", "linear-memory", "random-features", "in-context")
RETIRED_SYMBOLS = re.compile(r"w_\{?ij|(?<![\w\\])y_i|K_h|\\varepsilon|\\epsilon")


#: Tags that keep a cell's source off the page's first screen: collapsed behind a toggle, or not shown.
OFF_THE_FIRST_SCREEN = {"hide-input", "hide-cell", "remove-input", "remove-cell"}


def options_and_code(cell: str) -> tuple[str, str]:
    """A code cell's options (``:key: value`` lines, or a ``---`` block) and its code."""
    lines = cell.splitlines()
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        return "\n".join(lines[1:end]), "\n".join(lines[end + 1:])
    count = next((i for i, line in enumerate(lines) if not line.startswith(":")), len(lines))
    return "\n".join(lines[:count]), "\n".join(lines[count:])


def _bib_years(*keys) -> int:
    years = {int(re.search(rf"@\w+\{{{key},.*?year\s*=\s*\{{(\d+)\}}", (BOOK.parent / "references.bib").read_text(),
                           re.S).group(1)) for key in keys}
    assert len(years) == 1, years
    return years.pop()


@pytest.mark.parametrize("stem", STEMS)
def test_a_page_opens_with_its_idea_not_its_set_up(stem):
    """The first screen, on a phone too, starts with the idea: a first code cell that imports is collapsed.

    The README's convention for chapters: the set-up cell gets ``:tags: [hide-input]`` (its toggle
    then reads "Show the imports", or "Show the imports and set-up": ``_ext/page_meta``).
    """
    cells = [cell for cell in code_cells(stem) if "remove-cell" not in options_and_code(cell)[0]]  # shown
    if not cells:
        return
    options, code = options_and_code(cells[0])
    statements = ast.parse(code).body
    if statements and isinstance(statements[0], (ast.Import, ast.ImportFrom)):
        tags = re.search(r"^:?tags:\s*\[([^\]]*)\]", options, re.M)
        found = {tag.strip().strip("'\"") for tag in tags.group(1).split(",")} if tags else set()
        assert found & OFF_THE_FIRST_SCREEN, (f"{stem}: its first code cell sets up (it imports) and is shown: "
                                              "give it :tags: [hide-input]")


@pytest.mark.parametrize("stem", FIGURE_PREFIXES)
def test_figures_are_named_captioned_described_referenced_and_hidden(stem):
    figures = GLUE_FIGURE.findall(source(stem))
    assert figures, f"{stem} has no figure"
    text = source(stem)
    for name, body in figures:
        assert name.startswith(f"fig-{FIGURE_PREFIXES[stem]}-"), name
        assert f":name: {name}\n" in body
        alt = re.search(r"^:alt: (.+)$", body, re.M)
        assert alt and len(alt.group(1)) > 40, f"{name} needs real alt text"
        caption = "\n".join(line for line in body.splitlines() if not line.startswith(":")).strip()
        assert len(caption) > 40, f"{name} needs a caption"
        assert name in NUMREF.findall(text), f"{name} is never referenced with numref"
        drawing = [c for c in code_cells(stem) if re.search(rf"""glue\("{name}", .+, display=False\)""", c)]
        assert len(drawing) == 1, f"{name} must be glued by exactly one cell"
        assert re.search(r":tags: \[(hide-input|remove-cell)\]", drawing[0]), f"{name} not drawn in a hidden cell"


@pytest.mark.parametrize("stem", STRICT_PAGES)
def test_captions_and_alt_texts_type_no_numbers(stem):
    for name, body in GLUE_FIGURE.findall(source(stem)):
        text = re.sub(r"^:name:.*$|\$[^$]+\$|\{[\w:-]+\}`[^`]*`", "", body, flags=re.M)
        assert {n for n in NUMBER.findall(text) if float(n) not in (0.0, 1.0)} == set(), name


@pytest.mark.parametrize("stem", STRICT_PAGES)
def test_the_math_uses_no_retired_symbol(stem):
    display = re.findall(r"\$\$.*?\$\$", source(stem), re.S)
    inline = re.findall(r"\$[^$\n]+\$", re.sub(r"\$\$.*?\$\$", "", source(stem), flags=re.S))
    assert display and inline, "the page has math"
    assert RETIRED_SYMBOLS.findall(" ".join(display + inline)) == []


@pytest.mark.parametrize("stem", FIGURE_PREFIXES)
def test_every_figure_is_a_glued_figure(stem):
    """Figures come from {glue:figure}, never from a cell's own output, so each has one name and caption."""
    assert "mystnb:" not in source(stem)


@pytest.mark.parametrize("stem", STEMS)
def test_every_glued_reference_is_glued_in_the_page(stem):
    exact, prefixes = glued_names(stem)
    text = source(stem)
    used = set(GLUE_ROLE.findall(text)) | {name for name, _ in GLUE_FIGURE.findall(text)}
    used |= set(ANSWER_BOX.findall(text))  # an answer box shows its glued value (_ext/exercises)
    for name in used:
        assert name in exact or any(name.startswith(p) for p in prefixes), f"{name} is not glued in {stem}"
    for name in exact:
        assert name in used, f"{name} is glued but never shown in {stem}"


@pytest.mark.parametrize("stem", STEMS)
def test_every_number_in_the_prose_is_glued_or_stated_by_the_package(stem, chapter_run):
    """The one prose-number rule: a number in the prose is glued, 0 or 1, or listed in TYPED_NUMBERS."""
    allowed = TYPED_NUMBERS.get(stem, {})
    assert typed_numbers(stem) == set(allowed), f"numbers typed into the prose of {stem}"
    for number, stated in allowed.items():
        if stated is not None:
            assert float(number) == stated(chapter_run(stem)), f"{stem} says {number}"


#: How the book is built and tested: the subject of book/checking.md, not of the chapters.
BUILD_PROSE = re.compile(r"\b(?:test\s+suite|the\s+tests?|tested|pytest|CI|continuous\s+integration|glue"
                         r"|warnings?\s+(?:is|are|as)\s+(?:an\s+)?errors?|when\s+the\s+(?:book|site)\s+(?:is|was)\s+built"
                         r"|make\s+(?:build|test))\b", re.I)


@pytest.mark.parametrize("stem", sorted(set(STEMS) - {"checking"}))
def test_pages_teach_the_math_and_leave_the_build_to_the_appendix(stem):
    """Sentences about the build and the tests live in "How this book is checked"; a page links it at most once."""
    text = FENCE.sub("", source(stem))
    words = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)  # roles ({glue:text}`...`) are markup, not prose
    assert not BUILD_PROSE.findall(words), f"{stem}: {BUILD_PROSE.findall(words)}"
    assert len(re.findall(r"\{doc\}`checking`", text)) <= 1


def test_the_introduction_links_the_appendix_once():
    assert re.findall(r"\{doc\}`checking`", source("introduction")) == ["{doc}`checking`"]


@pytest.mark.parametrize("stem", STEMS)
def test_included_source_exists(stem):
    for path, name in re.findall(r"```\{literalinclude\} (\S+)\n:pyobject: (\w+)", source(stem)):
        tree = ast.parse((BOOK / path).read_text())
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
        assert name in defined, f"{path} has no {name}"


@pytest.mark.parametrize("stem", STEMS)
def test_pages_use_no_pyplot_and_no_global_random_state(stem):
    code = "\n".join(code_cells(stem))
    assert "pyplot" not in code and "plt." not in code
    assert not re.search(r"np\.random\.(seed|rand|normal|standard_normal|uniform)\(", code)


#: The pages that list the chapters by their titles (the home page, the introduction's map of the book, the
#: notation table's column of pages): there the title is the point.
LISTS_CHAPTERS = ("index", "introduction", "notation")


@pytest.mark.parametrize("stem", sorted(set(STEMS) - set(LISTS_CHAPTERS)))
def test_prose_names_another_chapter_by_its_number_not_its_title(stem):
    """A chapter's title read mid-sentence is a title used as a noun ("the bilateral head of *Attention that
    looks at content* compared values"): the prose writes {chapter}`content-attention`, "chapter 9", linked
    (``_ext/navigation/chapters.py``). Only the opening's "builds on" line and its link to the notation page
    name pages by title (``tests/chapters/test_openings.py`` reads them so)."""
    text = re.sub(r"^:::\{div\} chapter-goals\n.*?^:::$", "", source(stem), flags=re.S | re.M)
    chapters = set(STEMS) - {"index", "notation", "checking", "references"}
    titles = [name for name in re.findall(r"\{doc\}`([\w-]+)`", text) if name in chapters]
    assert not titles, f"{stem}: write {{chapter}}`{titles[0]}` (\"chapter N\") instead of {{doc}}`{titles[0]}`"


@pytest.mark.parametrize("stem", STEMS)
def test_no_cell_a_reader_sees_imports_glue(stem):
    """``glue`` is bookkeeping: its import is a cell the page leaves out (``remove-cell``), before the set-up
    cell, which Live Code runs first (``live-cells.js``'s leading left-out cells), not a line of the imports a
    reader opens."""
    for cell in code_cells(stem):
        options, code = options_and_code(cell)
        if "remove-cell" not in options:
            assert not re.search(r"^\s*(from myst_nb import|import myst_nb)", code, re.M), \
                f"{stem}: a cell the reader sees imports glue: move the import to a remove-cell cell before it"
