"""The code a reader meets teaches and fits its box, in every chapter of ``_toc.yml``.

The book's reading style (the README's "Writing a chapter"), read from the
MyST sources:

* **A visible cell teaches.** Every ``glue(...)`` of a value is in a code
  cell tagged ``remove-cell``, which the page leaves out; a figure's glue
  (``glue("fig-...", ...)``) is in its hidden-input cell, or a removed one.
* **Code fits its box.** Every line of a code cell the reader can see or
  expand (any cell but ``remove-cell`` and ``remove-input`` ones) is at most
  :data:`MAX_LINE` characters, and so is every line of a ``literalinclude``,
  as Sphinx includes it (read here by Sphinx's own reader).
* **On a phone, too** (chapter 12 so far): a budget of lines over
  :data:`PHONE_LINE` characters, the width a 390-px phone shows whole, in the
  code a reader sees or can expand and in its listings, that fails when they
  grow back.
* **A listing shows code.** A listing of the package is whole Python with no
  docstring (the docstring's Sphinx markup, ``.. math::`` or ``:func:``, is
  for the API, not the page): the function with its body (the
  ``:lines:`` that skip its docstring), or a run of its statements. Either
  way it is the package's code as it is now, so that a docstring that grows
  or shrinks cannot shift a listing into the middle of a string.
* **Live Code runs the page.** A removed cell is not on the page, so Live
  Code (thebe) never runs it: no cell that runs live reads a name that only
  a removed cell binds.
"""

from __future__ import annotations

import ast
import re
import textwrap
import types
from pathlib import Path

import pytest
from chapters.book import BOOK, CodeCell, code_cell_blocks
from sphinx.directives.code import LiteralInclude, LiteralIncludeReader

from tools import toc

#: The longest line a code box shows whole at 1440 px (and on an A4 page): PEP 8's 79.
MAX_LINE = 79
#: The longest line a code box shows whole on a 390-px phone (about 48 characters at the code size).
PHONE_LINE = 48
#: Lines over :data:`PHONE_LINE` a page may still show (cells the reader sees or can expand, and listings). Chapter
#: 12 showed 128 in its 21 code blocks (issue 40, item 13), all of them now broken over lines or shortened.
PHONE_BUDGET = {"heads-together": 0}
#: Cells the page leaves out (their code is not shown; live, only those before the first shown cell run first).
REMOVED = frozenset({"remove-cell"})
#: Cells whose code the page does not show (their output is shown).
CODE_NOT_SHOWN = frozenset({"remove-cell", "remove-input"})
LITERALINCLUDE = re.compile(r"^```\{literalinclude\}\s+(\S+)\n((?::[\w-]+:.*\n)*)```", re.M)


def pages() -> list[str]:
    """Every page of the table of contents that is a MyST file in ``book/``."""
    found = [doc.removeprefix("book/") for doc in toc.documents() if doc.startswith("book/")]
    return [stem for stem in found if (BOOK / f"{stem}.md").is_file()]


def glue_calls(code: str) -> list[tuple[int, str]]:
    """(line in the cell, glued name or its f-string's start) of every ``glue(...)`` call."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "glue":
            name = node.args[0] if node.args else None
            if isinstance(name, ast.JoinedStr):
                name = name.values[0] if name.values else None
            found.append((node.lineno, name.value if isinstance(name, ast.Constant) else "?"))
    return found


def where(stem: str, cell: CodeCell, line: int = 0) -> str:
    """``book/<stem>.md:<line>``: a cell's code line (its fence when ``line`` is 0)."""
    offset = 0 if not line else cell_code_offset(stem, cell) + line
    return f"book/{stem}.md:{cell.line + offset}"


def cell_code_offset(stem: str, cell: CodeCell) -> int:
    """How many lines of the file lie between a cell's fence and the first line of its code."""
    lines = (BOOK / f"{stem}.md").read_text().splitlines()
    fence = cell.line - 1
    body = lines[fence + 1:]
    code = cell.code.splitlines()
    for k in range(len(body)):
        if body[k:k + len(code)] == code:
            return k
    raise AssertionError(f"{stem}: the code of the cell at line {cell.line} is not in the file")


@pytest.mark.parametrize("stem", pages())
def test_values_are_glued_in_removed_cells_and_figures_in_hidden_ones(stem):
    found = []
    for cell in code_cell_blocks(stem):
        for line, name in glue_calls(cell.code):
            if name.startswith("fig-"):
                if not cell.tags & {"hide-input", "remove-cell"}:
                    found.append(f"{where(stem, cell, line)}: the figure {name} is glued in a cell the reader sees "
                                 "(draw it in a hide-input cell)")
            elif not cell.tags & REMOVED:
                found.append(f"{where(stem, cell, line)}: {name} is glued in a cell the reader "
                             f"{'can open' if cell.tags else 'sees'} (glue it in a remove-cell cell after it)")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("stem", pages())
def test_every_line_of_code_the_reader_can_see_fits_its_box(stem):
    found = []
    for cell in code_cell_blocks(stem):
        if cell.tags & CODE_NOT_SHOWN:
            continue
        found += [f"{where(stem, cell, k)}: {len(line)} characters" for k, line in
                  enumerate(cell.code.splitlines(), start=1) if len(line) > MAX_LINE]
    assert not found, f"lines over {MAX_LINE} characters:\n" + "\n".join(found)


def listings(stem: str) -> list[tuple[int, Path, dict]]:
    """(line, file, options as Sphinx parses them) of every ``literalinclude`` of a page."""
    text = (BOOK / f"{stem}.md").read_text()
    found = []
    for match in LITERALINCLUDE.finditer(text):
        options = {}
        for key, value in re.findall(r"^:([\w-]+):[ \t]*(.*)$", match.group(2), re.M):
            options[key] = LiteralInclude.option_spec[key](value.strip() or None)
        found.append((text[:match.start()].count("\n") + 1, (BOOK / match.group(1)).resolve(), options))
    return found


def shown(path: Path, options: dict) -> str:
    """The text Sphinx includes: its own reader, with the page's options."""
    config = types.SimpleNamespace(source_encoding="utf-8-sig")
    text, _ = LiteralIncludeReader(str(path), options, config).read()
    return text


def definition(path: Path, name: str) -> ast.FunctionDef | ast.ClassDef:
    tree = ast.parse(path.read_text())
    return next(node for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name)


def docstring_of(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    first = body[0] if isinstance(body, list) and body else None
    is_string = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str)
    return first if is_string else None


def lines_without_docstring(node: ast.FunctionDef | ast.ClassDef) -> str:
    """The ``:lines:`` of a ``:pyobject:`` listing that show its header and body, not its docstring."""
    doc = docstring_of(node)
    header = doc.lineno - node.lineno  # the def's lines, before the docstring
    body = doc.end_lineno - node.lineno + 2
    return f"{'1' if header == 1 else f'1-{header}'},{body}-"


def statement_runs(node: ast.AST):
    """Every list of statements inside ``node`` (a body, an else, a handler's...), as ast dumps."""
    for child in ast.walk(node):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(child, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield [ast.dump(statement) for statement in block if statement is not docstring_of(child)]


def listing_problems(path: Path, options: dict) -> list[str]:
    text = shown(path, options)
    problems = [f"a line of {len(line)} characters: {line.strip()[:50]!r}..." for line in text.splitlines()
                if len(line.expandtabs(options.get("tab-width", 8))) > MAX_LINE]
    if path.suffix != ".py":
        return problems
    name = options.get("pyobject")
    hint = f" (use :lines: {lines_without_docstring(definition(path, name))})" if name else ""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError as error:
        return [*problems, f"not whole Python ({error.msg}, line {error.lineno}){hint}"]
    if any(docstring_of(node) for node in ast.walk(tree)):
        problems.append(f"shows a docstring{hint}")
    if name:
        real = definition(path, name)
        if [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)] == [name]:
            same = next(statement_runs(tree.body[0])) == next(statement_runs(real))
            problems += [] if same else [f"is not {name} as the package has it{hint}"]
        else:  # a run of the function's statements
            run = [ast.dump(statement) for statement in tree.body]
            if not any(block[k:k + len(run)] == run for block in statement_runs(real) for k in range(len(block))):
                problems.append(f"is not a run of statements of {name}")
    return problems


@pytest.mark.parametrize("stem", pages())
def test_a_listing_shows_the_packages_code_without_its_docstring_and_fits_its_box(stem):
    found = [f"book/{stem}.md:{line}: the listing of {path.name} {options.get('pyobject', '')}: {problem}"
             for line, path, options in listings(stem) for problem in listing_problems(path, options)]
    assert not found, "\n".join(found)


def bound_names(tree: ast.AST) -> set[str]:
    """Every name a cell binds anywhere: assigned, imported, defined, a loop's or a parameter."""
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    names |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            names.add(node.name)
    return names


@pytest.mark.parametrize("stem", pages())
def test_live_code_runs_the_page_without_its_removed_cells(stem):
    """Live Code runs the cells on the page, in order: none reads a name bound only by a removed cell.

    The removed cells before the page's first shown cell (the import of ``glue``) are the exception:
    ``live-cells.js`` runs them with the live preamble, when the session connects and after each restart.
    """
    live, removed_only, found, shown = set(), {}, [], False
    for cell in code_cell_blocks(stem):
        tree = ast.parse(cell.code)
        bound = bound_names(tree)
        if cell.tags & REMOVED and not shown:
            live |= bound
            continue
        if cell.tags & REMOVED:
            removed_only.update({name: cell for name in bound - live})
            continue
        shown = True
        read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        found += [f"{where(stem, cell)} reads {name}, which only the removed cell at line {removed_only[name].line} "
                  "binds" for name in sorted(read - bound) if name in removed_only]
        live |= bound
        for name in bound:
            removed_only.pop(name, None)
    assert not found, "\n".join(found)


def phone_wide_lines(stem: str) -> list[str]:
    """Every line over :data:`PHONE_LINE` characters a page shows in its code: cells and listings."""
    found = []
    for cell in code_cell_blocks(stem):
        if not cell.tags & CODE_NOT_SHOWN:
            found += [f"{where(stem, cell, k)}: {len(line)} characters: {line.strip()[:50]!r}"
                      for k, line in enumerate(cell.code.splitlines(), start=1) if len(line) > PHONE_LINE]
    for line, path, options in listings(stem):
        found += [f"book/{stem}.md:{line}: the listing of {path.name}: {len(text)} characters: "
                  f"{text.strip()[:50]!r}" for text in shown(path, options).splitlines()
                  if len(text.expandtabs(options.get("tab-width", 8))) > PHONE_LINE]
    return found


@pytest.mark.parametrize("stem", sorted(PHONE_BUDGET))
def test_a_phone_shows_the_code_lines_whole_within_the_pages_budget(stem):
    found = phone_wide_lines(stem)
    assert len(found) <= PHONE_BUDGET[stem], (
        f"{len(found)} lines over {PHONE_LINE} characters (budget {PHONE_BUDGET[stem]}):\n" + "\n".join(found))
