"""An incremental ``make build`` writes exactly the clean build's site, heals its cache, and fails cleanly.

Two tiny books (:func:`tools.workcopy.tiny_book`: the project's
configuration, extensions, ``Makefile`` and ``tools``, two small chapters):
``reference`` is built once, clean, from the final sources; ``work`` starts
from other sources and is brought to the same ones through failed,
interrupted, damaged and partial builds. After each, ``work``'s site must be
byte-identical to ``reference``'s (:func:`tools.workcopy.differences`).
The tests share ``work`` and leave it as the reference (its sources, a good
build), in the order they are written. A third tiny book, ``rebuilt``, checks
what a rebuild reads and executes, from Sphinx's and myst-nb's log.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tools import ROOT, SITE, workcopy
from tools.build import ANSI

pytestmark = pytest.mark.slow

CELL_A = "```{code-cell} ipython3\nx = 6 * 7\nprint(x)\n```\n"
PROSE_A = "# Chapter A\n\nOld prose.\n\n"
CHAPTER_A = "# Chapter A\n\nNew prose, edited only.\n\n" + CELL_A
#: Line 5 of b.md (after the 9-line jupytext header): the line that raises in FAILING_B.
CHAPTER_B = "# Chapter B\n\n```{code-cell} ipython3\ny = 1\nprint(y / 2)\n```\n"
FAILING_B = "# Chapter B\n\n```{code-cell} ipython3\ny = 0\nprint(1 / y)\n```\n"
SLOW_B = "# Chapter B\n\n```{code-cell} ipython3\nimport time\ntime.sleep(600)\n```\n"
HEADER_LINES = workcopy.NOTEBOOK_HEADER.count("\n")


def write_chapter(book: Path, name: str, body: str) -> None:
    (book / "book" / f"{name}.md").write_text(workcopy.NOTEBOOK_HEADER + body)


def build(book: Path, ok: bool = True) -> workcopy.BuildResult:
    result = workcopy.build(book, timeout=600)
    assert result.ok == ok, result.log[-3000:]
    return result


def last_lines(result: workcopy.BuildResult, count: int = 6) -> str:
    return "\n".join(result.log.strip().splitlines()[-count:])


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    root = tmp_path_factory.mktemp("incremental")
    reference = workcopy.tiny_book(ROOT, root / "reference", {"a": CHAPTER_A, "b": CHAPTER_B})
    build(reference)
    work = workcopy.tiny_book(ROOT, root / "work", {"a": PROSE_A + CELL_A, "b": FAILING_B})
    return reference, work


def same_site(reference: Path, work: Path) -> list[str]:
    return workcopy.differences(reference / SITE, work / SITE)


def test_a_failed_clean_build_says_where_and_publishes_nothing(books):
    _, work = books
    result = build(work, ok=False)
    end = last_lines(result)
    assert f"book/b.md:{HEADER_LINES + 5}: ZeroDivisionError: division by zero" in end, end
    assert "No site was published" in end
    # Sphinx's traceback and "report a bug" notice are gone (a kernel may still log its own at shutdown).
    assert "Traceback" not in end and "bug report" not in result.log.lower(), result.log[-3000:]
    assert not (work / SITE).exists()


def test_fixed_cell_and_prose_only_edit_give_the_clean_site(books):
    reference, work = books
    write_chapter(work, "b", CHAPTER_B)  # fixed: executed again
    write_chapter(work, "a", CHAPTER_A)  # prose only: its outputs come from the cache
    result = build(work)
    assert result.executed == {"book/b.md"}
    assert same_site(reference, work) == []


def test_deleted_site_and_executed_notebooks_give_the_clean_site(books):
    reference, work = books
    for name in ("html", "jupyter_execute"):  # the published build's folders (these are links into it)
        shutil.rmtree((work / "_build" / name).resolve())
    result = build(work)
    assert result.executed == set()
    assert same_site(reference, work) == []


def test_a_failed_incremental_build_keeps_the_last_good_site(books):
    reference, work = books
    write_chapter(work, "b", FAILING_B)
    end = last_lines(build(work, ok=False))
    assert f"book/b.md:{HEADER_LINES + 5}: ZeroDivisionError" in end and "last good build" in end, end
    assert same_site(reference, work) == []
    write_chapter(work, "b", CHAPTER_B)


def test_an_interrupted_build_keeps_the_last_good_site(books):
    reference, work = books
    write_chapter(work, "b", SLOW_B)
    env = {**os.environ, "SOURCE_DATE_EPOCH": workcopy.EPOCH, "PYTHONPATH": str(work / "src"), "PYTHONUNBUFFERED": "1"}
    command = ["make", "--no-print-directory", *(f"--old-file={s}" for s in workcopy.STAMPS), "build"]
    make = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        for line in make.stdout:
            if "Executing notebook" in line:
                time.sleep(3)  # into the cell
                os.killpg(make.pid, signal.SIGINT)  # Ctrl-C
                break
        rest = make.stdout.read()
        assert make.wait(timeout=300) != 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)
        make.stdout.close()
    assert "The build was interrupted (SIGINT)" in rest and "last good build" in rest, rest[-3000:]
    assert same_site(reference, work) == []
    write_chapter(work, "b", CHAPTER_B)  # the next test's build starts from here


def test_after_that_a_damaged_cache_and_lost_doctrees_heal_into_the_clean_site(books):
    """The build after the interrupted one, with two cache records damaged and ``.doctrees`` deleted."""
    reference, work = books
    executed = sorted((work / "_build" / ".jupyter_cache" / "executed").glob("*/base.ipynb"))
    assert len(executed) >= 2
    truncated, deleted = executed[:2]
    truncated.write_text(truncated.read_text()[:100])  # NotJSONError
    deleted.unlink()  # "Notebook file does not exist for cache record"
    shutil.rmtree((work / "_build" / ".doctrees").resolve())  # every chapter is read again, so from the cache
    result = build(work)
    assert result.log.count("dropped a damaged execution cache record") == 2, result.log[-3000:]
    assert result.executed == {"book/a.md", "book/b.md"}
    assert same_site(reference, work) == []


def test_an_emptied_cache_database_heals_and_the_next_edit_executes_again(books):
    """``: > global.db`` (no tables: jupyter-cache's RuntimeError failed every build): the cache is made anew."""
    reference, work = books
    (work / "_build" / ".jupyter_cache" / "global.db").write_bytes(b"")
    result = build(work)
    assert "the execution cache _build/.jupyter_cache is damaged (no table" in result.log, result.log[-3000:]
    assert result.executed == set() and same_site(reference, work) == []  # the site kept the outputs it had
    write_chapter(work, "b", CHAPTER_B.replace("y = 1", "y = 3"))
    assert build(work).executed == {"book/b.md"}
    write_chapter(work, "b", CHAPTER_B)  # back to the reference's sources: executed again, then equal
    assert build(work).executed == {"book/b.md"} and same_site(reference, work) == []


# ---- What a rebuild reads: nothing when nothing changed, only the edited chapter otherwise ----

#: A chapter with what made every rebuild re-read its page once: the explorer, whose fallback image the
#: environment lists as the page's dependency (it lived in the staging folder, gone at the next build).
EXPLORER_PAGE = "# Explorer\n\n```{attention-explorer}\n:n: 40\n```\n\n" + CELL_A
PLAIN_PAGE = "# Plain\n\nSome prose.\n\n" + CHAPTER_B
READ_LINE = re.compile(r"^reading sources\.\.\. \[\s*\d+%\] (\S+)$", re.M)


def pages_read(result: workcopy.BuildResult) -> list[str]:
    """The documents Sphinx read in this build, from its log."""
    return READ_LINE.findall(ANSI.sub("", result.log))


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    book = workcopy.tiny_book(ROOT, tmp_path_factory.mktemp("rebuilds") / "book",
                              {"explorer": EXPLORER_PAGE, "plain": PLAIN_PAGE})
    build(book)
    return book


def test_a_build_with_nothing_changed_reads_and_executes_nothing(rebuilt):
    result = build(rebuilt)
    log = ANSI.sub("", result.log)
    assert pages_read(result) == [] and "updating environment: 0 added, 0 changed, 0 removed" in log, log[-3000:]
    assert "no targets are out of date" in log, log[-3000:]
    assert result.executed == set()


def test_an_edited_chapter_is_the_only_page_read_and_executed(rebuilt):
    write_chapter(rebuilt, "plain", PLAIN_PAGE.replace("Some prose.", "Other prose."))
    prose = build(rebuilt)
    assert pages_read(prose) == ["book/plain"] and prose.executed == set(), prose.log[-3000:]
    write_chapter(rebuilt, "plain", PLAIN_PAGE.replace("y = 1", "y = 3"))
    code = build(rebuilt)
    assert pages_read(code) == ["book/plain"] and code.executed == {"book/plain.md"}, code.log[-3000:]
    assert pages_read(build(rebuilt)) == []


def stylesheet_versions(book: Path) -> dict[str, str]:
    """{page: the checksum of the stylesheets it links (joined by lean_pages)}, for every page of ``book``'s site."""
    found = {}
    for page in sorted((book / SITE).rglob("*.html")):
        version = re.search(r"_static/stylesheets-\w+\.css\?v=(\w+)", page.read_text())
        if version:
            found[page.relative_to(book / SITE).as_posix()] = version[1]
    return found


def test_an_edit_to_an_extension_rewrites_every_page_and_executes_nothing(rebuilt):
    """Sphinx does not track the extensions: the pages would keep the checksum of the stylesheet before the edit."""
    before = stylesheet_versions(rebuilt)
    stylesheet = rebuilt / "_ext" / "lean_pages" / "static" / "lean-pages.css"
    stylesheet.write_text(stylesheet.read_text() + "\n/* an edit the test makes */\n")
    result = build(rebuilt)
    assert sorted(pages_read(result)) == ["book/explorer", "book/index", "book/plain"], result.log[-3000:]
    assert result.executed == set()
    after = stylesheet_versions(rebuilt)
    assert set(after) == set(before) and len(before) >= 3
    assert all(after[page] != before[page] for page in after), (before, after)


# ---- Inputs edited while a page is being read: Sphinx dates a reading when it ends, after the notebook ran ----

#: A chapter whose cell edits its own page, as a writer saving the file while its notebook runs would.
#: (Its code spells the sentences in two parts, so that the edit changes the prose only, not the code.)
SELF_EDITING_PAGE = ("# Plain\n\nBefore the edit.\n\n```{code-cell} ipython3\nfrom pathlib import Path\n"
                     "page, old, new = Path('plain.md'), 'Before' + ' the edit.', 'After' + ' the edit.'\n"
                     "if old in page.read_text():\n    page.write_text(page.read_text().replace(old, new))\n```\n")
#: A chapter whose cell edits a file of ``src/`` after its kernel started, as a writer editing the package would.
SRC_EDITING_PAGE = ("# Plain\n\nThe package is edited.\n\n```{code-cell} ipython3\nfrom pathlib import Path\n"
                    "stub = Path('../src/stub.py')\nif 'first' in stub.read_text():\n"
                    "    stub.write_text('# second version\\n')\n```\n")


def page_text(book: Path, name: str) -> str:
    return (book / SITE / "book" / f"{name}.html").read_text()


def test_a_page_edited_while_its_notebook_runs_is_read_again(rebuilt):
    write_chapter(rebuilt, "plain", SELF_EDITING_PAGE)
    during = build(rebuilt)
    assert pages_read(during) == ["book/plain"] and "Before the edit." in page_text(rebuilt, "plain")
    after = build(rebuilt)  # the edit is newer than the file that was read, though older than the reading's end
    assert pages_read(after) == ["book/plain"] and after.executed == set(), after.log[-3000:]
    assert "After the edit." in page_text(rebuilt, "plain")
    assert pages_read(build(rebuilt)) == []


def test_a_package_edited_while_a_notebook_runs_executes_every_page_again(rebuilt):
    """The execution cache is emptied for the new package: the page that ran during the edit is executed too."""
    (rebuilt / "src").mkdir(exist_ok=True)
    (rebuilt / "src" / "stub.py").write_text("# first version\n")
    write_chapter(rebuilt, "plain", SRC_EDITING_PAGE)
    build(rebuilt)
    assert "second" in (rebuilt / "src" / "stub.py").read_text()
    after = build(rebuilt)
    assert "emptying the execution cache" in after.log, after.log[-3000:]
    assert after.executed == {"book/explorer.md", "book/plain.md"}, after.log[-3000:]
    assert pages_read(build(rebuilt)) == []
