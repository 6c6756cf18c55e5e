"""Every symbol of the notation page keeps its one meaning, in every page of the table of contents.

The math of the book is read from four places: the pages the table of
contents lists (prose, captions and alt text; code cells removed), the
docstrings of the package functions the pages show (``literalinclude``),
the code those pages show, and the labels of the figures
(``src/selfattention/figures``, the widget's title). A page added to
``_toc.yml`` is read too. The tests check that the notation page defines
every letter the book uses, and that the second meanings the book once gave
its symbols do not come back.

They also check that no page redefines a symbol: a symbol is used only in
the forms the notation page gives it (with or without a subscript, as an
index or not, as a function or not, of a grid position or of any position),
in the book and in every docstring of the package; and the positions a
chapter gives the package lie where the notation page says positions lie
for that chapter, which the chapter states too.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import sympy as sp
from chapters.book import code_cells, run_chapter

import selfattention
from tools import ROOT, toc

NOTATION = "book/notation"
PACKAGE = ROOT / "src" / "selfattention"
FIGURE_SOURCES = [*sorted((ROOT / "src" / "selfattention" / "figures").glob("*.py")),
                  ROOT / "src" / "selfattention" / "interactive" / "widget.py"]
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n.*?^```[ \t]*$", re.S | re.M)
INCLUDE = re.compile(r"^```\{literalinclude\} (\S+)\n:pyobject: (\w+)", re.M)
MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
ROLE_MATH = re.compile(r":math:`([^`]+)`")
ALT = re.compile(r"^:alt: (.+)$", re.M)
#: Markup whose braces hold a name, not symbols.
WORD_COMMANDS = re.compile(r"\\(?:text|operatorname|mathrm|mathbb|mathcal|begin|end)\s*\{[^{}]*\}")
GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "kappa", "lambda",
         "mu", "nu", "xi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "pi")


def pages() -> list[Path]:
    """Every page of the table of contents but the notation page itself."""
    return [ROOT / f"{name}.md" for name in toc.documents() if name != NOTATION]


def text_of(page: Path) -> str:
    """A page's MyST text without its front matter and code cells."""
    text = page.read_text()
    if text.startswith("---"):
        text = text.split("---", 2)[2]
    return CODE_CELL.sub("", text)


def math_of(text: str) -> list[str]:
    return [a or b for a, b in MATH.findall(text)]


def docstring_math(doc: str) -> list[str]:
    """The ``.. math::`` and literal (``::``) blocks, with their indented lines, and ``:math:`` roles of a docstring."""
    found, lines = ROLE_MATH.findall(doc), doc.splitlines()
    for k, line in enumerate(lines):
        if "::" in line and (".. math::" in line or line.rstrip().endswith("::")):
            block, indent = [line.split("::", 1)[1]], len(line) - len(line.lstrip())
            for more in lines[k + 1:]:
                if more.strip() and len(more) - len(more.lstrip()) <= indent:
                    break
                block.append(more)
            found.append("\n".join(block))
    return found


def shown_objects() -> dict[str, ast.AST]:
    """The package functions the pages show with ``literalinclude``, by 'file:name'."""
    found = {}
    for page in pages():
        for path, name in INCLUDE.findall(page.read_text()):
            source = (page.parent / path).resolve()
            for node in ast.walk(ast.parse(source.read_text())):
                if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
                    found[f"{source.name}:{name}"] = node
    return found


def figure_label_math() -> list[tuple[str, str]]:
    """The math (``$...$``) in every string of the figure modules (f-string parts included)."""
    found = []
    for path in FIGURE_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "$" in node.value:
                found += [(path.name, math) for math in math_of(node.value.replace("{{", "{").replace("}}", "}"))]
    return found


def every_math() -> list[tuple[str, str]]:
    """(where, math) for the whole book: pages, shown docstrings, figure labels."""
    found = [(page.name, math) for page in pages() for math in math_of(text_of(page))]
    for where, node in shown_objects().items():
        found += [(where, math) for math in docstring_math(ast.get_docstring(node) or "")]
    return found + figure_label_math()


#: An import of the package in the book's code: ``import selfattention as sa``, ``from selfattention.studies import x``.
BOOK_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(selfattention[\w.]*)[ \t]+import[ \t]+\(?([\w \t,]*)"
                         r"|import[ \t]+(selfattention[\w.]*))", re.M)


def module_path(name: str) -> Path | None:
    """The file of a package module, ``selfattention.studies.derivative``, or None if ``name`` is not a module."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    if path.is_dir():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def book_modules() -> list[str]:
    """The package's modules that the book's code imports (a package with the modules its ``__init__`` imports).

    A module's docstrings come under the book's notation when a chapter imports it: a chapter being written
    brings its modules, and their docstrings, in with its code.
    """
    names = set()
    for page in pages():
        for cell in CODE_CELL.findall(page.read_text()):
            for package, imported, plain in BOOK_IMPORT.findall(cell):
                names.add(package or plain)
                names.update(f"{package}.{word.split()[0]}" for word in imported.split(",") if package and word.strip())
    found = {name for name in names if module_path(name)}
    for name in sorted(found):
        if module_path(name).name == "__init__.py":
            for node in ast.walk(ast.parse(module_path(name).read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                    found |= {f"{name}.{node.module}"} if module_path(f"{name}.{node.module}") else set()
    return sorted(found)


def package_math() -> list[tuple[str, str]]:
    """(where, math) for the docstring of every module, class and function of :func:`book_modules`, shown or not."""
    found = []
    for module in book_modules():
        for node in ast.walk(ast.parse(module_path(module).read_text())):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                where = f"{module}:{getattr(node, 'name', '')}"
                found += [(where, math) for math in docstring_math(ast.get_docstring(node) or "")]
    return found


def all_math() -> list[tuple[str, str]]:
    """The book's math and the math of every docstring of the package: where no symbol may take a second meaning."""
    return every_math() + package_math()


def letters(math: str) -> set[str]:
    """The single-letter symbols (Latin, and Greek by name) of a piece of TeX."""
    bare = WORD_COMMANDS.sub(" ", math)
    greek = {name for name in re.findall(r"\\([a-zA-Z]+)", bare) if name in GREEK}
    bare = re.sub(r"\\[a-zA-Z]+", " ", bare)
    return set(re.findall(r"[A-Za-z]", bare)) | greek


def defined_symbols() -> list[str]:
    """The math in the first column of the notation page's tables."""
    symbols = []
    for line in (ROOT / f"{NOTATION}.md").read_text().splitlines():
        if line.startswith("| $"):
            symbols += math_of(line.strip().strip("|").split("|")[0])
    return symbols


# --- the page ----------------------------------------------------------------------------------


def test_the_notation_page_is_in_the_toc_before_the_references():
    names = toc.documents()
    assert names.index(NOTATION) < names.index("book/references")
    assert names.index("book/kernel-regression") < names.index(NOTATION)


def test_the_notation_page_lists_each_symbol_once():
    symbols = defined_symbols()
    assert len(symbols) > 40
    repeated = sorted({symbol for symbol in symbols if symbols.count(symbol) > 1})
    assert not repeated, f"listed more than once: {repeated}"


def test_every_letter_the_book_uses_is_on_the_notation_page():
    known = set().union(*(letters(symbol) for symbol in defined_symbols()))
    unknown = [(where, math, sorted(letters(math) - known)) for where, math in every_math() if letters(math) - known]
    assert not unknown, f"letters the notation page does not define: {unknown[:5]}"


def test_the_book_has_math_to_check_in_every_place():
    wheres = {where for where, _ in every_math()}
    assert {"attention.md", "kernel-regression.md", "core.py:attention", "head.py:gaussian_head",
            "diagrams.py", "gaussian_band.py"} <= wheres


# --- one meaning each --------------------------------------------------------------------------

#: (what the book must not do, a pattern for it in any math). Each retires a second meaning a
#: symbol once had, or keeps a symbol from taking one.
SECOND_MEANINGS = [
    ("W alone: the attention matrix is A, and W is used for projections only", r"W(?!_\{?(?:Q|K|V|QK|OV|O)\b)"),
    ("A with a projection's subscript: A is the attention matrix", r"A_\{?[QKVqkv]"),
    ("w other than w_q, w_k, w_v (the weights are a_ij)", r"(?<![\\a-zA-Z])w(?!_\{?[qkv]\b)"),
    ("y, the ground truth (f(p_i)) or the noisy sample (s_i) of old", r"(?<![\\a-zA-Z])y(?![a-zA-Z])"),
    ("epsilon for the noise: it is sigma z", r"\\(?:var)?epsilon"),
    ("K_h for the kernel: it is kappa_h, K is the keys", r"K_\{?h"),
    ("k as an index or a count: k is a key", r"\\sum_\{?k\b|\{k\s*(?:=|\\ne)|/\s*k\b|\\sqrt\s*\{?k\}?(?![_a-z])"),
    ("m as an index: m is a count; coordinates are r", r"_\{?m\s*=|\\sum_\{?m\b|[qk]_\{?m\b"),
    ("d as a coordinate index: it is r", r"\\sum_\{?d\b|_\{[ij],\s*d\}"),
    ("x as a scalar location: positions are p", r"\(x\)|f\(x|x\s*-\s*x_"),
    ("c_1, c_2: c is the 1-D head's strength; the constants are C_1, C_2", r"(?<![\\a-zA-Z])c_\{?\d"),
    ("c as the intercept of the fit: it is gamma", r"=\s*c\s*\+"),
    ("e as Euler's number: e_ij is a score, write exp", r"(?<![\\a-zA-Z])e\^"),
    ("a score named other than e_ij", r"\\text\{score\}"),
    ("g other than g_c", r"(?<![\\a-zA-Z])g(?!_\{?c\b)"),
    ("Q_i, K_j: Q and K are the stacked matrices, rows are q_i, k_j", r"(?<![\\a-zA-Z])[QK]_\{?[ij]\b"),
    ("b alone: b_ij are the entries of B; ALiBi's slope is zeta", r"(?<![\\a-zA-Z])b(?!_)"),
    ("A s or B s: vectors are rows; the samples stacked as rows are the values V",
     r"(?<![\\a-zA-Z])[AB](?:\\[,;!]|\s)*s(?![_'a-zA-Z])"),
]


def second_meaning(pattern: str, math: str) -> bool:
    """Whether ``pattern`` occurs in the symbols of ``math`` (or, for a pattern about words, in its words)."""
    return bool(re.search(pattern, math if "text" in pattern else WORD_COMMANDS.sub(" ", math)))


@pytest.mark.parametrize(("what", "pattern"), SECOND_MEANINGS, ids=[what.split(":")[0] for what, _ in SECOND_MEANINGS])
def test_no_symbol_takes_a_second_meaning(what, pattern):
    hits = [(where, math) for where, math in all_math() if second_meaning(pattern, math)]
    assert not hits, f"{what}: {hits[:5]}"


def assigned(math: str, to: str) -> set[str]:
    """The letters set equal to ``to`` (a regex) in ``math``: ``f(p) = \\sin ...`` gives {"f"}."""
    return set(re.findall(rf"(?<![\\a-zA-Z])([A-Za-z])'?(?:_\{{?[ij]\}}?)?(?:\(p(?:_[ij])?\))?\s*=\s*{to}", math))


def test_the_ground_truth_and_the_noisy_sample_have_different_letters():
    truth, sample = set(), set()
    for where, math in every_math():
        truth |= assigned(math, r"\\sin")
        sample |= assigned(math, r"[^=]*?\\sigma\s*z")
        for noise in re.finditer(r"\\sigma\s*z", math):  # noise is only ever added to the ground truth f
            assert re.search(r"f\(p_?[ij]?\)\s*\+\s*$", math[: noise.start()]), f"{where}: ${math}$"
        assert not re.search(r"(?<!\\hat )(?<!\\hat)f\(p_?[ij]?\)\s*=\s*s_|s_[ij]\s*=\s*f\(p_[ij]\)\s*(?:$|,)", math), \
            f"{where}: ${math}$ makes the ground truth and the sample one"
    assert truth == {"f"}, f"the ground truth is named {truth}"
    assert sample == {"s"}, f"the noisy sample is named {sample}"


def test_alt_text_never_calls_the_weights_W():
    for page in pages():
        for alt in ALT.findall(page.read_text()):
            assert not re.search(r"\bW\b(?!_)", alt), f"{page.name}: alt text says W: {alt[:80]}"


def test_shown_code_never_names_the_attention_matrix_W():
    for where, node in shown_objects().items():
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        assert "W" not in names, f"{where} calls a matrix W: W is a projection"


def test_the_checks_catch_what_they_retire():
    """Each pattern matches the old text it retired, and not the book's notation."""
    assert letters(r"\hat y_i = \sum_k w_{ik} + \text{model} + \tau") == {"y", "i", "k", "w", "tau"}
    old = [r"W = \operatorname{softmax}(Q K^\top / \tau)", r"A_Q", r"w_{ij} \propto \exp(c\, x_i x_j)",
           r"y_i = \sin(2 \pi p_i)", r"y_j = f(x_j) + \varepsilon_j", r"K_h(u)", r"\sum_{k=1}^{N} \exp(e_{ik})",
           r"\sum_{m=1}^{d_k} q_m k_m", r"\sum_d q_{i,d}\, k_{j,d}", r"\hat f(x) = 1", r"c_1 h^4",
           r"\log \tau^* = c + \alpha", r"e^0 = 1", r"\text{score}_{ij}", r"g(x_i)", r"Q_i . K_j",
           r"e_{ij} / \tau - b\, |p_i - p_j|", r"\text{output} = B\, s"]
    new = [r"A = \operatorname{softmax}(Q K^\top / \tau)", r"W_Q W_{QK} W_K^\top", r"w_q w_k / \tau",
           r"f(p) = \sin(2 \pi p)", r"s_j = f(p_j) + \sigma z_j", r"\kappa_h(u)", r"\sum_{l=1}^{N} \exp(e_{il})",
           r"\sum_{r=1}^{d_k} q_r k_r", r"d_k = 3, \; k_j = x_j W_K", r"g_c'(x_i)", r"C_1 h^4", r"q_i \cdot k_j",
           r"e_{ij} / \tau - \zeta\, |p_i - p_j|", r"\text{output} = B V", r"\sigma \sqrt{\sum_j b_{ij}^2}",
           r"\begin{bmatrix} \rho^2 \\ -1 \end{bmatrix}", r"\Big(\frac{h^2}{2}\Big)", r"\bar f(p_i)", r"A s_i"]
    for _, pattern in SECOND_MEANINGS:
        assert any(second_meaning(pattern, math) for math in old), pattern
        assert not any(second_meaning(pattern, math) for math in new), pattern
    assert assigned(r"y_i = \sin(2 \pi p_i), \qquad s_i = y_i + \sigma z_i", r"\\sin") == {"y"}
    assert assigned(r"s_i = y_i + \sigma z_i", r"[^=]*?\\sigma\s*z") == {"s"}
    assert assigned(r"s'_i = f(p_i) + \sigma z'_i", r"[^=]*?\\sigma\s*z") == {"s"}, "a primed sample is still s"


#: D counts the draws of a random-feature head (frequencies, two features each, or centres, one each), never
#: its features or columns: wording that makes D a count of features, columns or repeated draws.
D_AS_FEATURES = re.compile(
    r"(?:features?|columns|cols|number of draws)(?: per token)?[,:]?\s*(?:\$D\$|``D``)"
    r"|(?:\$D(?:\s*=\s*[^$]*)?\$|``D``)[,:]?\s*(?:the\s+)?(?:random\s+)?(?:features|columns|cols)\b")


def d_texts() -> list[tuple[str, str]]:
    """(where, text) for every place D is written: pages (prose, captions, alt text), figure labels, and the
    docstrings of the package modules the book imports."""
    found = [(page.name, re.sub(r"\s+", " ", text_of(page))) for page in pages()]
    for path in FIGURE_SOURCES:
        found += [(path.name, node.value) for node in ast.walk(ast.parse(path.read_text()))
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    for module in book_modules():
        for node in ast.walk(ast.parse(module_path(module).read_text())):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                found.append((f"{module}:{getattr(node, 'name', '')}",
                              re.sub(r"\s+", " ", ast.get_docstring(node) or "")))
    return found


def test_d_counts_the_draws_of_a_random_feature_head_not_its_features():
    """D frequencies give 2 D features: D is never 'the number of random features', nor columns, nor repeated draws."""
    row = next(line for line in (ROOT / f"{NOTATION}.md").read_text().splitlines() if line.startswith("| $D$ |"))
    assert "frequencies" in row and "centres" in row and "$2D$" in row and "number of random features" not in row
    hits = [(where, found[0]) for where, text in d_texts() for found in D_AS_FEATURES.finditer(text)]
    assert not hits, f"D as a count of features or columns: {hits[:5]}"


def test_the_d_check_catches_the_old_wording():
    old = ["against the number of draws $D$: the median", "random features $D$", "$D = 512$ random features",
           "``D``, the features per token (``2 D`` for ``D`` frequencies)", "random features (``D`` cols)",
           "``D``: frequencies (``2 D`` columns) or centres (``D`` columns)."]
    new = ["frequencies or centres drawn, $D$", "$D = 256$ random frequencies", "for $D = 64$ frequencies",
           "the $2D$ features a token needs", "``D``: frequencies (two columns each, a cosine and a sine)",
           "the average of $D$ of them estimates the kernel", "a non-empty 1-D array of features",
           "cosine features, D = 64 (128 columns)"]
    assert all(D_AS_FEATURES.search(text) for text in old)
    assert not any(D_AS_FEATURES.search(text) for text in new)


# --- one form each -----------------------------------------------------------------------------

#: A symbol of a piece of math: a word (``\text{head}``), an accented letter (``\bar f``), a command (a Greek
#: letter if it names one, else skipped with its sub- and superscripts), a word of code in a literal block
#: (``sqrt``, ``tau_p``: skipped too), or a letter.
SYMBOL = re.compile(r"\\(?:text|operatorname|mathrm)\s*\{(?P<word>[^{}]*)\}"
                    r"|\\(?P<accent>bar|hat|tilde)\s*\{?\s*(?P<accented>[A-Za-z])\}?"
                    r"|\\(?P<command>[A-Za-z]+)|(?P<code>[A-Za-z]{2,})|(?P<letter>[A-Za-z])")
#: A symbol applied to an argument: a parenthesis right after it, or after ``\!`` and sizing commands
#: (``\kappa_h(u)``, ``\exp\!\big(``); a space or ``\,`` before it makes a product (``h\, (1 - x)``).
APPLIED = re.compile(r"(?:\\!|\\(?:bigg|Bigg|big|Big|left)(?![A-Za-z]))*\(")
#: An argument that is a grid position and nothing else: ``p_i``, ``p_{i+1}``.
GRID_POSITION = re.compile(r"\s*p_(?:\{[^{}]*\}|\w)\s*")


def script(math: str, k: int) -> tuple[str, int]:
    """The sub- or superscript that starts at ``math[k]`` (a braced group, a command or one character), and its end."""
    while k < len(math) and math[k].isspace():
        k += 1
    if math.startswith("{", k):
        depth = 0
        for end in range(k, len(math)):
            depth += {"{": 1, "}": -1}.get(math[end], 0)
            if depth == 0:
                return math[k + 1:end], end + 1
        return math[k + 1:], len(math)
    command = re.match(r"\\[A-Za-z]+|\\?.", math[k:], re.S)
    return (command[0], k + len(command[0])) if command else ("", k)


def argument(math: str, k: int) -> str:
    """What the parenthesis that opens at ``math[k]`` holds."""
    depth = 0
    for end in range(k, len(math)):
        depth += {"(": 1, ")": -1}.get(math[end], 0)
        if depth == 0:
            return math[k + 1:end]
    return math[k + 1:]


def symbol_name(found: re.Match) -> str:
    """A symbol as TeX: ``\\{head}`` for a word, ``\\bar f``, ``\\omega``, ``f``."""
    if found["word"] is not None:
        return rf"\{{{found['word'].strip()}}}"
    if found["accent"]:
        return rf"\{found['accent']} {found['accented']}"
    return rf"\{found['command']}" if found["command"] else found["letter"]


def symbol_uses(math: str) -> list[tuple[str, str | None, str | None]]:
    r"""(symbol, subscript, argument) for every symbol of ``math`` that is not inside a sub- or superscript.

    The subscript is None, ``"index"`` (it holds a Latin letter or a digit from 1 to 9: an index, a count or a
    label, as in $p_i$, $\text{head}_M$, $\tau_p$) or ``"other"`` (no such thing: $0$, a sign, an
    operator, a Greek letter, as in $\text{head}_{+\delta}$); the argument is None, ``"grid"`` (a grid
    position alone, $p_i$) or ``"any"``.
    """
    math = re.sub(r"\\(?:mathbb|mathcal|begin|end)\s*(?:\{[^{}]*\}|[A-Za-z0-9])", " ", math)
    uses, k = [], 0
    while k < len(math):
        found = SYMBOL.match(math, k)
        if not found or found["code"] or (found["command"] and found["command"] not in GREEK):
            k = script(math, k + 1)[1] if math[k] in "_^" else (found.end() if found else k + 1)
            continue
        k, subscript = found.end(), None
        while k < len(math) and math[k] in "_^'":
            if math[k] == "'":
                k += 1
                continue
            kind, (content, k) = math[k], script(math, k + 1)
            if kind == "_" and subscript is None:
                subscript = "index" if re.search(r"[A-Za-z1-9]", re.sub(r"\\[A-Za-z]+", "", content)) else "other"
        applied = APPLIED.match(math, k)
        given = None
        if applied:
            given = "grid" if GRID_POSITION.fullmatch(argument(math, applied.end() - 1)) else "any"
        uses.append((symbol_name(found), subscript, given))
    return uses


@functools.cache
def notation_forms() -> dict[str, frozenset]:
    """Every form in which the notation page writes each symbol, anywhere on the page."""
    forms: dict[str, set] = {}
    for math in math_of(text_of(ROOT / f"{NOTATION}.md")):
        for symbol, subscript, given in symbol_uses(math):
            forms.setdefault(symbol, set()).add((subscript, given))
    return {symbol: frozenset(found) for symbol, found in forms.items()}


def new_form(symbol: str, subscript: str | None, given: str | None, forms=None) -> bool:
    """Whether the notation page never writes ``symbol`` in this form (a function of any position covers a grid
    position). A symbol the page does not write at all is the business of the letters' test."""
    forms = notation_forms() if forms is None else forms
    if symbol not in forms:
        return False
    return not any(sub == subscript and arg in (given, "any") for sub, arg in forms[symbol])


def test_every_symbol_keeps_the_forms_the_notation_page_gives_it():
    """A symbol written in a form the page never gives it has a second meaning: $e$ alone (Euler's number, where
    $e_{ij}$ are scores), $\\text{head}_{+}$ (an offset, where heads are numbered $1, \\dots, M$), $V(\\rho)$ (a
    function, where $V$ is the values), $\\bar f(p_i + \\delta)$ (off the grid, where $\\bar f$ is defined on it)."""
    hits = [(where, symbol, subscript, given, math[:70]) for where, math in all_math()
            for symbol, subscript, given in symbol_uses(math) if new_form(symbol, subscript, given)]
    assert not hits, f"symbols in forms the notation page does not give them: {hits[:8]}"


# --- where positions lie -----------------------------------------------------------------------

#: An interval in math, ``[0, 1]``, ``[0, N - 1]``.
INTERVAL = re.compile(r"\[\s*([^\[\],]+?)\s*,\s*([^\[\],]+?)\s*\]")
#: A position given a number in math, the whole of one side: ``p = 2/3``, ``p_i \le 3``, ``p_J = 0.4`` (not the
#: rescaled ``\tilde p``, nor ``p_i = 2 p_j``).
POSITION_VALUE = re.compile(r"(?<![\\a-zA-Z])(?<!\\tilde )p(?:_\{?[\w+-]+\}?)?\s*(?:=|<|>|\\le|\\ge|\\approx)\s*"
                            r"(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)\s*(?=$|[,;:)\]]|\\[qt,;])")


def position_row() -> str:
    """The row of ``p_i`` in the notation page's tables."""
    return next(line for line in (ROOT / f"{NOTATION}.md").read_text().splitlines() if line.startswith("| $p_i$ |"))


def position_ranges(row: str | None = None) -> tuple[str, dict[str, list[str]]]:
    """The range of ``p_i`` on the notation page (its third column), and the intervals beyond it that its second
    column grants each page: those written in math after the page's ``{doc}`` link, up to the next link."""
    _, meaning, shape = (cell.strip() for cell in (row or position_row()).strip().strip("|").split(" | "))
    default = INTERVAL.search(" ".join(math_of(shape)))
    granted: dict[str, list[str]] = {}
    for stem, part in re.findall(r"\{doc\}`([\w-]+)`(.*?)(?=\{doc\}|$)", meaning):
        granted.setdefault(stem, []).extend(match[0] for math in math_of(part) for match in [INTERVAL.search(math)]
                                            if match)
    return default[0], granted


def interval_bounds(interval: str, n: int | None = None) -> tuple[float, float]:
    """The bounds of ``[a, b]``, with ``N`` the number of positions (unbounded above when not given)."""
    N = sp.Symbol("N")
    bounds = [sp.sympify(side.replace("\\infty", "oo"), locals={"N": N})
              for side in INTERVAL.fullmatch(interval).groups()]
    value = {N: n if n is not None else sp.oo}
    return tuple(float(bound.subs(value)) for bound in bounds)


def allowed(stem: str, values: np.ndarray, row: str | None = None) -> bool:
    """Whether positions lie in the notation page's range, or in one of the intervals it grants the page."""
    default, granted = position_ranges(row)
    for interval in [default, *granted.get(stem, [])]:
        low, high = interval_bounds(interval, values.size if values.ndim else None)
        if values.size == 0 or (values.min() >= low and values.max() <= high):
            return True
    return False


def test_the_notation_page_gives_positions_a_range_and_grants_a_page_more():
    default, granted = position_ranges()
    assert interval_bounds(default) == (0.0, 1.0)
    pages_ = {name.split("/")[-1] for name in toc.documents()}
    assert set(granted) <= pages_, "every page granted more is in the book"
    assert all(granted.values()), "each grant names its intervals"


def test_a_page_that_positions_may_leave_the_unit_interval_says_so():
    """A page the notation page lets place positions beyond $[0, 1]$ states the interval itself, in its math."""
    _, granted = position_ranges()
    for stem, intervals in granted.items():
        said = " ".join(re.sub(r"\s+", " ", math) for math in math_of(text_of(ROOT / f"book/{stem}.md")))
        for interval in intervals:
            assert re.sub(r"\s+", " ", interval) in said, f"{stem} never says that positions lie in {interval}"


def test_every_position_the_book_writes_down_lies_where_the_notation_page_says():
    hits = []
    for page in pages():
        for math in math_of(text_of(page)):
            for value in POSITION_VALUE.findall(math):
                number = float(sp.Rational(value.replace(" ", "")))
                if not allowed(page.stem, np.array(number)):
                    hits.append((page.name, math))
    assert not hits, f"positions outside the range the notation page gives them: {hits[:5]}"


@contextlib.contextmanager
def positions_given(stem: str):
    """Record the ``positions`` that the code of ``book/<stem>.md`` passes to any function of the package."""
    seen: list[tuple[str, np.ndarray]] = []

    def watch(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def watched(*args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(f"{stem}.md, cell"):  # the chapter's own code (chapters.book.run_chapter)
                with contextlib.suppress(TypeError, ValueError):
                    positions = signature.bind(*args, **kwargs).arguments.get("positions")
                    if positions is not None:
                        seen.append((caller, np.asarray(positions, dtype=float)))
            return function(*args, **kwargs)

        return watched

    modules = [importlib.import_module(info.name)
               for info in pkgutil.walk_packages(selfattention.__path__, "selfattention.")]
    wrappers: dict = {}
    with contextlib.ExitStack() as patches:
        for module in [selfattention, *modules]:
            for name, value in list(vars(module).items()):
                if (inspect.isfunction(value) and value.__module__.startswith("selfattention")
                        and "positions" in inspect.signature(value).parameters):
                    wrapper = wrappers.setdefault(value, watch(value))
                    patches.enter_context(mock.patch.object(module, name, wrapper))
        yield seen


CHAPTERS = [name.split("/")[-1] for name in toc.documents() if code_cells(name.split("/")[-1])]


@pytest.mark.slow
@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_positions_a_chapter_gives_the_package_lie_where_the_notation_page_says(stem):
    """Run the chapter and read every ``positions`` its code passes to the package."""
    with positions_given(stem) as seen:
        run_chapter(stem)
    # heads-together, circuits: the stream's positions are made in the package (tokens.positions, from the rows).
    # in-context: a prompt's inputs are vectors of d numbers, passed as inputs and query, never as positions.
    makes_none = {"introduction", "attention", "heads-together", "circuits", "in-context"}
    assert seen or stem in makes_none, "the chapter passes positions to the package"
    outside = [(cell, float(p.min()), float(p.max())) for cell, p in seen if not allowed(stem, p)]
    assert not outside, f"{stem} places positions beyond the range the notation page gives them: {outside[:5]}"


def test_the_checks_catch_the_second_meanings_they_were_written_for():
    """Each clash found in chapters 10 and 11 and their package (issue 30), as the text had it, fails the checks;
    the text as it is now passes them."""
    old_clashes = {  # the old text, and the symbol in a form the notation page does not give it
        "a factor $e$ of each other": ("e", None, None),
        r"\frac{\text{head}_{+}(X)_i - \text{head}_{-}(X)_i}{2\delta}": (r"\{head}", "other", "any"),
        r"\text{head}_{-}(X)_i - 2\, \text{head}_{0}(X)_i": (r"\{head}", "other", "any"),
        r"\text{head}_{+\delta}(X)_i": (r"\{head}", "other", "any"),
        r"V(\rho) = \frac{\rho^4 - 1/\rho}{(\rho^2 - 1)^2}": ("V", None, "any"),
    }
    for text, use in old_clashes.items():
        uses = symbol_uses(" ".join(math_of(text)) or text)
        assert use in uses and new_form(*use), text
    # f-bar off the grid, against the notation page that defined it only at grid positions.
    grid_only = {r"\bar f": frozenset({(None, None), (None, "grid")})}
    assert new_form(*symbol_uses(r"\bar f(p_i + \delta)")[0], forms=grid_only)
    assert not new_form(*symbol_uses(r"\bar f(p_i)")[0], forms=grid_only)
    # What the book writes now.
    for text in [r"\text{head}_1(X)_i - \text{head}_2(X)_i", r"\exp(p_i) \le \exp(1)", r"\bar f(p_i + \delta)",
                 r"a^{(-i)}_{il}\, (\mathbb{1}[l = j] - a^{(-i)}_{ij})", r"\kappa_h(p_i - p_j)",
                 r"\xi_1 \cos(\omega_1 u)", r"W_O = [1, -1]^\top / (2\delta)", r"\sum_j b_{ij}^2",
                 r"\int \chi_\rho(u)^2\, du", r"\kappa_\rho(u)"]:
        assert not [use for use in symbol_uses(text) if new_form(*use)], text
    # Positions: the row as it was gives chapter 11's long signal and its positions in tokens no room.
    old_row = "| $p_i$ | position of token $i$, $p_i = (i - 1) / (N - 1)$; $p$ alone is a position | $[0, 1]$ |"
    long, tokens = np.linspace(0.0, 3.0, 298), np.arange(512.0)
    assert not allowed("positions-and-masks", long, old_row) and not allowed("positions-and-masks", tokens, old_row)
    assert allowed("positions-and-masks", long) and allowed("positions-and-masks", tokens)
    assert not allowed("learning", long), "a grant is the page's own"
    assert allowed("learning", np.linspace(0.0, 1.0, 5), old_row)
    assert POSITION_VALUE.findall(r"p_i \le 3,") == ["3"] and not POSITION_VALUE.findall(r"\tilde p_i = 2 p_i - 1")


# --- the word kernel ---------------------------------------------------------------------------

#: Words of a sentence about running the book's code, where 'kernel' would mean a Jupyter kernel (or a BLAS
#: routine), not the smoothing kernel.
RUNNING_CODE = re.compile(r"\b(?:Jupyter|live|Live|Binder|Thebe|session|server|connected|browser|cells?|OpenBLAS)\b")
LIVE_CODE_SCRIPTS = sorted((ROOT / "_ext" / "live_code" / "static").glob("*.js"))


def sentences(text: str) -> list[str]:
    """The sentences of a page's prose, headings and captions included (code cells, roles and inline code removed)."""
    flat = re.sub(r"\s+", " ", re.sub(r"(?:\{[\w:-]+\})?`[^`]*`", "", text))
    return re.split(r"(?<=[.;:!?])\s+(?=[A-Z{$(])|(?<=\s)#+\s", flat)


def test_the_word_kernel_means_the_smoothing_kernel():
    """'A live Python session (a Jupyter kernel)' once, in the introduction; elsewhere a kernel is the smoothing kernel:
    no sentence of the book that speaks of running its code says kernel, nor does a message of the live-code script."""
    said = [(page.name, s) for page in pages() for s in sentences(text_of(page)) if "kernel" in s.lower()]
    running = [(name, s[:120]) for name, s in said if RUNNING_CODE.search(s)]
    defining = [name for name, s in said if "a live Python session (a Jupyter kernel)" in s]
    assert defining == ["introduction.md"], "the Jupyter kernel is named once, where live code is first explained"
    assert {name for name, _ in running} == {"introduction.md"}, f"kernel for running code: {running}"
    for script in LIVE_CODE_SCRIPTS:
        messages = re.findall(r"`[^`]*`|\"[^\"\n]*\"", script.read_text())  # template literals and strings
        shown = [m for m in messages if re.search(r"\bkernels?\b", m)]
        assert not shown, f"{script.name} tells the reader of a kernel: {shown}"


def test_the_kernel_check_catches_the_old_wording():
    old = ["## Live in a kernel", "then become editable and run in a Jupyter kernel, on Binder by default.",
           "A line under the chapter title says which kernel the page is connected to.",
           "The first cell below runs as soon as the kernel is ready.",
           "Your browser compares your entry with it, with no kernel.",
           "OpenBLAS picks its kernels and threads for the processor."]
    for text in old:
        assert any(RUNNING_CODE.search(s) and "kernel" in s for s in sentences(text)), text
    kept = ["Each of these is a choice of *kernel*, a rule for how much a query attends to a key.",
            "The Gaussian kernel decreases at every distance, so it never has to be set up for a span."]
    for text in kept:
        assert not any(RUNNING_CODE.search(s) for s in sentences(text)), text


# --- issue 39: superscripts, N, positions moved, theta, words and distributions ---------------------

#: A numbered superscript in parentheses, ``A^{(1)}``, ``x_i^{(2)}``, ``a^{(1)}_{ij}``, with the symbol it sits on
#: (a letter or a Greek letter, with a projection's subscript kept: ``W_O``).
HEAD_SUPERSCRIPT = re.compile(r"(\\[A-Za-z]+|[A-Za-z])(?:_\{?([A-Za-z]+)\}?)?\s*\^\{\((?:\d+|M)\)")
#: The symbols of one head, which a parenthesised number may number (``\text{head}_1``'s $A^{(1)}$); the stream
#: after a layer ($X$, $x_i$) and a layer's $W_O$ belong to a layer and take a bracketed number, ``X^{[1]}``.
A_HEADS_OWN = {"W_Q", "W_K", "W_V", "A", "a", r"\tau"}


def parenthesised_on(math: str) -> set[str]:
    """The symbols that carry a parenthesised number in ``math``: ``W_O`` for ``W_O^{(1)}``, ``x`` for ``x_i^{(1)}``."""
    return {base + (f"_{sub}" if base == "W" and sub else "") for base, sub in HEAD_SUPERSCRIPT.findall(math)}


def test_a_parenthesised_number_numbers_a_head_and_a_bracketed_one_a_layer():
    """The notation page numbers the heads of one layer $W_Q^{(1)}, A^{(1)}$; chapter 12 once numbered its layers so
    too ($X^{(1)}$, $W_O^{(1)}$): a layer's number is in square brackets, $X^{[1]}$."""
    hits = [(where, math[:70]) for where, math in all_math() if parenthesised_on(math) - A_HEADS_OWN]
    assert not hits, f"a parenthesised superscript on a layer's symbol: {hits[:5]}"
    notation = (ROOT / f"{NOTATION}.md").read_text()
    assert parenthesised_on(" ".join(math_of(notation))) <= A_HEADS_OWN
    assert "$X^{[1]}$" in notation and "$W_O^{[1]}$" in notation


#: A position given as a formula of its index and N, in math: ``p_i = (i - 1) / (N - 1)``, ``p_i = i/N``.
POSITION_FORMULA = re.compile(r"(?<![\\a-zA-Z~])p_i\s*=\s*([0-9iN()+\-/* ]+?)\s*(?=$|[,;]|\\[a-z])")


def position_formulas(text: str) -> list[str]:
    """The right sides of every ``p_i = <formula of i and N>`` in the math of ``text`` (the rescaled ``\\tilde p``
    left out)."""
    found = []
    for math in math_of(text):
        found += [side.strip() for side in POSITION_FORMULA.findall(re.sub(r"\\tilde\s*p", "q", math))]
    return [side for side in found if "i" in side]


def formula_positions(formula: str, n: int) -> np.ndarray:
    """The formula's positions of the tokens ``i = 1, ..., N`` (the notation page's range of ``i``) for ``N = n``."""
    i, N = sp.symbols("i N")
    expression = sp.sympify(formula, locals={"i": i, "N": N})
    return np.array([float(expression.subs({i: k, N: n})) for k in range(1, n + 1)])


def test_a_page_that_gives_positions_a_formula_of_i_and_n_keeps_the_notation_pages_i_and_n():
    """With $i = 1, \\dots, N$ the tokens, as on the notation page, a page's $p_i$ formula puts the tokens where the
    notation page says. Chapter 12 once counted its start marker in N, rows $0, \\dots, N - 1$ at
    $p_i = i/(N - 1)$: its last token fell at $N/(N - 1) > 1$."""
    hits = []
    for page in pages():
        for formula in position_formulas(text_of(page)):
            for n in (2, 3, 12, 1000):
                if not allowed(page.stem, formula_positions(formula, n)):
                    hits.append((page.name, formula, n))
    assert not hits, f"token positions outside the range the notation page gives them: {hits[:5]}"
    assert position_formulas(text_of(ROOT / "book/heads-together.md")), "chapter 12 still says where its rows are"


def test_the_positions_of_chapter_12s_stream_lie_where_the_notation_page_says():
    """The stream holds its positions centred (made in the package, so the run-the-chapter check does not see
    them); the notation page's row of $p_i$ grants chapter 12 that interval."""
    from selfattention import tokens

    for rows in (2, 13, 201):
        assert allowed("heads-together", tokens.positions(rows))


def differentiated_projections(math: str) -> set[str]:
    """The projections a loss is differentiated by in ``math``: ``W_O`` for ``\\partial L / \\partial W_O``."""
    return set(re.findall(r"\\partial\s*L\s*\}?\s*\{?\s*(?:/\s*)?\\partial\s*(W_[QKVO])", math))


def test_theta_is_an_entry_of_every_projection_the_book_differentiates_the_loss_by():
    """$\\theta$ was 'one entry of $W_Q$ or $W_K$', but chapter 12 checks and trains $W_V$ and $W_O$ too."""
    used = set().union(*(differentiated_projections(math) for _, math in every_math()))
    assert {"W_Q", "W_O"} <= used, "the check finds the book's gradients"
    row = next(line for line in (ROOT / f"{NOTATION}.md").read_text().splitlines() if line.startswith("| $\\theta$ |"))
    missing = sorted(w for w in used if f"${w}$" not in row)
    assert not missing, f"the row of theta leaves out {missing}"


#: A word in math that stands for a quantity: ``\text{margin}`` (not a subscript's ``d_{\text{vocab}}``, nor a
#: phrase with spaces, ``\text{previous part of }``).
WORD_SYMBOL = re.compile(r"(?<![_^]\{)(?<![_^])\\text\s*\{([A-Za-z]+)\}")
#: Words that stand for a quantity where they are used, not yet on the notation page (other chapters: a
#: follow-up, not a licence to add more).
WORDS_NOT_YET_ON_THE_PAGE = {"bias", "variance", "lag"}
#: Words that name a unit of a count in math ("$2 N D$ exponentials"), not a quantity.
UNIT_WORDS = {"exponentials"}


def test_every_word_the_book_uses_as_a_symbol_is_on_the_notation_page():
    """Chapter 12 wrote $\\text{half}$, $\\text{margin}$, $\\text{count}$ and $\\text{others}$ in its math, and
    the notation page had none of them."""
    known = {word for symbol in defined_symbols() for word in WORD_SYMBOL.findall(symbol)}
    used = {(word, where) for where, math in every_math() for word in WORD_SYMBOL.findall(math)}
    allowed_words = known | WORDS_NOT_YET_ON_THE_PAGE | UNIT_WORDS
    unknown = sorted((word, where) for word, where in used if word not in allowed_words)
    assert not unknown, f"words used as symbols that the notation page does not give: {unknown[:8]}"


def test_every_normal_distribution_the_book_writes_is_on_the_notation_page():
    r"""$\mathcal N(0, 2/\tau)$ and $\mathcal N(0, \tau/8)$ are normal distributions of another variance than
    $1$; the notation page gives $\mathcal{N}(0, \nu)$ for them (it gave only the standard one)."""
    normal = re.compile(r"\\mathcal\s*\{?N\}?\s*\(\s*0\s*,\s*([^()]*?)\s*\)")
    variances = {variance for _, math in all_math() for variance in normal.findall(math)}
    assert {"1", r"2/\tau"} <= variances
    defined = {variance for symbol in defined_symbols() for variance in normal.findall(symbol)}
    assert "1" in defined and r"\nu" in defined, "the standard normal and the normal of variance nu are defined"


def test_no_docstring_of_the_book_names_a_period_by_a_letter_of_the_notation_page():
    """``tokens.periodic_sequences`` called a sequence's period ``h``, the notation page's bandwidth."""
    known = set().union(*(letters(symbol) for symbol in defined_symbols()))
    named = re.compile(r"\bperiod\s+(?:``|:math:`)\\?([A-Za-z]+)(?:``|`)")
    hits = []
    for module in book_modules():
        for node in ast.walk(ast.parse(module_path(module).read_text())):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                hits += [(module, name) for name in named.findall(ast.get_docstring(node) or "") if name in known]
    assert not hits, f"a period named by a symbol of the notation page: {hits}"


def test_the_checks_catch_the_clashes_of_issue_39():
    """Each clash of chapter 12 as the text had it fails the checks above; the text as it is now passes them."""
    assert parenthesised_on(r"X^{(1)} = X + A^{(1)} X\, W_V^{(1)} W_O^{(1)}") - A_HEADS_OWN == {"X", "W_O"}
    assert parenthesised_on(r"o_i \cdot x_j^{(1)}") == {"x"}
    assert not parenthesised_on(r"X^{[1]} = X + A^{[1]} X\, W_V^{[1]} W_O^{[1]}")
    assert not parenthesised_on(r"\text{head}_1(X) = \operatorname{softmax}(X W_Q^{(1)}) / \tau^{(1)}") - A_HEADS_OWN
    assert position_formulas(r"with $N$ rows in all, row $i$ is at $p_i = i/(N - 1)$, from") == ["i/(N - 1)"]
    assert not allowed("heads-together", formula_positions("i/(N - 1)", 12))
    assert allowed("heads-together", formula_positions("i/N", 12))
    assert position_formulas(r"$\tilde p_i = 2 p_i - 1$ and $p_i = (i - 1) / (N - 1)$") == ["(i - 1) / (N - 1)"]
    old_row = "| $p_i$ | position of token $i$; {doc}`positions-and-masks` in $[0, 3]$ | $[0, 1]$ |"
    from selfattention import tokens

    assert not allowed("heads-together", tokens.positions(13), old_row)
    assert differentiated_projections(r"\frac{\partial L}{\partial W_O} &= (A V)^\top") == {"W_O"}
    assert differentiated_projections(r"\partial L / \partial W_Q") == {"W_Q"}
    old_theta = "| $\\theta$ | one entry of $W_Q$ or $W_K$, as a variable of $L$ | scalar |"
    assert "$W_O$" not in old_theta
    assert WORD_SYMBOL.findall(r"\frac{x}{\text{count}} + \exp(\text{margin}) + d_{\text{vocab}} + \text{part of }") \
        == ["count", "margin"]
    named = re.compile(r"\bperiod\s+(?:``|:math:`)\\?([A-Za-z]+)(?:``|`)")
    assert named.findall("Each sequence draws its period ``h`` uniformly") == ["h"]
    assert not named.findall("Each sequence draws its period uniformly from ``periods``")
