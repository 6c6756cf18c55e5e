"""The git ref Binder launches from: ``binder-<hash of binder/>``, which changes only when ``binder/`` changes.

mybinder.org keeps one image per commit a ref resolves to. A launch that
named the pushed branch would resolve to a new commit, and wait for a new
image, after every push; this ref names the environment instead. The Pages
workflow (``.github/workflows/book.yml``) creates it as a tag on the pushed
commit when no tag of that name exists yet, so a push that changes only the
chapters or the package launches from the image already built, and a change
to ``binder/`` builds one new image. The session then installs the package
the site was built with (``_ext/live_code``).

No Sphinx here: the workflow runs this file to print the ref::

    python3 _ext/publish/binder_ref.py [ROOT]
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

#: The folder repo2docker makes the image from (its requirements, runtime and postBuild).
BINDER = "binder"
PREFIX = "binder-"


def environment_files(root: Path) -> list[Path]:
    """The files of ``root/binder/``, sorted, less Python's byte-code caches (``__pycache__``, never committed)."""
    return sorted(p for p in (root / BINDER).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def environment_ref(root: Path) -> str:
    """``binder-`` and 16 hex digits of SHA-256 over each file of ``root/binder/``: its path and its bytes."""
    digest = hashlib.sha256()
    files = environment_files(root)
    if not files:
        raise FileNotFoundError(f"no {BINDER}/ folder with files in {root}")
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return PREFIX + digest.hexdigest()[:16]


if __name__ == "__main__":
    print(environment_ref(Path(sys.argv[1]) if sys.argv[1:] else Path.cwd()))
