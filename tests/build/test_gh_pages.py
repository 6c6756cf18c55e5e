"""``make publish`` for readers without GitHub Actions: the built site on a ``gh-pages`` branch.

The Makefile's own ``push-pages`` recipe (ghp-import) runs in a clone of
this repository whose ``origin`` is a local bare repository: nothing leaves
the machine. ``make -n publish`` shows which repository the published book
is built for, read from ``origin``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from _ext.publish import binder_ref
from tools import ROOT

pytestmark = pytest.mark.slow
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost"}


def git(*args, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def make(target: str, clone: Path, *args: str) -> subprocess.CompletedProcess:
    """This checkout's Makefile, run in ``clone`` with this checkout's virtual environment."""
    env = {k: v for k, v in os.environ.items() if k != "MAKEFLAGS"} | GIT_ENV
    venv = ROOT / ".venv"
    # --old-file: the venv is installed; make must not reinstall it because the clone's files are newer.
    return subprocess.run(["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), f"BIN={venv / 'bin'}",
                           f"VENV_STAMP={venv / '.installed'}", f"--old-file={venv / '.installed'}", *args, target],
                          cwd=clone, capture_output=True, text=True, env=env)


@pytest.fixture
def bare(tmp_path):
    """An empty bare repository: the clone's origin."""
    bare = tmp_path / "origin.git"
    git("init", "--quiet", "--bare", str(bare), cwd=tmp_path)
    return bare


@pytest.fixture
def clone(tmp_path, bare):
    """A clone of this repository whose origin is ``bare``."""
    clone = tmp_path / "clone"
    git("clone", "--quiet", "--no-local", str(ROOT), str(clone), cwd=tmp_path)
    git("remote", "set-url", "origin", str(bare), cwd=clone)
    return clone


def files(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}


def test_push_pages_puts_the_built_site_on_gh_pages(clone, bare, site_dir):
    head = git("rev-parse", "HEAD", cwd=clone)
    done = make("push-pages", clone, f"SITE={site_dir}")
    assert done.returncode == 0, done.stdout + done.stderr
    # GitHub Pages runs Jekyll unless .nojekyll exists, and Jekyll drops _static/, _images/, _sources/.
    assert set(git("ls-tree", "-r", "--name-only", "gh-pages", cwd=bare).split()) == files(site_dir) | {
        ".nojekyll"}
    assert git("show", "gh-pages:book/smoothing.html", cwd=bare) == (site_dir / "book/smoothing.html").read_text()
    # The source branch is untouched, locally and on origin.
    assert git("rev-parse", "HEAD", cwd=clone) == head
    assert git("branch", "--list", "--format=%(refname:short)", cwd=bare).split() == ["gh-pages"]


def test_republishing_removes_deleted_pages(clone, bare, tmp_path):
    site = tmp_path / "site"
    (site / "book").mkdir(parents=True)
    for name in ("index.html", "book/kept.html", "book/removed.html"):
        (site / name).write_text(f"<p>{name}</p>")
    assert make("push-pages", clone, f"SITE={site}").returncode == 0
    (site / "book" / "removed.html").unlink()
    assert make("push-pages", clone, f"SITE={site}").returncode == 0
    assert set(git("ls-tree", "-r", "--name-only", "gh-pages", cwd=bare).split()) == {
        ".nojekyll", "index.html", "book/kept.html"}


@pytest.mark.parametrize("origin", ["https://github.com/octocat/self-attention.git",
                                    "git@github.com:octocat/self-attention.git",
                                    "https://github.com/octocat/self-attention"])
def test_publish_builds_the_book_for_origins_repository(clone, origin):
    git("remote", "set-url", "origin", origin, cwd=clone)
    git("checkout", "--quiet", "-b", "drafts", cwd=clone)
    done = make("publish", clone, "-n")
    assert "BOOK_REPOSITORY=octocat/self-attention " in done.stdout, done.stdout + done.stderr


def test_publish_refuses_an_origin_not_on_github(clone):
    done = make("publish", clone)  # origin is the bare repository
    assert done.returncode == 2
    assert "PUBLISH_REPOSITORY=owner/name" in done.stderr


def test_push_binder_ref_tags_the_environment_once(clone, bare):
    """Binder's ref (binder/'s hash) is pushed at this commit when origin lacks it, and then left as it is."""
    ref = binder_ref.environment_ref(clone)
    first = make("push-binder-ref", clone)
    assert first.returncode == 0 and f"pushed {ref} to origin" in first.stdout, first.stdout + first.stderr
    head = git("rev-parse", "HEAD", cwd=clone).strip()
    assert git("rev-parse", f"refs/tags/{ref}", cwd=bare).strip() == head
    (clone / "book" / "smoothing.md").write_text("a chapter changed\n")
    git("commit", "--quiet", "-am", "a push of a chapter only", cwd=clone)
    again = make("push-binder-ref", clone)
    assert again.returncode == 0 and f"origin has {ref}" in again.stdout, again.stdout + again.stderr
    assert git("rev-parse", f"refs/tags/{ref}", cwd=bare).strip() == head  # the tag names the image Binder built
