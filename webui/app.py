"""The Flask app factory: pages, the host login, QR codes, the simulator's test hook and
the Socket.IO hub. Everything the app needs (game loop, settings, package source) is
passed in as `Services`, so tests build an app over a real loop and a temporary data dir."""

from __future__ import annotations

import importlib
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flask import Flask, Response, abort, request
from flask_socketio import SocketIO

from appliance import storage
from appliance.rules.tournament.views import caption
from webui import auth, malformed, server
from webui.admission import Admission
from webui.auth import Generation, PinGuard, RelativeSessionInterface
from webui.bodylimit import UPLOAD_BODY, BodyLimit
from webui.hub import Hooks, Hub, JsonPacket
from webui.inbound import MALFORMED_EVENT
from webui.settings import Settings

log = logging.getLogger("svoyak.webui")


class Buttons(Protocol):
    """The wired buttons as the screens see them (`gpio.Hardware`, or `gpio.Fault` when
    they could not start): their status for the host and the admin page."""

    def status(self) -> dict[str, Any]: ...


@dataclass
class Services:
    """What the composition root hands the web UI, built once before `create_app`."""

    loop: Any  # appliance.runtime.loop.GameLoop
    settings: Settings
    data_dir: Path
    simulate: bool = False
    # start_game(rules_name, players, package_id, options) -> game id
    start_game: Callable[..., Any] | None = None
    # list_packages() -> [{"id": str, "name": str, ...}]
    list_packages: Callable[[], list[dict[str, Any]]] = list
    library: Any = None  # appliance.packages.library, when present
    store: Any = None  # appliance.runtime.store.Store, for protocol export
    # The box's tournament shell (the director's pages drive it): built by the composition
    # root over the same loop, never by the web UI.
    tournament: Any = None  # appliance.runtime.tournament.TournamentShell
    # export_game(game) -> the game's record and events (the admin's protocol export)
    export_game: Callable[[int], dict[str, Any]] | None = None
    listen: str | None = None  # the address the server listens on (the host page's QR code)
    hardware: Buttons | None = None  # gpio.Hardware, or gpio.Fault when they could not start
    # The wired buttons' press path (`press(seat, by)` -> its tick), when they are wired:
    # simulated presses (keys, phones) then take it, bounce window included.
    press: Callable[[int, str], Any] | None = None
    problems: list[dict[str, str]] = field(default_factory=list)  # shown on the admin page
    # The rooms link (rooms.wiring.Rooms: its `link`, `setup(form)` and `joins`), when the
    # box is in a rooms tournament (its pages are served then); rooms/ never writes here.
    rooms: Any = None


SECRET_BYTES = 32
# Largest Socket.IO message a screen may send: a host command is a few hundred bytes, a
# written answer a few kilobytes; package uploads go over HTTP.
MAX_MESSAGE_BYTES = 64 * 1024
# What a page may load: only the box's own scripts; inline styles stay allowed (the
# templates use a few style attributes), no plugin, no frame, forms only to the box.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; media-src 'self'; connect-src 'self'; object-src 'none'; "
       "base-uri 'self'; form-action 'self'; frame-ancestors 'none'")


def secret_key(data_dir: Path, problems: list[dict[str, str]] | None = None) -> bytes:
    """A per-box session key kept in the data dir, so a host stays logged in across a
    server restart (the tablet comes back to the right screen). A missing, short or empty
    file (a power cut during the first boot's write) is replaced by a fresh key, written
    atomically; the damaged one is kept aside and the host is told (`problems`)."""
    path = data_dir / "secret_key"
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        key = None
    if key is not None and len(key) >= SECRET_BYTES:
        return key
    if key is not None:
        aside = storage.keep_damaged(path)
        log.error("%s was damaged (%d bytes): moved to %s, a new key made", path, len(key),
                  aside.name)
        if problems is not None:
            problems.append({
                "code": "secret_key",
                "ru": "Файл ключа сессий был повреждён и заменён новым: ведущему нужно "
                      "войти заново. Игры не затронуты.",
                "en": "The session key file was damaged and has been replaced: the host "
                      "must log in again. No game was affected."})
    key = secrets.token_bytes(SECRET_BYTES)
    storage.write_bytes(path, key)
    return key


def safe_origin() -> None:
    """Refuse a state-changing request another site made the browser send (CSRF).

    Browsers name the page that made a request in `Origin` (every POST) and
    `Sec-Fetch-Site`; a request without either is not from a browser page, so it carries
    no victim's cookie. Tokens in forms would do the same job but expire by the box's
    clock (which is not to be trusted, see `auth`) and would touch every form."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        abort(403, "cross-site request refused")
    origin = request.headers.get("Origin")
    if origin is not None:
        expected = f"{request.scheme}://{request.host}"
        if origin != expected:
            abort(403, "cross-origin request refused")


def security_headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


class Utf8Json:
    """JSON for Socket.IO frames without \\u escapes: Russian text is a third the size."""

    @staticmethod
    def dumps(obj: Any, **kw: Any) -> str:
        return json.dumps(obj, **{**kw, "ensure_ascii": False})

    @staticmethod
    def loads(s: str | bytes, **kw: Any) -> Any:
        """A document nested too deep for the parser becomes an event no handler has, so
        the catch-all handler answers it with a refusal instead of the socket dying."""
        try:
            return json.loads(s, **kw)
        except RecursionError:
            return [MALFORMED_EVENT]


def card_full(data_dir: Path) -> bool:
    """The data partition has no room left (its space reserve is spent: see
    appliance.runtime.space); the board and the host pages say so."""
    from appliance.runtime import space

    try:
        return space.full(data_dir)
    except OSError:
        return False


def create_app(services: Services) -> tuple[Flask, SocketIO, Hub]:
    app = Flask(__name__)
    problems = services.problems
    app.config.update(
        SECRET_KEY=secret_key(services.data_dir, problems),
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_HTTPONLY=True,
        PERMANENT_SESSION_LIFETIME=auth.SESSION_MAX_AGE_S,
        MAX_CONTENT_LENGTH=UPLOAD_BODY,  # the largest; per route: `webui.bodylimit`
        SEND_FILE_MAX_AGE_DEFAULT=3600,
    )
    app.session_interface = RelativeSessionInterface()
    app.extensions["svoyak"] = services
    app.extensions["svoyak_pin_guard"] = PinGuard()
    generation = Generation(services.data_dir)
    app.extensions["svoyak_generation"] = generation
    app.before_request(safe_origin)
    app.after_request(security_headers)
    # async_handlers=False: a socket's messages are handled one after another on the thread
    # that reads that socket, so a storm from one phone queues behind itself (and is cut
    # by the hub's rate limits) instead of starting a thread per message.
    socketio = SocketIO(app, async_mode="threading", cors_allowed_origins=None,
                        ping_interval=10, ping_timeout=10, logger=False,
                        engineio_logger=False, json=Utf8Json, serializer=JsonPacket,
                        async_handlers=False, max_http_buffer_size=MAX_MESSAGE_BYTES)

    serializer = app.session_interface.get_signing_serializer(app)
    cookie_name = app.config["SESSION_COOKIE_NAME"]

    def is_host(environ: dict[str, Any]) -> bool:
        """A request carrying a live host session (for the admission classes)."""
        raw = _cookie(environ, cookie_name)
        if not raw or serializer is None:
            return False
        try:
            data = serializer.loads(raw)
        except Exception:
            return False
        return isinstance(data, dict) and generation.matches(data.get("host"))

    # Malformed Socket.IO traffic: one log line each, no traceback (`webui.malformed`).
    malformed.refuse_undecodable(socketio.server)
    app.wsgi_app = malformed.PollBodies(app.wsgi_app)  # type: ignore[method-assign]
    # Before any body is read: large only where the host uploads a file.
    app.wsgi_app = BodyLimit(app.wsgi_app, is_host)  # type: ignore[method-assign]
    # Outermost, so refusing a stranger costs no Flask or Socket.IO work at all.
    admission = Admission(app.wsgi_app, public_limit=server.public_limit(), is_host=is_host)
    app.wsgi_app = admission  # type: ignore[method-assign]
    app.extensions["svoyak_admission"] = admission

    def start_game(rules: str, players: list[str], package: str | None,
                   options: dict[str, Any] | None = None) -> Any:
        if services.start_game is None:
            raise ValueError("no game factory")
        return services.start_game(rules, players, package, options or {})

    from webui.pages import is_host as request_is_host

    hardware, library = services.hardware, services.library
    hooks = Hooks(press=services.press,
                  hardware_status=hardware.status if hardware is not None else None,
                  media_type=library.media_type if library is not None else None,
                  is_host=request_is_host, card_full=lambda: card_full(services.data_dir),
                  on_storm=admission.penalize,
                  tourney=(lambda game: caption(services.tournament.state, game))
                  if services.tournament is not None else None)
    hub = Hub(socketio, services.loop, simulate=services.simulate,
              settings=services.settings, start_game=start_game, hooks=hooks)
    app.extensions["svoyak_hub"] = hub
    if services.tournament is not None:  # the tournament's TV pages redraw on each change
        services.tournament.watch(hub.tourney_changed, link_too=True)

    from webui import admin, pages

    app.register_blueprint(pages.bp)
    app.register_blueprint(admin.bp)
    from webui import tournament

    tournament.register(app)
    if services.rooms is not None:
        from webui import rooms_pages

        app.register_blueprint(rooms_pages.bp)
    _register_optional(app, services)
    return app, socketio, hub


def _cookie(environ: dict[str, Any], name: str) -> str | None:
    from werkzeug.http import parse_cookie

    header = environ.get("HTTP_COOKIE")
    if not header:
        return None
    return parse_cookie(header).get(name)


def _register_optional(app: Flask, services: Services) -> None:
    """The captive-portal blueprint belongs to the appliance area; use it when present.
    In simulator mode (a laptop, where host names are real) foreign names are not
    redirected."""
    try:
        captive = importlib.import_module("webui.captive")
    except ImportError:
        return
    settings = services.settings.get()
    app.register_blueprint(captive.blueprint(
        settings.get("portal_address") or "10.42.0.1",
        redirect_foreign=not services.simulate))
