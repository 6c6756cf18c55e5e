"""Read the book's chapters: their MyST source, their prose, and what their code computes.

:func:`run_chapter` executes a chapter's code cells in this process, as
myst-nb reads them, with ``myst_nb.glue`` replaced by a recorder of the glued
Python objects (cells tagged ``skip-execution`` are skipped, as the build
skips them). The chapter tests check the book's claims against these values,
so that no test repeats a chapter's code: change an argument in a chapter
and its tests see the change.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import myst_nb
import yaml
from myst_nb.core.read import read_myst_markdown_notebook

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
#: Every page of the book.
STEMS = tuple(sorted(path.stem for path in BOOK.glob("*.md")))

FENCE = re.compile(r"^```(\{[^}]+\})?[^\n]*\n.*?^```[ \t]*$", re.S | re.M)
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
GLUE_FIGURE = re.compile(r"^```\{glue:figure\}\s+(\S+)\n(.*?)^```[ \t]*$", re.S | re.M)
GLUE_ROLE = re.compile(r"\{glue(?::text|:md)?\}`([^`:]+)(?::[^`]*)?`")
GLUE_CALL = re.compile(r"""glue\(\s*(f?)["']([^"'{]+)""")
#: An answer box of an exercise (_ext/exercises): its argument is the glued name of the answer.
ANSWER_BOX = re.compile(r"^```\{answer-box\}\s+(\S+)", re.M)
NUMREF = re.compile(r"\{numref\}`([^`]+)`")
#: A number in running text: digits, with a decimal part or not.
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\w)")


def source(stem: str) -> str:
    """The page's MyST source, without the jupytext front matter."""
    text = (BOOK / f"{stem}.md").read_text()
    return text.split("---", 2)[2] if text.startswith("---") else text


def code_cells(stem: str) -> list[str]:
    """The source of every code cell, options included."""
    return CODE_CELL.findall(source(stem))


@dataclass(frozen=True)
class CodeCell:
    """A code cell of a page's MyST source: where it starts, its tags and its code."""

    line: int  # the line of its ```{code-cell} fence in book/<stem>.md
    tags: frozenset[str]
    code: str  # what the cell runs (and shows): its options left out


def code_cell_blocks(stem: str) -> list[CodeCell]:
    """Every code cell of ``book/<stem>.md``, in order, with its line and tags."""
    text = (BOOK / f"{stem}.md").read_text()
    cells = []
    for match in CODE_CELL.finditer(text):
        lines = match.group(1).splitlines()
        if lines and lines[0].strip() == "---":  # options as a YAML block
            end = lines.index("---", 1)
            options = yaml.safe_load("\n".join(lines[1:end])) or {}
            tags, lines = options.get("tags", []), lines[end + 1:]
        else:  # options as ":key: value" lines
            count = next((k for k, line in enumerate(lines) if not line.startswith(":")), len(lines))
            found = re.search(r"^:tags:\s*\[([^\]]*)\]", "\n".join(lines[:count]), re.M)
            tags = [tag.strip().strip("'\"") for tag in found.group(1).split(",")] if found else []
            lines = lines[count:]
        cells.append(CodeCell(text[:match.start()].count("\n") + 1, frozenset(tags), "\n".join(lines)))
    return cells


def prose(stem: str) -> str:
    """The page's running text: fenced blocks, math, roles and inline code removed."""
    text = FENCE.sub("", source(stem))
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", "", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"^\d+\. ", "", text, flags=re.M)  # numbered-list markers
    return re.sub(r"^\(([\w-]+)\)=$", "", text, flags=re.M)  # labels


def typed_numbers(stem: str) -> set[str]:
    """Numbers typed into the prose (not glued, not in math), apart from 0 and 1.

    0 and 1 are exact constants of the math ("mean 0 and variance 1", "a 1 x 1
    matrix"); every other number in the prose should be glued.
    """
    return {number for number in NUMBER.findall(prose(stem)) if float(number) not in (0.0, 1.0)}


def glued_names(stem: str) -> tuple[set[str], set[str]]:
    """Names glued in the chapter's code: exact names, and f-string prefixes."""
    exact, prefixes = set(), set()
    for cell in code_cells(stem):
        for is_f, name in GLUE_CALL.findall(cell):
            (prefixes if is_f else exact).add(name)
    return exact, prefixes


@dataclass(frozen=True)
class Chapter:
    """What running a chapter's code cells left behind."""

    stem: str
    #: Every variable the chapter's code defined.
    namespace: dict
    #: Glued name -> the Python object the chapter glued under it.
    glued: dict


def run_chapter(stem: str) -> Chapter:
    """Execute the code cells of ``book/<stem>.md`` in a fresh namespace."""
    notebook = read_myst_markdown_notebook((BOOK / f"{stem}.md").read_text())
    glued: dict = {}

    def record(name, variable, display=True):
        assert name not in glued, f"{stem} glues {name!r} twice"
        glued[name] = variable

    namespace: dict = {"__name__": f"chapter_{stem.replace('-', '_')}"}
    with mock.patch.object(myst_nb, "glue", record), contextlib.chdir(BOOK):
        for k, cell in enumerate(notebook.cells):
            if cell.cell_type == "code" and "skip-execution" not in cell.metadata.get("tags", []):
                exec(compile(cell.source, f"{stem}.md, cell {k}", "exec"), namespace)
    return Chapter(stem, namespace, glued)
