"""`make live`: the built book plus a local Jupyter server, for live code cells.

Builds the book if it is missing or older than its sources, serves it on
127.0.0.1, starts ``jupyter server`` on 127.0.0.1 with a fresh random token
and CORS limited to the book's origin, and prints one URL to open. The token
travels in the URL *fragment* (``#jupyter=<server>&token=<token>``), which
the browser never sends to a server; the page's ``live-code.js`` reads it
(see ``_ext/live_code``). Ctrl-C stops both servers.

The browser tests and the benchmark start their Jupyter server with
:class:`JupyterServer` from here, exactly as ``make live`` does.

Usage::

    python tools/live.py [--site DIR] [--page PATH] [--port PORT] [--no-build]
"""

from __future__ import annotations

import argparse
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
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
#: What a build of the book depends on (newer than the site: rebuild).
SOURCES = ("book", "_ext", "src", "_config.yml", "_toc.yml", "requirements.txt")


def site_is_stale(site: Path, root: Path = ROOT) -> bool:
    """True when ``site`` has no index.html or a source file is newer than it."""
    index = site / "index.html"
    if not index.exists():
        return True
    built = index.stat().st_mtime
    paths = (root / name for name in SOURCES)
    files = (f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())
    return any(f.stat().st_mtime > built for f in files if "__pycache__" not in f.parts)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - keep the terminal to the one URL
        pass


class StaticServer:
    """The built site on ``http://127.0.0.1:<port>``, served from a thread."""

    def __init__(self, site: Path, port: int = 0):
        handler = functools.partial(_QuietHandler, directory=str(site))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class JupyterServer:
    """``jupyter server`` on 127.0.0.1 that only the page at ``origin`` may call.

    A fresh random token (passed in the environment, never on the command
    line); CORS limited to ``origin``; a free port chosen by the OS and read
    back from the server's info file in a private runtime directory.
    Requests carrying the token skip Jupyter's XSRF check, so the book's
    origin needs no further exemption.
    """

    def __init__(self, origin: str, root_dir: Path = ROOT, *, timeout: float = 60.0):
        self.token = secrets.token_hex(24)
        self.runtime = Path(tempfile.mkdtemp(prefix="live-jupyter-"))
        self.log = self.runtime / "server.log"
        cmd = [sys.executable, "-m", "jupyter_server", "--no-browser",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", "--ServerApp.port_retries=0",
               "--ServerApp.terminals_enabled=False",
               f"--ServerApp.root_dir={root_dir}", f"--ServerApp.allow_origin={origin}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # containers and CI run as root
        env = {**os.environ, "JUPYTER_TOKEN": self.token, "JUPYTER_RUNTIME_DIR": str(self.runtime)}
        with open(self.log, "wb") as log:
            # Its own session: Ctrl-C reaches only this script, which stops it cleanly.
            self.process = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
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
            if info.exists():
                url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}/"
                try:
                    with urllib.request.urlopen(f"{url}api/status?token={self.token}", timeout=2):
                        return url
                except OSError:
                    pass
            time.sleep(0.1)
        raise TimeoutError(f"jupyter server not ready after {timeout} s:\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        """Stop the server (SIGTERM shuts its kernels down too) and remove its files."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.runtime, ignore_errors=True)


def live_url(site_url: str, page: str, jupyter_url: str, token: str) -> str:
    """The page's URL with the server and token in its fragment."""
    return f"{site_url}/{page.lstrip('/')}#jupyter={quote(jupyter_url, safe='')}&token={quote(token, safe='')}"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SITE, help="built site (default: _build/html)")
    parser.add_argument("--page", default="book/smoothing.html", help="page the URL opens")
    parser.add_argument("--port", type=int, default=0, help="port of the book (default: any free port)")
    parser.add_argument("--no-build", action="store_true", help="never build, even if the site is stale")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.no_build and site_is_stale(args.site):
        print("Building the book (make build)...", flush=True)
        subprocess.run(["make", "build"], cwd=ROOT, check=True)
    if not (args.site / "index.html").exists():
        print(f"no built site in {args.site}", file=sys.stderr)
        return 1
    # Ctrl-C raises KeyboardInterrupt even if a parent shell ignored SIGINT; SIGTERM exits cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    site = StaticServer(args.site, args.port)
    jupyter = None
    try:
        jupyter = JupyterServer(origin=site.url)
        print("\nThe book, with live code cells on a Jupyter server on this machine. Open:\n")
        print(f"    {live_url(site.url, args.page, jupyter.url, jupyter.token)}\n")
        print('Then press the rocket button, "Live Code". The URL holds a fresh token: keep it private.')
        print("Ctrl-C stops both servers.", flush=True)
        while jupyter.process.poll() is None:
            time.sleep(0.5)
        print("the Jupyter server stopped", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nStopping...", flush=True)
        return 0
    finally:
        if jupyter is not None:
            jupyter.stop()
        site.stop()


if __name__ == "__main__":
    sys.exit(main())
