"""Every symbol of the notation page keeps its one meaning, in every page of the table of contents.

The math of the book is read from four places: the pages the table of
contents lists (prose, captions and alt text; code cells removed), the
docstrings of the package functions the pages show (``literalinclude``),
the code those pages show, and the labels of the figures
(``src/selfattention/figures``, the widget's title). A page added to
``_toc.yml`` is read too. The tests check that the notation page defines
every letter the book uses, and that the second meanings the book once gave
its symbols do not come back.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tools import ROOT, toc

NOTATION = "book/notation"
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
    ("W alone: the attention matrix is A, and W is used for projections only", r"W(?!_\{?(?:Q|K|V|QK|O)\b)"),
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
    hits = [(where, math) for where, math in every_math() if second_meaning(pattern, math)]
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
