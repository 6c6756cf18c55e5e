"""The two servers of ``make live``: the built site, and a Jupyter server for live kernels.

The browser tests and the benchmarks start them from here, exactly as
``make live`` (:mod:`tools.live`) does.

The Jupyter server runs in its own process, started as ``python -m
tools.servers <jupyter server options>`` (:func:`serve_jupyter`): it stops
when the process that started it ends, however that ends (:mod:`tools.lifetime`),
and then removes its runtime folder itself.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from jupyter_server.auth.identity import IdentityProvider

from tools import ROOT, lifetime
from tools.quiet_server import QuietServer


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    home: str | None = None  # the file served at "/" (else index.html)

    def log_message(self, *args) -> None:
        """Log nothing: ``make live`` keeps the terminal to the one URL it prints."""

    def list_directory(self, path):
        """No directory listings: a folder without ``index.html`` is not found."""
        self.send_error(404)

    def translate_path(self, path: str) -> str:
        if self.home and path.split("?")[0] == "/":
            path = "/" + self.home
        return super().translate_path(path)


class StaticServer:
    """The built site on ``http://127.0.0.1:<port>`` (loopback only, no directory listings), from a thread.

    ``home`` (a path in ``site``) is served at ``/`` instead of ``index.html``.
    """

    def __init__(self, site: Path, port: int = 0, home: str | None = None):
        handler = functools.partial(type("Handler", (_QuietHandler,), {"home": home}), directory=str(site))
        self.httpd = QuietServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # Polled every 0.1 s for a stop (the default, 0.5 s, was a quarter of make live's 2 s to stop).
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.1,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class OriginCheckingIdentityProvider(IdentityProvider):
    """Jupyter's token login, but a request with the token is still refused from another origin.

    Jupyter skips its origin check for a request that carries the token;
    this provider never skips it, so a request (HTTP or WebSocket) whose
    ``Origin`` header is neither the server's own nor ``allow_origin``
    (``Origin: null`` included) gets 404 or 403, token or not. A request
    with no ``Origin`` header (a script, not a browser page) needs the token.
    """

    def should_check_origin(self, handler) -> bool:
        return True


_ORIGIN_CHECK = f"--ServerApp.identity_provider_class={__name__}.OriginCheckingIdentityProvider"


def written_port(info: Path) -> int | None:
    """The port in a Jupyter server's ``jpserver-<pid>.json``, or None while it is missing or half-written.

    The server creates the file, then writes it: read in between (a loaded machine makes that
    likelier), it is empty or cut short, which means "not yet", not a failed start.
    """
    try:
        return int(json.loads(info.read_text())["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class JupyterServer:
    """``jupyter server`` on 127.0.0.1 that answers only requests with its token from ``origin``.

    A fresh random token of 192 bits (passed in the environment, never on the
    command line; Jupyter logs it as "..."); requests from any origin but
    ``origin`` refused even with the token (:class:`OriginCheckingIdentityProvider`);
    a free port chosen by the OS and read back from the server's info file in
    a private runtime directory. Requests carrying the token skip Jupyter's
    XSRF check, so the book's origin needs no further exemption.

    The keywords start it otherwise (:mod:`tools.binder` starts one as
    mybinder does, without the origin check): ``command`` (the server
    program), ``base_url``, ``options`` (the ``--ServerApp`` settings
    besides address, port, root and origin) and ``env`` (added to the
    environment).
    """

    def __init__(self, origin: str, root_dir: Path = ROOT, *, timeout: float = 60.0,
                 command: Sequence[str] = (sys.executable, "-m", "tools.servers"), base_url: str = "/",
                 options: Sequence[str] = ("--ServerApp.terminals_enabled=False", _ORIGIN_CHECK),
                 env: Mapping[str, str] | None = None):
        self.token = secrets.token_hex(24)
        self.base_url = base_url
        self.runtime = Path(tempfile.mkdtemp(prefix="live-jupyter-"))
        self.log = self.runtime / "server.log"
        cmd = [*command, "--no-browser",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", "--ServerApp.port_retries=0",
               *options, f"--ServerApp.base_url={base_url}",
               f"--ServerApp.root_dir={root_dir}", f"--ServerApp.allow_origin={origin}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # containers and CI run as root
        env = {**os.environ, **(env or {}), "JUPYTER_TOKEN": self.token, "JUPYTER_RUNTIME_DIR": str(self.runtime)}
        with open(self.log, "wb") as log:
            # Its own session: Ctrl-C reaches only this script, which stops it cleanly. Its standard
            # input is a pipe this process holds: it closes when this process ends (tools.lifetime).
            self.process = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.PIPE, start_new_session=True)
        try:
            self.url = self._wait_until_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_until_ready(self, timeout: float) -> str:
        info = self.runtime / f"jpserver-{self.process.pid}.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter server exited:\n{self.log.read_text()[-2000:]}")
            port = written_port(info)
            if port is not None:
                url = f"http://127.0.0.1:{port}{self.base_url}"
                try:
                    with urllib.request.urlopen(f"{url}api/status?token={self.token}", timeout=2):
                        return url
                except OSError:
                    pass
            time.sleep(0.1)
        raise TimeoutError(f"jupyter server not ready after {timeout} s:\n{self.log.read_text()[-2000:]}")

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``: what a page must be allowed to reach to use this server."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def stop(self) -> None:
        """Stop the server (SIGTERM shuts its kernels down too) and remove its files."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdin.close()
        shutil.rmtree(self.runtime, ignore_errors=True)


def serve_jupyter(argv: list[str]) -> None:
    """Run Jupyter's server with ``argv`` and the token in ``$JUPYTER_TOKEN``, which no kernel inherits.

    The server stops when the parent ends, and then removes its runtime folder.
    """
    parent = os.getppid()
    lifetime.exit_with_parent(signal.SIGTERM)  # Jupyter stops its kernels on SIGTERM
    from jupyter_server.serverapp import ServerApp
    from traitlets.config import Config

    # The token leaves the environment, which every kernel inherits (a cell could print it into the page),
    # for the server's own configuration.
    config = Config({"IdentityProvider": {"token": os.environ.pop("JUPYTER_TOKEN")}})
    try:
        ServerApp.launch_instance(argv, config=config)
    finally:
        if os.getppid() != parent:  # the parent is gone, and with it whoever would remove the folder
            shutil.rmtree(os.environ["JUPYTER_RUNTIME_DIR"], ignore_errors=True)
    # The server has stopped: its kernels are shut down and its files removed. Python's own finalization
    # would take 2 s more (measured after SIGTERM with one kernel: the server's cleanup 0.5 s, then 2.2 s
    # with no thread left but this one and the daemon above), and make live must end within 2 s of a hang-up.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    serve_jupyter(sys.argv[1:])
