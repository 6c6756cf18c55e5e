"""live_code's wheel of the book's package, served with the site for a Binder session to install.

The wheel holds exactly ``src/selfattention``'s modules and ``py.typed``,
installs with pip (``--no-deps``, from the file, as the session does), and
two writes of one tree are byte-identical (builds of one commit are).
``tests/browser/test_binder.py`` checks that a Binder session runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile

from _ext.live_code import package
from tools import ROOT

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_wheel_holds_the_package_and_is_the_same_at_every_write(tmp_path):
    first = package.write_wheel(ROOT, tmp_path / "a")
    second = package.write_wheel(ROOT, tmp_path / "b")
    assert first == second == json.loads((tmp_path / "a" / package.DESCRIPTION).read_text())
    assert (tmp_path / "a" / first["wheel"]).read_bytes() == (tmp_path / "b" / first["wheel"]).read_bytes()
    assert first["wheel"] == f"selfattention-{VERSION}-py3-none-any.whl" and first["version"] == VERSION
    files = package.package_files(ROOT / "src", "selfattention")
    assert {path for path, _ in files} >= {"selfattention/__init__.py", "selfattention/py.typed"}
    with zipfile.ZipFile(tmp_path / "a" / first["wheel"]) as wheel:
        names = set(wheel.namelist())
        info = f"selfattention-{VERSION}.dist-info"
        assert names == {path for path, _ in files} | {f"{info}/{n}" for n in ("METADATA", "WHEEL", "RECORD")}
        assert all(wheel.read(path) == data for path, data in files)
    assert first["sha256"] == package.content_hash(files)


def test_pip_installs_it_and_the_installed_package_has_its_hash(tmp_path):
    described = package.write_wheel(ROOT, tmp_path / "site")
    target = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-index", "--target", str(target), str(tmp_path / "site" / described["wheel"])], check=True)
    assert package.content_hash(package.package_files(target, "selfattention")) == described["sha256"]
    assert (target / f"selfattention-{VERSION}.dist-info" / "RECORD").is_file()


def test_the_hash_changes_with_any_file(tmp_path):
    files = package.package_files(ROOT / "src", "selfattention")
    changed = [(path, data + b"\n" if i == len(files) // 2 else data) for i, (path, data) in enumerate(files)]
    renamed = [(path.replace("selfattention/", "selfattention/x", 1) if i == 0 else path, data)
               for i, (path, data) in enumerate(files)]
    assert len({package.content_hash(files), package.content_hash(changed), package.content_hash(renamed),
                package.content_hash(files[1:])}) == 4
