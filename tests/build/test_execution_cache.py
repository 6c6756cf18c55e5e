"""The execution cache never serves results computed by old code.

jupyter-cache keys a notebook on its cells' source only; the ``site_build``
extension (``_ext/site_build/freshness.py``) makes every page depend on the
package sources and the pinned requirements, and empties the cache when they
change. What each rebuild executes is read from the build log
("<path>: Executed notebook in ...").

A tiny book stands for the whole one here: what is re-executed depends on
the rules above, not on the chapters. ``make bench`` (``bench_build``)
rebuilds the real book and fails if editing one chapter executes any other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import ROOT, SITE, workcopy

pytestmark = pytest.mark.slow


def rebuild(copy: Path) -> set[str]:
    """Build ``copy`` again; the sources whose notebooks were executed."""
    result = workcopy.build(copy)
    assert result.ok, result.log[-3000:]
    return result.executed


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def add_code_cell(chapter: Path, code: str) -> None:
    append(chapter, f"\n```{{code-cell}} ipython3\n{code}\n```\n")


PACKAGE = "VALUE = {value}\n"
READS_PACKAGE = "# Reads the package\n\n```{code-cell} ipython3\nimport tinypkg\nprint(f'value={tinypkg.VALUE}')\n```\n"
STANDALONE = "# Stands alone\n\n```{code-cell} ipython3\nprint('standalone', 6 * 7)\n```\n"


def test_an_edit_to_the_package_shows_in_the_next_build(tmp_path):
    book = workcopy.tiny_book(ROOT, tmp_path / "tiny", {"reads": READS_PACKAGE, "other": STANDALONE})
    package = book / "src" / "tinypkg" / "__init__.py"
    package.parent.mkdir(parents=True)
    package.write_text(PACKAGE.format(value=1))
    page = book / SITE / "book" / "reads.html"
    everything = {"book/reads.md", "book/other.md"}

    assert rebuild(book) == everything
    assert "value=1" in page.read_text()

    package.write_text(PACKAGE.format(value=2))
    assert rebuild(book) == everything
    assert "value=2" in page.read_text() and "value=1" not in page.read_text()

    append(book / "requirements.txt", "# an edit to the pinned requirements\n")
    assert rebuild(book) == everything

    add_code_cell(book / "book" / "other.md", "print('edited')")
    assert rebuild(book) == {"book/other.md"}
    assert rebuild(book) == set()
