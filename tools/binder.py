"""Binder, offline: its environment installed as repo2docker installs ``binder/``, its user server, its hub.

* :func:`install` makes a virtual environment the way repo2docker makes the
  image's: repo2docker's own interface first (:data:`BASE`, which the
  benchmark leaves out: it is in every Binder image, whatever ``binder/``
  says), ``pip install --no-cache-dir -r binder/requirements.txt`` (the
  cached pip layer), then ``binder/postBuild`` run from the repository root
  (``pip install --no-deps -e .``, the ``live_book`` server extension), its
  ``~/.jupyter`` inside the environment. :func:`environment` keeps one in
  ``.venv-binder`` and makes it again when ``binder/`` or ``pyproject.toml``
  change. The benchmark ``bench_binder_env`` times the same steps.
* :func:`binder_server` starts ``jupyter notebook`` from such an environment
  with the settings BinderHub's spawner gives a user server: a token, the
  base URL ``/user/<name>/``, any origin allowed.
* :class:`SimulatedBinderHub` answers a page's ``<binderUrl>/build/gh/<owner>/<repo>/<ref>``
  (thebe opens it as an ``EventSource``) with BinderHub's event stream:
  ``data: <json>`` per event, phases waiting ... launching, then ``ready``
  (the server's url and token) or ``failed`` (a message); with an
  :class:`ImageCache`, as mybinder answers: a ref whose image is built
  launches at once, any other is built first, once.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from _ext.publish import binder_ref
from tools import ROOT
from tools.servers import JupyterServer

BINDER = "binder"
#: What repo2docker's base environment brings before ``binder/`` (its conda environment, for every
#: repository: jupyter_server 2, jupyterlab 4, notebook 7, ipywidgets 8): the interface in which the plain
#: Binder link opens a chapter. ``binder/`` does not list it; the tests install it as that layer.
BASE = ("notebook==7.6.5",)
STAMP = ".installed"
#: BinderHub names a user server ``<owner>-<repo>-<8 random characters>`` (binderhub/launcher.py).
USER_PREFIX = "self-attention-by-hand-"


def _run(command: list[str], venv: Path, root: Path, env: dict[str, str] | None) -> None:
    """Run ``command`` as repo2docker runs its steps: from the repository, the environment's bin/ first."""
    env = {**(env or os.environ), "HOME": str(venv / "home"), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")


def install(venv: Path, root: Path = ROOT, *, requirements: str = f"{BINDER}/requirements.txt",
            post_build: str | None = f"{BINDER}/postBuild", env: dict[str, str] | None = None,
            base: tuple[str, ...] = ()) -> dict[str, float]:
    """A fresh environment in ``venv``: ``pip install`` of ``base``, of ``requirements``, then ``post_build``.

    Paths are relative to ``root``; ``env`` replaces the environment of the
    pip steps (the benchmark's: no pip cache, PyPI only). Returns the seconds
    each step took: ``{"base": ..., "pip": ..., "postBuild": ...}``.
    """
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    (venv / "home").mkdir()
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-cache-dir"]
    steps = {"base": [*pip, *base]} if base else {}
    steps["pip"] = [*pip, "-r", requirements]
    if post_build:
        steps["postBuild"] = ["bash", post_build]
    seconds = {}
    for name, command in steps.items():
        start = time.perf_counter()
        _run(command, venv, root, env)
        seconds[name] = time.perf_counter() - start
    return seconds


def _digest(root: Path) -> str:
    """What the environment is made from: :data:`BASE`, every file of ``binder/``, ``pyproject.toml``."""
    files = [*binder_ref.environment_files(root), root / "pyproject.toml"]
    return hashlib.sha256(repr(BASE).encode() + b"".join(
        p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() for p in files)).hexdigest()


def environment(venv: Path = ROOT / ".venv-binder", root: Path = ROOT) -> Path:
    """``venv`` holding the Binder environment of ``root``'s current ``binder/``, made if missing or stale."""
    stamp = venv / STAMP
    if not (stamp.is_file() and stamp.read_text() == _digest(root)):
        install(venv, root, base=BASE)
        stamp.write_text(_digest(root))
    return venv


def binder_server(venv: Path, root: Path = ROOT, **kwargs) -> JupyterServer:
    """``jupyter notebook`` from ``venv`` on 127.0.0.1, with mybinder's user-server settings."""
    return JupyterServer(
        "*", root, command=(str(venv / "bin" / "python"), "-m", "notebook"),
        base_url=f"/user/{USER_PREFIX}{secrets.token_hex(4)}/",
        options=("--ServerApp.allow_origin_pat=.*", "--ServerApp.trust_xheaders=True"),
        env={"HOME": str(venv / "home"), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}, **kwargs)


def event_stream(*events: dict) -> str:
    """BinderHub's wire format: a ``data: <json>`` line and a blank line per event."""
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events)


def ready_stream(server: JupyterServer) -> str:
    """A build that succeeds: BinderHub's phases, then ``ready`` with ``server``'s url and token."""
    return event_stream(
        {"phase": "waiting", "message": "Waiting for build to start...\n"},
        {"phase": "fetching", "message": "Fetching repository...\n"},
        {"phase": "building", "message": "Step 1/20 : FROM docker.io/library/buildpack-deps:jammy\n"},
        {"phase": "built", "message": "Built image, launching...\n", "imageName": "r2d-offline:latest"},
        {"phase": "launching", "message": "Launching server...\n"},
        {"phase": "ready", "message": f"server running at {server.url}\n", "url": server.url,
         "token": server.token, "image": "r2d-offline:latest"},
    )


def cached_stream(server: JupyterServer) -> str:
    """A launch from an image already built: no build phases, BinderHub's ``launching`` then ``ready``."""
    return event_stream(
        {"phase": "launching", "message": "Launching server...\n"},
        {"phase": "ready", "message": f"server running at {server.url}\n", "url": server.url,
         "token": server.token, "image": "r2d-offline:latest"},
    )


class ImageCache:
    """mybinder's images: one per ref (a tag, which names one commit); a ref not built yet is built first, once.

    :meth:`stream` is a :class:`SimulatedBinderHub`'s answer to a build URL;
    ``builds`` lists the refs built, in order.
    """

    def __init__(self, server: JupyterServer):
        self.server, self.builds = server, []

    def _build(self, ref: str) -> bool:
        """Build ``ref``'s image unless it is built: whether it was built now."""
        if ref in self.builds:
            return False
        self.builds.append(ref)
        return True

    def stream(self, url: str) -> str:
        ref = url.rstrip("/").rsplit("/", 1)[-1]
        return ready_stream(self.server) if self._build(ref) else cached_stream(self.server)

    def launch(self, url: str) -> str:
        """The server URL a launch link ``<hub>/v2/gh/<owner>/<repo>/<ref>?urlpath=<path>`` ends at, built or not.

        BinderHub's page at that link builds the ref's image if needed, starts a
        server and sends the browser to ``<server>/<urlpath>``, with the token
        added to the query (``binderhub-client``'s ``getFullRedirectURL``).
        """
        parts = urlsplit(url)
        self._build(parts.path.rstrip("/").rsplit("/", 1)[-1])
        target = urlsplit(self.server.url + parse_qs(parts.query).get("urlpath", [""])[0].lstrip("/"))
        query = "&".join(filter(None, [target.query, urlencode({"token": self.server.token})]))
        return urlunsplit(target._replace(query=query))


def failed_stream(message: str) -> str:
    """A build that fails with ``message`` (as BinderHub says it, with a trailing newline)."""
    return event_stream({"phase": "waiting", "message": "Waiting for build to start...\n"},
                        {"phase": "failed", "message": message + "\n"})


class SimulatedBinderHub:
    """Answers a Playwright ``page``'s ``<binder_url>/build/...`` requests with ``body``; records their URLs.

    ``body`` is the event stream, or a function of the request's URL that returns it (:meth:`ImageCache.stream`);
    ``launch``, if given, answers the launch link the same way (:meth:`ImageCache.launch`).

    Registered after :func:`tools.chromium.open_page`'s catch-all route, so it
    wins for the hub's address (Playwright tries the newest route first).
    """

    def __init__(self, page, body: str, binder_url: str = "https://mybinder.org", launch=None):
        self.requests: list[str] = []
        self.body, self.launch = body, launch
        page.route(f"{binder_url}/build/**", self._answer)
        if launch:  # a launch link (<binder_url>/v2/...): the browser is sent on to launch(url), a server's page
            page.route(f"{binder_url}/v2/**", self._redirect)

    def _redirect(self, route) -> None:
        self.requests.append(route.request.url)
        route.fulfill(status=302, headers={"Location": self.launch(route.request.url)})

    def _answer(self, route) -> None:
        self.requests.append(route.request.url)
        body = self.body(route.request.url) if callable(self.body) else self.body
        route.fulfill(status=200, body=body, headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
            # The page's EventSource is a cross-origin request: mybinder.org sends this too.
            "Access-Control-Allow-Origin": "*"})


def main(argv=None) -> int:
    """``make binder-env``: make (or keep) the Binder environment, so that the tests find it ready."""
    venv = Path(argv[0]) if argv else ROOT / ".venv-binder"
    start = time.perf_counter()
    environment(venv)
    print(f"{venv}: the Binder environment of binder/ ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
