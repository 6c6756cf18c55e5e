"""``_ext/site_build/healing``: a cache whose database cannot be read is removed, whatever it is.

The builds of tests/build/test_incremental.py damage records of a real cache;
here, without a build, the cases where the whole cache goes: an unreadable
database, and a file where the cache's folder should be.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from jupyter_cache import get_cache

from _ext.site_build import healing


def app_with_cache(path):
    config = SimpleNamespace(execution_mode="cache", execution_cache_path=str(path))
    return SimpleNamespace(env=SimpleNamespace(mystnb_config=config))


def test_a_file_where_the_cache_should_be_is_removed(tmp_path):
    path = tmp_path / ".jupyter_cache"
    path.write_text("not a folder")
    healing.heal_execution_cache(app_with_cache(path))
    assert not path.exists()
    get_cache(path).list_cache_records()  # jupyter-cache can create it again
    assert (path / "global.db").is_file()


def test_an_unreadable_database_empties_the_cache(tmp_path):
    path = tmp_path / ".jupyter_cache"
    get_cache(path).list_cache_records()  # a real cache, then its database damaged
    (path / "global.db").write_bytes(b"\0garbage" * 100)
    healing.heal_execution_cache(app_with_cache(path))
    assert not path.exists()


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
