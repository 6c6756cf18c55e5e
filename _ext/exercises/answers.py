"""The ``answer-box`` directive: a number or a small matrix, checked in the page with no kernel.

The expected value is a value the chapter glued (computed by the package in
a code cell above the box); the directive reads it from the executed
notebook through myst-nb's glue data, at build time, and writes it into the
page as JSON with the tolerance (``data-answer``). The box is a ``<form>``:
a labelled input (a number) or a grid of labelled inputs in a
``<fieldset>`` (a matrix, one input per entry, "row 2, column 3"), a submit
button, so that Enter checks, and a ``role="status"`` paragraph
(``aria-live``) where ``static/answer-box.js`` says whether the answer is
right and, if not, only whether it is too high or too low: never by how
much, which would give the answer away. Every input names what it asks
for (the label, or "row 2, column 3" in the matrix's ``<fieldset>`` named
by its legend) and is described by the hint and the status line. After
:data:`TRIES_BEFORE_SOLUTION` wrong answers the box shows a button that
opens the exercise's solution (its ``<details>``, found at build time).
"""

from __future__ import annotations

import ast
import html
import json
import math
from collections.abc import Callable
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

#: Default relative tolerance: an answer rounded to three significant figures passes.
DEFAULT_RTOL = 0.01
#: The largest matrix a box asks for (rows and columns): beyond it, a reader would rather run code.
MAX_SIDE = 8
BOX_TITLE = "Check your answer"
#: Wrong answers after which the box offers the solution (``static/answer-box.js`` reads it from the form).
TRIES_BEFORE_SOLUTION = 3
#: The most decimals a question may ask for: a double holds about 15 significant digits.
MAX_DECIMALS = 12


class answer_box(nodes.General, nodes.Element):
    """A box: ``expected`` (rows of numbers), ``rtol``, ``atol``, ``decimals``, ``matrix``; its child is the label."""


class answer_label(nodes.TextElement):
    """The box's label: inline markup (math included), written as ``<label>`` or ``<legend>``."""


def _finite_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def expected_rows(text: str) -> tuple[list[list[float]], bool]:
    """The glued ``text/plain`` as rows of floats, and whether it is a matrix (a list) or a number.

    Raises
    ------
    ValueError
        Unless ``text`` is a finite number, a list of finite numbers (one row)
        or a rectangular list of such lists, at most :data:`MAX_SIDE` on a side.
    """
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"the glued value {text[:60]!r} is not a number or a list of lists of numbers "
                         "(glue a float, or array.tolist())") from None
    if _finite_number(value):
        return [[float(value)]], False
    rows = value if isinstance(value, list) and all(isinstance(row, list) for row in value) else [value]
    if not (isinstance(value, list) and rows and rows[0]):
        raise ValueError(f"the glued value {text[:60]!r} is not a number or a non-empty list of numbers")
    if any(len(row) != len(rows[0]) for row in rows) or not all(_finite_number(x) for row in rows for x in row):
        raise ValueError(f"the glued value {text[:60]!r} is not a rectangular matrix of finite numbers")
    if len(rows) > MAX_SIDE or len(rows[0]) > MAX_SIDE:
        raise ValueError(f"the glued matrix is {len(rows)} x {len(rows[0])}: "
                         f"a box takes at most {MAX_SIDE} x {MAX_SIDE}")
    return [[float(x) for x in row] for row in rows], True


def tolerance_words(rtol: float, atol: float) -> str:
    """"1 %", "0.001 or 1 %": how far from the answer an entry may be, for the page."""
    parts = []
    if atol:
        parts.append(f"{atol:g}")
    if rtol:
        parts.append(f"{100 * rtol:g} %")
    return " or ".join(parts) if parts else "exactly"


class AnswerBox(SphinxDirective):
    """``answer-box``: the argument is a glued name; ``:label:`` (inline markup) names the answer."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Callable]] = {
        "label": directives.unchanged_required,
        "rtol": directives.unchanged_required,
        "atol": directives.unchanged_required,
        "decimals": directives.nonnegative_int,
    }

    def _tolerance(self, name: str, default: float) -> float:
        try:
            value = float(self.options.get(name, default))
        except ValueError:
            raise self.error(f"answer-box: :{name}: must be a number, got {self.options[name]!r}") from None
        if not (math.isfinite(value) and value >= 0):
            raise self.error(f"answer-box: :{name}: must be finite and >= 0, got {value!r}")
        return value

    def _decimals(self, key: str) -> int | None:
        """``:decimals:``, the precision the question asks for ("to four decimals"), or None."""
        if "decimals" not in self.options:
            return None
        if {"rtol", "atol"} & self.options.keys():
            raise self.error(f"answer-box {key}: :decimals: sets the tolerance; give it without :rtol: and :atol:")
        if self.options["decimals"] > MAX_DECIMALS:
            raise self.error(f"answer-box {key}: :decimals: must be at most {MAX_DECIMALS}, "
                             f"got {self.options['decimals']}")
        return self.options["decimals"]

    def run(self):
        from myst_nb.core.variables import RetrievalError
        from myst_nb.ext.glue.utils import retrieve_glue_data

        key = self.arguments[0]
        if "label" not in self.options:
            raise self.error(f"answer-box {key}: a :label: is required (what the reader types, e.g. $\\tau =$)")
        try:
            data = retrieve_glue_data(self.state.document, key).data
            rows, matrix = expected_rows(data.get("text/plain", ""))
        except (RetrievalError, ValueError) as exc:
            raise self.error(f"answer-box {key}: {exc}") from None
        decimals = self._decimals(key)
        if decimals is None:
            rtol, atol = self._tolerance("rtol", DEFAULT_RTOL), self._tolerance("atol", 0.0)
        else:  # the precision the question asks for sets the tolerance (answer-box.js compares the rounded answer)
            rtol, atol = 0.0, 0.5 * 10.0**-decimals
        if rtol == 0 and atol == 0:
            raise self.error(f"answer-box {key}: a tolerance of 0 would refuse a correctly rounded answer")
        node = answer_box(ids=[f"answer-{key}"], expected=rows, matrix=matrix, rtol=rtol, atol=atol,
                          decimals=decimals)
        label_nodes, messages = self.state.inline_text(self.options["label"], self.lineno)
        node += answer_label("", "", *label_nodes)
        self.set_source_info(node)
        return [node, *messages]


def _input(ident: str, box: str, aria_label: str | None = None) -> str:
    name = f' aria-label="{aria_label}"' if aria_label else ""
    return (f'<input id="{ident}" class="answer-box-input" type="text" autocomplete="off" '
            f'autocapitalize="off" spellcheck="false"{name} aria-describedby="{box}-hint {box}-feedback">')


def solution_id(node: nodes.Element, document: nodes.document) -> str | None:
    """The id of the solution of the exercise that holds ``node`` (sphinx-exercise's ``target_label``), if any."""
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

    exercise = node.parent
    while exercise is not None and not isinstance(exercise, exercise_node | exercise_enumerable_node):
        exercise = exercise.parent
    if exercise is None:
        return None
    for solution in document.findall(solution_node):
        if solution.get("target_label") == exercise.get("label") and solution["ids"]:
            return solution["ids"][0]
    return None


def visit_answer_box(self, node: answer_box) -> None:
    ident = node["ids"][0]
    data = {"expected": node["expected"], "rtol": node["rtol"], "atol": node["atol"],
            "decimals": node["decimals"], "matrix": node["matrix"]}
    solution = solution_id(node, self.document)
    offer = (f' data-solution="{html.escape(solution)}" data-tries="{TRIES_BEFORE_SOLUTION}"'
             if solution else "")
    self.body.append(
        f'<form class="answer-box" id="{ident}" data-answer="{html.escape(json.dumps(data))}"{offer} novalidate>'
        f'<p class="answer-box-title">{BOX_TITLE}</p>'
        + ('<fieldset class="answer-box-fields">' if node["matrix"] else '<div class="answer-box-fields">'))


def depart_answer_box(self, node: answer_box) -> None:
    ident, rows = node["ids"][0], node["expected"]
    if node["matrix"]:
        cells = "".join(_input(f"{ident}-{r}-{c}", ident, f"row {r + 1}, column {c + 1}")
                        for r in range(len(rows)) for c in range(len(rows[0])))
        columns = f"repeat({len(rows[0])}, minmax(4.5em, 8em))"
        fields = (f'<div class="answer-box-grid" style="grid-template-columns: {columns}">'
                  f"{cells}</div></fieldset>")
    else:
        fields = _input(f"{ident}-0-0", ident) + "</div>"
    what = "each entry" if node["matrix"] else "the answer"
    if node["decimals"] is None:
        rule = f"An answer within {tolerance_words(node['rtol'], node['atol'])} of {what} counts as right."
    else:
        rule = (f"Give {what} to {node['decimals']} decimals: one that rounds to the same "
                f"{node['decimals']} decimals counts as right.")
    solution = solution_id(node, self.document)
    # Hidden until the reader has tried TRIES_BEFORE_SOLUTION times; never shown without JavaScript.
    offer = (f'<p class="answer-box-offer" hidden><button type="button" class="answer-box-solution" '
             f'aria-controls="{html.escape(solution)}">Show the solution</button></p>' if solution else "")
    self.body.append(
        f'{fields}<button type="submit" class="answer-box-check">Check</button>'
        f'<p class="answer-box-hint" id="{ident}-hint">Type numbers such as 0.25, -2.5e-3, 1/4, 2*sqrt(2) or '
        f"pi/2. {rule}</p>"
        f'<p class="answer-box-feedback" id="{ident}-feedback" role="status" aria-live="polite"></p>{offer}'
        '<noscript><p class="answer-box-hint">Checking an answer here needs JavaScript; '
        "the solution below gives it.</p></noscript></form>\n")


def visit_answer_label(self, node: answer_label) -> None:
    box = node.parent
    # A label that is only math has no text for tools that do not read MathML: words first, off screen.
    self.body.append("<legend>" if box["matrix"] else
                     f'<label for="{box["ids"][0]}-0-0"><span class="answer-box-sr">Your answer, </span>')


def depart_answer_label(self, node: answer_label) -> None:
    self.body.append("</legend>" if node.parent["matrix"] else "</label>")


def skip(self, node) -> None:
    """Not on paper, nor in builders without a browser: the solution gives the answer."""
    raise nodes.SkipNode


def has_answer_box(doctree) -> bool:
    return next(iter(doctree.findall(answer_box)), None) is not None


def setup(app) -> None:
    # None in the single page that ``make pdf`` prints (a builder's own handlers replace html's).
    others = {name: (skip, None) for name in ("singlehtml", "latex", "text", "man", "texinfo")}
    app.add_node(answer_box, html=(visit_answer_box, depart_answer_box), **others)
    app.add_node(answer_label, html=(visit_answer_label, depart_answer_label), **others)
    app.add_directive("answer-box", AnswerBox)
