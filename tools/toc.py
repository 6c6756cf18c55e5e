"""The documents of the book's table of contents (``_toc.yml``), read with PyYAML.

``_toc.yml`` is in sphinx-external-toc's ``jb-book`` format: a ``root``
document, then ``chapters`` (or ``parts``, each with ``chapters``), each
entry a ``file`` that may have ``sections`` of its own. Example::

    >>> documents()[:2]
    ['book/index', 'book/introduction']
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tools import ROOT

TOC = ROOT / "_toc.yml"


def _files(entries: list[dict]) -> list[str]:
    """The ``file`` of each entry, followed by its sections' files, depth first."""
    found = []
    for entry in entries:
        found += [entry["file"]] if "file" in entry else []
        for key in ("parts", "chapters", "sections"):
            found += _files(entry.get(key, []))
    return found


def documents(toc: Path = TOC) -> list[str]:
    """Every document the table of contents lists, in reading order, root first (no suffix)."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    return [data["root"], *_files(data.get("parts", [])), *_files(data.get("chapters", []))]


def pages(toc: Path = TOC) -> list[str]:
    """The built HTML page of every document, relative to the site: ``book/<name>.html``."""
    return [f"{name}.html" for name in documents(toc)]


def write(target: Path, root: str, files: list[str]) -> Path:
    """Write a ``jb-book`` table of contents: ``root``, then ``files`` as chapters."""
    data = {"format": "jb-book", "root": root, "chapters": [{"file": name} for name in files]}
    target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target
