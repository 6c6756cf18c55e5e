"""The oldest Python the book builds with: one number, in pyproject.toml, that the README and the Makefile share.

It is the oldest Python every pinned requirement installs on (read from the
installed distributions' ``Requires-Python``; the ``.venv`` holds exactly
``requirements.txt``), and ``make`` stops at once, with one line, on an
older one, before it creates anything.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import tomllib

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tools import ROOT


def floor() -> Version:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    match = re.fullmatch(r">=\s*([\d.]+)", spec)
    assert match, f"requires-python must be a plain lower bound, as the Makefile reads it, got {spec!r}"
    return Version(match.group(1))


def pinned_requires_python() -> dict[str, str]:
    """``Requires-Python`` of every pin of requirements.txt, from the installed distributions."""
    found = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        pin = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line)
        if pin:
            dist = importlib.metadata.distribution(pin.group(1))
            assert dist.version == pin.group(2), f"{pin.group(1)}: installed {dist.version}, pinned {pin.group(2)}"
            found[pin.group(1)] = dist.metadata.get("Requires-Python") or ""
    return found


def test_every_pin_installs_on_the_floor_and_one_needs_it():
    low = floor()
    below = Version(f"{low.major}.{low.minor}.{low.micro - 1}" if low.micro else f"{low.major}.{low.minor - 1}.99")
    pins = pinned_requires_python()
    refuse = {name: spec for name, spec in pins.items() if spec and low not in SpecifierSet(spec)}
    assert not refuse, f"pins that do not install on Python {low}: {refuse}"
    need = {name for name, spec in pins.items() if spec and below not in SpecifierSet(spec)}
    assert need, f"no pin needs Python {low}: requires-python could be lower"


def test_the_readme_states_the_floor():
    assert f"Python {floor()} or newer" in (ROOT / "README.md").read_text()


def test_make_stops_at_once_with_one_line_when_python_is_too_old(tmp_path):
    for name in ("Makefile", "requirements.txt"):
        shutil.copy2(ROOT / name, tmp_path / name)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(re.sub(r'requires-python = "[^"]*"', 'requires-python = ">=99.0"',
                                                   pyproject))
    done = subprocess.run(["make", "--no-print-directory", "build"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert done.stdout == "", "nothing ran"
    (line,) = done.stderr.splitlines()
    assert "is Python 3." in line and "need Python 99.0 or newer" in line, line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["Makefile", "pyproject.toml", "requirements.txt"]
    assert subprocess.run(["make", "clean"], cwd=tmp_path, capture_output=True).returncode == 0, "other targets run"
