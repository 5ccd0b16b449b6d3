"""How large a request body may be, per route, enforced before the body is read.

Only three routes take files, and only from the host: a question package
(``POST /admin/packages``, up to `UPLOAD_BODY`), the tournament's entries CSV
(``POST /admin/tournament/import``) and a room's result file (``POST /admin/rooms/import``).
Every other request, and any request without a live host session, may send at most
`SMALL_BODY` (a form, a JSON command, a Socket.IO long-poll frame: Engine.IO's own limit is
the same 64 KiB). A body declared larger (``Content-Length``) is refused with 413 before a
byte of it is read; a body without a length (``Transfer-Encoding: chunked``) is read through
a stream that stops at the limit, so a stranger's 300 MB to ``/login`` never reaches the
form parser, which holds a urlencoded form in memory whole. The server then drains at most a
few kilobytes of what is left and closes the connection (gunicorn's keep-alive drain).

A WSGI middleware rather than Flask's ``MAX_CONTENT_LENGTH``: one global number cannot be
large for an upload and small for a login, and the Socket.IO routes never reach Flask.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.exceptions import RequestEntityTooLarge

SMALL_BODY = 64 * 1024
UPLOAD_BODY = 1024 * 1024 * 1024
UPLOADS = frozenset({"/admin/packages", "/admin/tournament/import", "/admin/rooms/import"})
TOO_LARGE = ("Запрос слишком большой: здесь принимается не больше {ru}.\n"
             "The request is too large: this address takes at most {en}.\n")


def _size(n: int) -> tuple[str, str]:
    if n >= 1024 * 1024:
        return f"{n // (1024 * 1024)} МиБ", f"{n // (1024 * 1024)} MiB"
    return f"{n // 1024} КиБ", f"{n // 1024} KiB"


def limit_for(method: str, path: str, host: bool) -> int:
    """The largest body this request may send."""
    if host and method == "POST" and path.rstrip("/") in UPLOADS:
        return UPLOAD_BODY
    return SMALL_BODY


class CappedInput:
    """A body without a declared length, read up to `limit` bytes: one byte more raises
    `RequestEntityTooLarge` (a 413 from Flask), so nothing is silently cut short and no
    reader ever holds more than the limit."""

    def __init__(self, stream: Any, limit: int):
        self._stream = stream
        self._left = limit

    def read(self, size: int | None = -1) -> bytes:
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        data: bytes = self._stream.read(want) if want else b""
        self._left -= len(data)
        if self._left < 0:
            raise RequestEntityTooLarge()
        return data

    def readline(self, size: int | None = -1) -> bytes:
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        data: bytes = self._stream.readline(want)
        self._left -= len(data)
        if self._left < 0:
            raise RequestEntityTooLarge()
        return data

    def __iter__(self) -> Any:
        while line := self.readline():
            yield line


class BodyLimit:
    """The WSGI middleware (see the module docstring). `is_host(environ)` says whether the
    request carries a live host session."""

    def __init__(self, app: Callable[..., Iterable[bytes]],
                 is_host: Callable[[dict[str, Any]], bool]):
        self.app = app
        self.is_host = is_host
        self.refused = 0  # for tests and the log

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "")
        declared = environ.get("CONTENT_LENGTH") or ""
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not declared and not chunked:
            return self.app(environ, start_response)  # no body
        small = limit_for(method, path, False)
        limit = small
        try:
            length = int(declared) if declared else None
        except ValueError:
            length = None
        if length is None or length > small:  # the cookie is read only when it matters
            limit = limit_for(method, path, self.is_host(environ))
        if length is not None and length > limit:
            return self._refuse(limit, start_response)
        if length is None:
            environ["wsgi.input"] = CappedInput(environ["wsgi.input"], limit)
        return self.app(environ, start_response)

    def _refuse(self, limit: int, start_response: Callable[..., Any]) -> Iterable[bytes]:
        self.refused += 1
        ru, en = _size(limit)
        body = TOO_LARGE.format(ru=ru, en=en).encode()
        start_response(f"{RequestEntityTooLarge.code} Content Too Large", [
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))),
            ("X-Content-Type-Options", "nosniff"), ("Connection", "close")])
        return [body]
