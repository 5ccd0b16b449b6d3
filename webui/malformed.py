"""Malformed Socket.IO traffic is refused with one log line, not a traceback.

A packet the Socket.IO library cannot decode or dispatch (``42[``, ``42{}``, ``42[]``,
``4x``, an unexpected ``CONNECT_ERROR``, a bad namespace payload) raised inside the library,
and Engine.IO logged each one as a handler error with its traceback; a long-poll POST whose
body is not UTF-8 did the same one level down. Nothing broke, but a stranger could fill the
log with tracebacks that look like bugs. Here:

- `refuse_undecodable` wraps the Socket.IO server's Engine.IO ``message`` handler: an
  exception of the kinds decoding raises (`MALFORMED`) is logged as one warning naming the
  socket and the reason, and the socket is closed, as the Socket.IO reference server does on
  a parse error (a client that keeps sending garbage pays a new handshake each time, which
  the admission and the hub's rate limits bound). The hub's own handlers catch their
  exceptions themselves (`Hub._handler`), so what arrives here is the library's decoding.
- `PollBodies` is a WSGI middleware that checks a long-poll POST's body is UTF-8 before
  Engine.IO decodes it, answering 400 with one log line otherwise. The body is at most 64
  KiB (`webui.bodylimit`), so reading it first costs a copy of a small buffer.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("svoyak.webui")

# What the library's packet decoding and event dispatch raise on a packet of the wrong shape
# (JSONDecodeError and UnicodeDecodeError are ValueErrors).
MALFORMED = (ValueError, TypeError, KeyError, IndexError, AttributeError)
SOCKETIO_PATH = "/socket.io"


def _reason(e: BaseException) -> str:
    """The exception in one printable line (a stranger's bytes may be in its message)."""
    text = "".join(c if c.isprintable() else "?" for c in str(e)[:120])
    return f"{type(e).__name__}: {text}"


def refuse_undecodable(server: Any) -> None:
    """Wrap `server`'s (a `socketio.Server`) Engine.IO message handler (see the module
    docstring)."""
    eio = server.eio
    original: Callable[[str, Any], Any] = eio.handlers["message"]

    def on_message(eio_sid: str, data: Any) -> Any:
        try:
            return original(eio_sid, data)
        except MALFORMED as e:
            log.warning("malformed Socket.IO packet from %s refused, socket closed (%s)",
                        eio_sid, _reason(e))
            eio.start_background_task(eio.disconnect, eio_sid)
            return None

    eio.on("message", on_message)


class PollBodies:
    """Refuse a Socket.IO long-poll POST whose body is not UTF-8 (see the module docstring)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], path: str = SOCKETIO_PATH):
        self.app = app
        self.path = path

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        if (environ.get("REQUEST_METHOD") != "POST"
                or not environ.get("PATH_INFO", "").startswith(self.path)):
            return self.app(environ, start_response)
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length > 0 else b""
            body.decode("utf-8")
        except ValueError as e:  # a bad length, or not UTF-8
            log.warning("malformed Socket.IO poll from %s refused (%s)",
                        environ.get("REMOTE_ADDR", "?"), _reason(e))
            text = b"Bad request: the body is not UTF-8 text.\n"
            start_response("400 Bad Request", [("Content-Type", "text/plain"),
                                               ("Content-Length", str(len(text)))])
            return [text]
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)
