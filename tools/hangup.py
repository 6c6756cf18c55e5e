"""Close the terminal of ``make live`` and watch everything it started stop.

``ssh -t host make live``, ``tmux new 'make live'``, ``xterm -e make live``:
``make`` leads the terminal's session, so closing the terminal signals
(SIGHUP) ``make`` alone, which waits for its children. :func:`close_terminal`
runs that case on a pseudo-terminal: ``make live`` on ``site`` (a folder
newer than the sources, so nothing is built), a kernel started through the
server as a reader's page would, then the terminal closed. It returns how
long ``make``, ``tools.live``, the Jupyter server and the kernel took to end.

Shared by the test that everything stops and the runtime folder (with the
token) is removed (``tests/build/test_live_servers.py``), and by the
benchmark that times it against the 2-s goal (``benchmarks/bench_live_hangup.py``).
"""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import psutil

from tools import ROOT


@dataclass(frozen=True)
class HangUp:
    """What closing the terminal of ``make live`` did."""

    seconds: float  #: from closing the terminal until the last process ended (or ``timeout``)
    alive: list[psutil.Process]  #: processes still running when ``timeout`` ran out
    runtime_left: bool  #: whether Jupyter's runtime folder (its token and connection files) is still on disk
    leader: str  #: the name of the session's leader, the process the hang-up reaches ("make")


def read_url(fd: int, timeout: float) -> tuple[str, str, str]:
    """The site, server and token of the URL ``make live`` prints on the pseudo-terminal ``fd``."""
    printed, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 1)[0]:
            try:
                printed += os.read(fd, 65536)
            except OSError:  # EIO: every process on the terminal has ended
                break
            found = re.search(r"(http://127\.0\.0\.1:\d+)/\S*#jupyter=([^&\s]+)&token=(\w+)", printed.decode())
            if found:
                return found.group(1), unquote(found.group(2)), found.group(3)
    raise RuntimeError(f"make live printed no URL:\n{printed.decode(errors='replace')[-4000:]}")


def start_kernel(server: str, site: str, token: str) -> None:
    """Start a kernel on the Jupyter ``server`` as the book's page at ``site`` does."""
    headers = {"Origin": site, "Authorization": f"token {token}"}
    req = urllib.request.Request(f"{server}api/kernels", method="POST", headers=headers, data=b"{}")
    with urllib.request.urlopen(req, timeout=30) as response:
        if response.status != 201:
            raise RuntimeError(f"starting a kernel answered {response.status}")


def close_terminal(site: Path, timeout: float, start_timeout: float = 300.0) -> HangUp:
    """Run ``make live`` on ``site`` in a new session on a pseudo-terminal, start a kernel, close the terminal.

    ``start_timeout`` bounds the start (a loaded machine starts Jupyter slowly), ``timeout`` the stop. Whatever
    happens, every process the run started is killed before this returns.
    """
    pid, master = pty.fork()  # the child leads a new session on the pseudo-terminal
    if pid == 0:
        os.execvp("make", ["make", "-C", str(ROOT), "--no-print-directory", "live", f"SITE={site}"])
    make = psutil.Process(pid)
    processes = []
    try:
        page, server, token = read_url(master, start_timeout)
        start_kernel(server, page, token)
        leader, processes = make.name(), [make, *make.children(recursive=True)]
        jupyter = next(p for p in processes if "tools.servers" in p.cmdline())
        runtime = Path(jupyter.environ()["JUPYTER_RUNTIME_DIR"])
        if os.getsid(pid) != pid or not jupyter.children():
            raise RuntimeError("make live did not lead its session, or its server started no kernel")
        os.close(master)  # the terminal closes: SIGHUP to make, the session's leader, only
        master = None
        start = time.monotonic()
        _, alive = psutil.wait_procs(processes, timeout=timeout)
        return HangUp(time.monotonic() - start, alive, runtime.exists(), leader)
    finally:
        with contextlib.suppress(psutil.NoSuchProcess):
            processes = processes or [make, *make.children(recursive=True)]
        if master is not None:
            os.close(master)
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
