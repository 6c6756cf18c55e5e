"""``_ext/site_build/healing``: every kind of damage to the execution cache heals, or stops in one line.

A real jupyter-cache holding one executed notebook is damaged as a disk, a
crash or a person would damage it; :func:`healing.heal_execution_cache` then either leaves a
cache jupyter-cache can use (the damaged one removed, or the bad record
dropped) or raises :class:`healing.DamagedCache` with one line naming the
file and the command that fixes it. Write denials are real (:mod:`denied`):
a read-only or unreadable file in a process that file modes bind, an
immutable file. The builds of tests/build/test_incremental.py damage the
cache of a real book (records, and an emptied database), and a slow test
here overwrites pages of a tiny book's database between two builds.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from denied import immutable, modes_bind, run_python
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from sqlalchemy.exc import DatabaseError

from _ext.site_build import healing
from tools import ROOT, SITE, workcopy

#: ``python -c``: heal the cache at argv[1]; prints what happened, and the error's message on one line.
HEAL = """
import sys
from pathlib import Path
sys.modules["rfc3987_syntax"] = None  # as tools.build does: its grammars take seconds to import, and no check uses them
from types import SimpleNamespace
from _ext.site_build import healing
config = SimpleNamespace(execution_mode="cache", execution_cache_path=sys.argv[1])
try:
    healing.heal_execution_cache(SimpleNamespace(env=SimpleNamespace(mystnb_config=config)))
except healing.DamagedCache as error:
    print("DamagedCache:", error)
else:
    print("healed")
"""


def app_with_cache(path):
    config = SimpleNamespace(execution_mode="cache", execution_cache_path=str(path))
    return SimpleNamespace(env=SimpleNamespace(mystnb_config=config))


@pytest.fixture
def cache_path(tmp_path) -> Path:
    """A cache (``.jupyter_cache`` in a book folder, the working directory) with one executed notebook."""
    path = tmp_path / "_build" / ".jupyter_cache"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7", execution_count=1)])
    get_cache(path).cache_notebook_bundle(CacheBundleIn(notebook, "book/a.ipynb"))
    return path


def usable(path: Path) -> list:
    """The records of the cache at ``path``, read back as myst-nb reads them: it must work."""
    cache = get_cache(path)
    records = cache.list_cache_records()
    for record in records:
        cache.get_cache_bundle(record.pk)
    return records


def heal_in(path: Path, prefix: list[str]) -> str:
    """Heal in a child process under ``prefix``, from the book's folder; what it printed."""
    done = run_python(HEAL, str(path), prefix=prefix, cwd=path.parent.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def overwrite_the_middle(path: Path) -> None:
    """4 KiB of random bytes written over the middle of the database, as a disk or a crash damages a file.

    The header and the table list stay readable; the pages overwritten hold
    an index that the next chapter executed writes to (see
    :func:`test_overwritten_pages_fail_the_next_chapter_executed`).
    """
    db = path / "global.db"
    with db.open("r+b") as file:
        file.seek(db.stat().st_size // 2)
        file.write(random.Random(43).randbytes(4096))


def drop_table(path: Path, table: str) -> None:
    with sqlite3.connect(path / "global.db") as connection:
        connection.execute(f"DROP TABLE {table}")
    connection.close()


def test_a_healthy_cache_is_kept_as_it_is(cache_path):
    healing.heal_execution_cache(app_with_cache(cache_path))
    assert len(usable(cache_path)) == 1


@pytest.mark.parametrize("damage", [
    pytest.param(lambda path: (path / "global.db").write_bytes(b""), id="empty database"),
    pytest.param(lambda path: (path / "global.db").write_bytes(b"\0garbage" * 100), id="not a database"),
    pytest.param(lambda path: drop_table(path, "nbcache"), id="records table missing"),
    pytest.param(lambda path: drop_table(path, "settings"), id="settings table missing"),
    pytest.param(lambda path: ((path / "global.db").unlink(), (path / "global.db").mkdir()), id="folder as database"),
    pytest.param(overwrite_the_middle, id="pages overwritten"),
])
def test_a_damaged_database_is_removed_with_the_cache(cache_path, damage):
    damage(cache_path)
    healing.heal_execution_cache(app_with_cache(cache_path))
    assert not cache_path.exists()
    assert usable(cache_path) == []  # jupyter-cache makes a new one


def test_overwritten_pages_fail_the_next_chapter_executed(cache_path, tmp_path):
    """The damage is real: myst-nb's first call for a chapter to execute fails on it, until it is healed."""
    notebook = tmp_path / "b.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 8")]), notebook)
    overwrite_the_middle(cache_path)
    with pytest.raises(DatabaseError, match="database disk image is malformed"):
        get_cache(cache_path).add_nb_to_project(str(notebook))
    healing.heal_execution_cache(app_with_cache(cache_path))
    assert get_cache(cache_path).add_nb_to_project(str(notebook)).uri == str(notebook)


def test_a_file_where_the_cache_should_be_is_removed(tmp_path):
    path = tmp_path / ".jupyter_cache"
    path.write_text("not a folder")
    healing.heal_execution_cache(app_with_cache(path))
    assert not path.exists()
    assert usable(path) == []


def test_a_record_whose_notebook_is_gone_is_dropped_alone(cache_path):
    for notebook in (cache_path / "executed").glob("*/base.ipynb"):
        notebook.unlink()
    healing.heal_execution_cache(app_with_cache(cache_path))
    assert usable(cache_path) == [] and (cache_path / "global.db").is_file()


@pytest.mark.parametrize("mode", [0o000, 0o444], ids=["unreadable", "read-only"])
def test_a_database_this_build_may_not_read_or_write_is_removed(cache_path, mode):
    """Read-only, reads would work and the first chapter executed would fail to be cached (every build)."""
    prefix = modes_bind()
    (cache_path / "global.db").chmod(mode)
    assert heal_in(cache_path, prefix) == "healed"
    assert not cache_path.exists()


def test_a_cache_folder_this_build_may_not_write_is_removed(cache_path):
    prefix = modes_bind()
    (cache_path / "executed").chmod(0o555)
    cache_path.chmod(0o555)
    assert heal_in(cache_path, prefix) == "healed"
    assert not cache_path.exists()


def test_an_immutable_database_stops_the_build_naming_it_and_the_fix(cache_path):
    with immutable(cache_path / "global.db"):
        output = heal_in(cache_path, [])
        assert output.startswith("DamagedCache: the execution cache _build/.jupyter_cache is damaged "
                                 "(OperationalError: attempt to write a readonly database) and "
                                 "_build/.jupyter_cache/global.db cannot be removed (Operation not permitted): "
                                 "run chattr -R -i _build/.jupyter_cache (it is immutable)"), output
        assert "\n" not in output
    assert len(usable(cache_path)) == 1  # nothing was removed: the database goes first, or nothing does


def test_a_database_locked_by_another_process_stops_the_build_naming_it(cache_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time; "
                               "c = sqlite3.connect(sys.argv[1], isolation_level=None); "
                               "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(120)",
                               str(cache_path / "global.db")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        start = time.monotonic()
        output = heal_in(cache_path, [])
        assert time.monotonic() - start < 30
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert output == (f"DamagedCache: the execution cache's database _build/.jupyter_cache/global.db is locked by "
                      f"process {holder.pid}: stop it (kill {holder.pid}), then build again"), output
    assert len(usable(cache_path)) == 1


def test_a_readable_empty_cache_is_kept(tmp_path):
    path = tmp_path / ".jupyter_cache"
    get_cache(path).list_cache_records()
    healing.heal_execution_cache(app_with_cache(path))
    assert (path / "global.db").is_file()


@pytest.mark.parametrize("mode", ["off", "force", "auto"])
def test_only_a_cached_execution_touches_the_cache(tmp_path, mode):
    path = tmp_path / ".jupyter_cache"
    path.write_text("not a folder")
    app = app_with_cache(path)
    app.env.mystnb_config.execution_mode = mode
    healing.heal_execution_cache(app)
    assert path.read_text() == "not a folder"


def test_a_missing_cache_is_left_for_jupyter_cache_to_make(tmp_path):
    healing.heal_execution_cache(app_with_cache(tmp_path / ".jupyter_cache"))
    assert not (tmp_path / ".jupyter_cache").exists()
    shutil.rmtree(tmp_path)  # nothing left open in it


@pytest.mark.slow
def test_make_build_heals_a_database_with_overwritten_pages(tmp_path):
    """The audit's damage: 4 KiB of random bytes in the middle of global.db, a code cell changed, make build."""
    cell = "```{code-cell} ipython3\nprint('answer:', 6 * 7)\n```\n"
    book = workcopy.tiny_book(ROOT, tmp_path / "book", {"a": f"# A\n\n{cell}"})
    assert workcopy.build(book).ok
    overwrite_the_middle(book / "_build" / ".jupyter_cache")
    (book / "book" / "a.md").write_text((book / "book" / "a.md").read_text().replace("6 * 7", "6 * 8"))
    result = workcopy.build(book)
    assert result.ok and "Traceback" not in result.log and "DatabaseError" not in result.log, result.log[-3000:]
    healed = [line for line in result.log.splitlines() if "PRAGMA quick_check" in line]
    assert len(healed) == 1 and "removing it" in healed[0], result.log[-3000:]  # said on one line
    assert result.executed == {"book/a.md"}
    assert "answer: 48" in (book / SITE / "book" / "a.html").read_text()
