"""The execution cache never serves results computed by old code.

jupyter-cache keys a notebook on its cells' source only; the ``site_build``
extension (``_ext/site_build/freshness.py``) makes every page depend on the
package sources and the pinned requirements, and empties the cache when they
change. What each rebuild executes is read from the build log
("<path>: Executed notebook in ...").
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


def test_the_book_reruns_exactly_what_changed(tmp_path):
    copy = workcopy.copy_tree(ROOT, tmp_path / "book")
    clean = rebuild(copy)
    assert clean, "the clean build executed no notebook"
    assert rebuild(copy) == set(), "a no-change rebuild executed notebooks"

    chapter = sorted(clean)[-1]
    add_code_cell(copy / chapter, "1 + 1  # an edit to one chapter")
    assert rebuild(copy) == {chapter}

    append(copy / "src" / "selfattention" / "__init__.py", "\n# an edit to the package\n")
    assert rebuild(copy) == clean, "an edit to src/ did not re-run every notebook"


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
