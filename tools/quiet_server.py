"""The threading HTTP server of the book's local servers (:mod:`tools.servers`, :mod:`tools.pages_server`)."""

from __future__ import annotations

import http.server
import sys


class QuietServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server that prints nothing when a browser hangs up before the reply is sent.

    A reader leaving a page while its images load, or a test closing its page, breaks the connection
    mid-reply (``BrokenPipeError``, ``ConnectionResetError``); any other error in a request is printed.
    """

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
