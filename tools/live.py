"""`make live`: the built book plus a local Jupyter server, for live code cells.

Builds the book if it is missing or older than its sources, serves it on
127.0.0.1 only (no directory listings), starts ``jupyter server`` on
127.0.0.1, and prints one URL to open. What the Jupyter server enforces:

* every request needs its token: 192 random bits, fresh for each run, passed
  to the server in its environment (never on a command line), logged by
  Jupyter as "...", printed only in the one URL below;
* a request from a browser page of another origin than the book's is refused
  (HTTP 404, WebSocket 403), token or not, ``Origin: null`` included; a
  request with no ``Origin`` header (a script on this machine) is accepted
  with the token.

The token travels in the URL *fragment* (``#jupyter=<server>&token=<token>``),
which the browser never sends to a server; the page's ``live-code.js`` reads
it (see ``_ext/live_code``).

Ctrl-C, closing the terminal (SIGHUP) and SIGTERM stop both servers: the
Jupyter server shuts its kernels down and its runtime folder is removed. If
this process dies without cleaning up (SIGKILL, a crash), the Jupyter server
notices and does the same itself (:func:`tools.servers.serve_jupyter`).

The two servers are :mod:`tools.servers`, which the browser tests and the
benchmarks start the same way.

Usage, from the repository root (``make live`` runs the first form)::

    python -m tools.live [--site DIR] [--page PATH] [--port PORT] [--no-build]
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from tools import ROOT, SITE
from tools.servers import JupyterServer, StaticServer

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


def live_url(site_url: str, page: str, jupyter_url: str, token: str) -> str:
    """The page's URL with the server and token in its fragment."""
    return f"{site_url}/{page.lstrip('/')}#jupyter={quote(jupyter_url, safe='')}&token={quote(token, safe='')}"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m tools.live", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / SITE, help="built site (default: _build/html)")
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
    # Ctrl-C raises KeyboardInterrupt even if a parent shell ignored SIGINT; SIGTERM and a closed
    # terminal (SIGHUP) exit cleanly, through the `finally` below.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda *_: sys.exit(0))
    site = StaticServer(args.site, args.port)
    jupyter = None
    try:
        jupyter = JupyterServer(origin=site.url)
        print("\nThe book, with live code cells on a Jupyter server on this machine. Open:\n")
        print(f"    {live_url(site.url, args.page, jupyter.url, jupyter.token)}\n")
        print('Then press the rocket button, "Live Code". The URL holds a fresh token: keep it private.')
        print("Ctrl-C (or closing this terminal) stops both servers.", flush=True)
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
