r"""A meta description for every page: front matter, else the page's first paragraph.

Search engines and link previews show a page's ``<meta name="description">``.
MyST writes one from front matter (``myst: html_meta: description: ...``);
for a page without, :func:`description` takes the first paragraph of the
page (not a caption, a cell's output, an admonition, a table or a citation),
as plain text: a formula that is one symbol (``$\tau$``, ``$N$``, ``$p_j$``)
becomes that symbol, and the text stops before any longer formula, which
has no plain-text form. It keeps whole sentences up to
:data:`MAX_LENGTH` characters (or cuts the first sentence at a word).
"""

from __future__ import annotations

import re

from docutils import nodes

MAX_LENGTH = 160
MIN_LENGTH = 50
GREEK = {name: chr(code) for name, code in (
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("varepsilon", 0x3B5),
    ("epsilon", 0x3B5), ("theta", 0x3B8), ("lambda", 0x3BB), ("mu", 0x3BC), ("pi", 0x3C0),
    ("sigma", 0x3C3), ("tau", 0x3C4), ("phi", 0x3C6))}
ONE_SYMBOL = re.compile(r"^\s*(\\[a-zA-Z]+|[A-Za-z0-9])(?:_\{?([A-Za-z0-9]+)\}?)?\s*$")
SKIPPED = (nodes.caption, nodes.figure, nodes.container, nodes.citation, nodes.footnote,
           nodes.Admonition, nodes.table, nodes.sidebar, nodes.topic)


def symbol_text(latex: str) -> str | None:
    """A formula of one symbol (with an optional subscript) as plain text; None for anything else."""
    match = ONE_SYMBOL.match(latex)
    if not match:
        return None
    symbol = match.group(1)
    if symbol.startswith("\\"):
        symbol = GREEK.get(symbol[1:])
        if symbol is None:
            return None
    return symbol + (f"_{match.group(2)}" if match.group(2) else "")


def paragraph_text(paragraph: nodes.paragraph) -> str:
    """The paragraph as plain text, up to its first formula that is not one symbol."""
    parts = []
    for node in paragraph.findall(lambda n: isinstance(n, (nodes.Text, nodes.math))):
        if isinstance(node, nodes.math):
            text = symbol_text(node.astext())
            if text is None:
                break
            parts.append(text)
        elif not _inside(node, nodes.math):
            parts.append(node.astext())
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _inside(node: nodes.Node, kinds) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def shorten(text: str, limit: int = MAX_LENGTH) -> str:
    """Whole sentences of ``text`` up to ``limit`` characters, else its start cut at a word."""
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in re.findall(r"[^.!?]+[.!?]+(?:\s|$)", text):
        if len(kept) + len(sentence) > limit:
            break
        kept += sentence
    return kept.strip() or text[: limit - 1].rsplit(" ", 1)[0] + "…"


def description(doctree: nodes.document) -> str:
    """The description of a page from its first paragraph ("" if it has none)."""
    for paragraph in doctree.findall(nodes.paragraph):
        if not _inside(paragraph, SKIPPED):
            return shorten(paragraph_text(paragraph))
    return ""
