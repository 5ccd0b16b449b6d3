"""Host authority: the PIN check, host sessions the server can end, and cookies whose
lifetime does not depend on the box's clock.

**PIN guessing.** Each client gets `FREE_TRIES` wrong PINs; after that every wrong PIN
doubles its lock-out, up to `MAX_LOCK_S`. On top of that, devices the box does not know
share a global budget of `GLOBAL_FAILURES` wrong PINs per `GLOBAL_WINDOW_S`, whatever
address they come from (a stranger can take new addresses from the box's DHCP). A device
is *known* when it carries the signed device cookie the box gave it at an earlier
successful login (the host's tablet), or when it is the box itself (loopback): it is never
held back by the global budget, only by its own failures, so the right PIN from the host's
tablet works while strangers are failing. docs/webui.md gives the arithmetic.

**Sessions.** A host session holds the box's current *session generation*, a random token
kept in `DATA/host_session`; logout and a PIN change write a new one, which ends every
host session at once, on every device.

**Clock.** A Raspberry Pi has no real-time clock and the box no network time, so its clock
may be years away from the tablet's. Cookies carry a relative `Max-Age` and no `Expires`,
and the server never checks a cookie's age against its own clock: the tablet measures the
lifetime, the generation token ends sessions.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SecureCookieSessionInterface, SessionMixin
from itsdangerous import BadSignature, URLSafeSerializer
from werkzeug.http import dump_cookie
from werkzeug.wrappers import Response as AnyResponse  # flask.Response and redirect()'s

from appliance import storage

FREE_TRIES = 5
FIRST_LOCK_S = 30.0
MAX_LOCK_S = 15 * 60.0
GLOBAL_WINDOW_S = 60.0
GLOBAL_FAILURES = 20
# Clients remembered by the guard (oldest forgotten first), so a flood of addresses cannot
# grow memory without bound.
MAX_CLIENTS = 4096

DEVICE_COOKIE = "svoyak_device"
DEVICE_MAX_AGE_S = 365 * 24 * 3600
SESSION_MAX_AGE_S = 30 * 24 * 3600
GENERATION_FILE = "host_session"


@dataclass
class _Client:
    failures: int = 0
    locked_until: float = 0.0


@dataclass
class PinGuard:
    """Checks PINs; `check` answers (ok, retry_after_seconds)."""

    clock: Callable[[], float] = time.monotonic
    _clients: dict[str, _Client] = field(default_factory=dict)
    _recent: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, client: str, given: str, expected: str, *,
              known: bool = False) -> tuple[bool, float]:
        """`client` is the key failures are counted under (the device id of a known
        device, else the address); `known` exempts it from the global budget."""
        now = self.clock()
        with self._lock:
            self._recent = [t for t in self._recent if now - t < GLOBAL_WINDOW_S]
            c = self._clients.pop(client, None) or _Client()
            self._clients[client] = c  # most recently seen last
            while len(self._clients) > MAX_CLIENTS:
                del self._clients[next(iter(self._clients))]
            wait = max(c.locked_until - now, 0.0)
            if not known and len(self._recent) >= GLOBAL_FAILURES:
                wait = max(wait, GLOBAL_WINDOW_S - (now - self._recent[0]))
            if wait > 0:
                return False, wait
            if pin_matches(given, expected):
                c.failures = 0
                c.locked_until = 0.0
                return True, 0.0
            c.failures += 1
            if not known:
                self._recent.append(now)
            if c.failures >= FREE_TRIES:
                lock = min(FIRST_LOCK_S * 2 ** (c.failures - FREE_TRIES), MAX_LOCK_S)
                c.locked_until = now + lock
                return False, lock
            return False, 0.0


def valid_pin(pin: Any) -> bool:
    """What a tablet's keypad can type: 6 to 12 ASCII digits (not "٣" or "３")."""
    return isinstance(pin, str) and 6 <= len(pin) <= 12 and pin.isascii() and pin.isdigit()


def pin_matches(given: Any, expected: str) -> bool:
    given = str(given).strip()
    if not (given.isascii() and given.isdigit()) or len(given) > 32:
        return False
    return hmac.compare_digest(given.encode(), str(expected).encode())


# --- sessions the server can end -------------------------------------------------------------

class Generation:
    """The current host session generation (see the module docstring)."""

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / GENERATION_FILE
        self._lock = threading.Lock()
        self._value = self._load()

    def _load(self) -> str:
        try:
            value = self.path.read_text("ascii").strip()
        except (OSError, UnicodeDecodeError):
            value = ""
        if len(value) < 32:  # missing, empty (a cut during the first write) or damaged
            value = self._write()
        return value

    def _write(self) -> str:
        value = secrets.token_urlsafe(32)
        storage.write_bytes(self.path, value.encode("ascii"))
        return value

    @property
    def value(self) -> str:
        return self._value

    def matches(self, token: Any) -> bool:
        return isinstance(token, str) and hmac.compare_digest(token.encode(), self._value.encode())

    def revoke(self) -> None:
        """End every host session."""
        with self._lock:
            self._value = self._write()


class RelativeSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, with the box's clock taken out: the cookie has a
    relative Max-Age (no Expires), and its signature's age is not checked here."""

    def open_session(self, app: Flask, request: Request) -> Any:
        s = self.get_signing_serializer(app)
        if s is None:
            return None
        val = request.cookies.get(self.get_cookie_name(app))
        if not val:
            return self.session_class()
        try:
            return self.session_class(s.loads(val))
        except BadSignature:
            return self.session_class()

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        name = self.get_cookie_name(app)
        if session.accessed:
            response.vary.add("Cookie")
        if not session:
            if session.modified:
                response.delete_cookie(name, path=self.get_cookie_path(app),
                                       samesite=self.get_cookie_samesite(app),
                                       httponly=self.get_cookie_httponly(app))
                response.vary.add("Cookie")
            return
        if not self.should_set_cookie(app, session):
            return
        serializer = self.get_signing_serializer(app)
        assert serializer is not None
        max_age = int(app.permanent_session_lifetime.total_seconds()) \
            if session.permanent else None
        set_relative_cookie(response, name, serializer.dumps(dict(session)), max_age,
                            httponly=self.get_cookie_httponly(app),
                            samesite=self.get_cookie_samesite(app) or "Lax")
        response.vary.add("Cookie")


def set_relative_cookie(response: AnyResponse, name: str, value: str, max_age: int | None, *,
                        httponly: bool = True, samesite: str = "Lax") -> None:
    """A cookie the browser keeps `max_age` seconds by its own clock: Max-Age, no Expires."""
    response.headers.add("Set-Cookie", dump_cookie(
        name, value, max_age=max_age, path="/", httponly=httponly, samesite=samesite,
        sync_expires=False))


# --- known devices ---------------------------------------------------------------------------

def _device_serializer(app: Flask) -> URLSafeSerializer:
    return URLSafeSerializer(app.secret_key, salt="svoyak-device")  # type: ignore[arg-type]


def device_id(app: Flask, request: Request) -> str | None:
    """The id of a device that logged in here before, from its signed cookie."""
    raw = request.cookies.get(DEVICE_COOKIE)
    if not raw or len(raw) > 200:
        return None
    try:
        value = _device_serializer(app).loads(raw)
    except BadSignature:
        return None
    return value if isinstance(value, str) else None


def remember_device(app: Flask, response: AnyResponse, known: str | None) -> None:
    value = known or secrets.token_urlsafe(16)
    set_relative_cookie(response, DEVICE_COOKIE, _device_serializer(app).dumps(value),
                        DEVICE_MAX_AGE_S)
