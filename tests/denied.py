"""Writes the file system really refuses, for the tests of a build's faults, as root too.

Root writes through any file mode: ``chmod`` alone denies nothing to the
tests on a machine (or CI) that runs them as root. Two mechanisms do:

* :func:`immutable` sets the immutable attribute (``chattr +i``): nobody, root
  included, may change, move or remove the file or folder; it needs root (or
  ``CAP_LINUX_IMMUTABLE``) and a file system that has the attribute (ext4,
  xfs, btrfs; not tmpfs);
* :func:`modes_bind` is the command prefix that runs a process which the
  file modes bind: nothing for another user, and for root ``setpriv``
  (util-linux) with the capabilities that override the modes dropped
  (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``, ``CAP_FOWNER``; the process
  still owns root's files, so it may ``chmod`` them back).

A full disk is real too: :func:`small_disk` mounts a tmpfs of a few
megabytes (root only), which :func:`resize` makes larger or smaller.

Each checks first that it works here, and a test that needs it is skipped,
with the reason, where it does not (never silently).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

OVERRIDING = "-dac_override,-dac_read_search,-fowner"


def modes_bind() -> list[str]:
    """The prefix of a command whose process file modes bind; skips the test where there is none."""
    prefix = [] if os.geteuid() != 0 else ["setpriv", f"--inh-caps={OVERRIDING}", f"--bounding-set={OVERRIDING}"]
    if prefix and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux): chmod cannot deny root a write here")
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o555)
        try:
            probe = subprocess.run([*prefix, "touch", os.path.join(folder, "probe")], capture_output=True, text=True)
        finally:
            os.chmod(folder, 0o755)
    if probe.returncode == 0:
        pytest.skip(f"a read-only folder was written through {prefix or 'as this user'}: modes do not bind here")
    return prefix


def _chattr(flag: str, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True, text=True)


@contextlib.contextmanager
def immutable(*paths: Path):
    """Make ``paths`` immutable for the block (and mutable again after it, whatever happens).

    Skips the test, with the reason, where ``chattr +i`` does not work.
    """
    if shutil.which("chattr") is None:
        pytest.skip("chattr (e2fsprogs) is not installed: no immutable files here")
    done = _chattr("+i", *paths)
    if done.returncode != 0:
        _chattr("-i", *paths)
        pytest.skip(f"chattr +i does not work here (root on ext4, xfs or btrfs needed): {done.stderr.strip()}")
    try:
        yield
    finally:
        _chattr("-i", *paths)


@contextlib.contextmanager
def small_disk(path: Path, megabytes: float):
    """A file system of ``megabytes`` (a tmpfs) mounted at ``path`` (made if missing) for the block.

    Skips the test, with the reason, where it cannot be mounted (root is needed).
    """
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={round(megabytes * 2**20)}", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small file system here (root is needed): {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "--lazy", str(path)], check=True)


def resize(path: Path, size: int) -> None:
    """Make the tmpfs mounted at ``path`` ``size`` bytes (rounded up to whole pages)."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(path)], check=True, capture_output=True)


def free_bytes(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


def run_python(code: str, *args: str, prefix: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` with this repository's Python and ``tools``/``_ext`` importable, under ``prefix``."""
    from tools import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*prefix, sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
