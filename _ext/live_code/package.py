"""The book's package as a wheel served beside the pages, which a Binder session installs when it starts.

Binder's image is made from ``binder/`` alone (``_ext/publish``), so it
holds the package as it was when ``binder/`` last changed. The live
session runs the package the site was built with instead: the build writes
it as a wheel into ``_static/live-code/`` with ``package.json``
(:data:`DESCRIPTION`: the wheel's file name, the package's version and
:func:`content_hash`), and ``live-code.js`` has the new kernel run
``pip install --no-deps --force-reinstall`` of that wheel, from the site's own
address, before any cell.

The wheel is written here, not by a build backend: it holds exactly the
package's modules and ``py.typed`` (``pyproject.toml``'s package data) as
they are in ``src/``, with a fixed date, so two builds of one commit write the
same bytes; the metadata is ``pyproject.toml``'s name, version, Python and
dependencies.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tomllib
import zipfile
from pathlib import Path

#: What the site says about the wheel beside it (``_static/live-code/package.json``).
DESCRIPTION = "package.json"
WHEEL = b"Wheel-Version: 1.0\nGenerator: live_code\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
#: The date of every file in the wheel (zip's earliest): builds of one commit are byte-identical.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def package_files(src: Path, name: str) -> list[tuple[str, bytes]]:
    """``(path, bytes)`` of the package ``name`` under ``src``: its modules and ``py.typed``, sorted by path."""
    files = (p for p in (src / name).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [(p.relative_to(src).as_posix(), p.read_bytes())
            for p in sorted(files) if p.suffix == ".py" or p.name == "py.typed"]


def content_hash(files: list[tuple[str, bytes]]) -> str:
    """SHA-256 over each file's path and SHA-256, in path order: equal for the same files wherever installed."""
    digest = hashlib.sha256()
    for path, data in sorted(files):
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project.get('description', '')}", f"Requires-Python: {project['requires-python']}",
             *(f"Requires-Dist: {dependency}" for dependency in project.get("dependencies", []))]
    return "\n".join(lines) + "\n"


def write_wheel(root: Path, target: Path) -> dict[str, str]:
    """Write the package of the book at ``root`` as a wheel into ``target``; what ``package.json`` says of it."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    files = package_files(root / "src", name)
    info = f"{name}-{version}.dist-info"
    entries = [*files, (f"{info}/METADATA", _metadata(project).encode()), (f"{info}/WHEEL", WHEEL)]
    record = "".join(_record_line(path, data) for path, data in entries) + f"{info}/RECORD,,\n"
    wheel = f"{name}-{version}-py3-none-any.whl"
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob(f"{name}-*.whl"):  # a staged build starts from the last one's files
        old.unlink()
    with zipfile.ZipFile(target / wheel, "w") as archive:
        for path, data in [*entries, (f"{info}/RECORD", record.encode())]:
            member = zipfile.ZipInfo(path, date_time=ZIP_DATE)
            member.external_attr = 0o644 << 16
            archive.writestr(member, data, compress_type=zipfile.ZIP_DEFLATED)
    description = {"name": name, "version": version, "wheel": wheel, "sha256": content_hash(files)}
    (target / DESCRIPTION).write_text(json.dumps(description, indent=1, sort_keys=True) + "\n")
    return description
