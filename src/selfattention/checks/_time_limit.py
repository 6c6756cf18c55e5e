"""The reader's function stopped after a time limit, so that a loop that never ends cannot hang a session.

In the main thread (where a notebook's kernel runs a cell) a timer signal
raises :class:`TimeUp` inside the function; an outer timer is put back
afterwards. Elsewhere no signal can reach the function: it runs in a daemon
thread, which the check stops waiting for (and leaves behind) at the limit.
"""

from __future__ import annotations

import signal
import threading
import time


class TimeUp(BaseException):
    """The reader's function ran past the time limit (a BaseException: no ``except Exception`` stops it)."""


def limited(function, args: tuple, seconds: float):
    """``function(*args)``, stopped after ``seconds`` (a timer signal, or a thread given up on)."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _with_alarm(function, args, seconds)
    return _in_thread(function, args, seconds)


def _with_alarm(function, args: tuple, seconds: float):
    def stop(signum, frame):
        raise TimeUp

    previous = signal.signal(signal.SIGALRM, stop)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)  # an outer timer is put back after
    start = time.monotonic()
    try:
        return function(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3))


def _in_thread(function, args: tuple, seconds: float):
    """Off the main thread no signal can stop it: it runs in a daemon thread, left behind if too slow."""
    box: dict = {}

    def run():
        try:
            box["value"] = function(*args)
        except BaseException as error:
            box["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeUp
    if "error" in box:
        raise box["error"]
    return box["value"]
