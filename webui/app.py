"""The Flask app factory: pages, the host login, QR codes, the simulator's test hook and
the Socket.IO hub. Everything the app needs (game loop, settings, package source) is
passed in as `Services`, so tests build an app over a real loop and a temporary data dir."""

from __future__ import annotations

import importlib
import json
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask
from flask_socketio import SocketIO

from webui.auth import PinGuard
from webui.hub import Hub
from webui.settings import Settings

log = logging.getLogger("svoyak.webui")


@dataclass
class Services:
    """What the composition root hands the web UI."""

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
    extras: dict[str, Any] = field(default_factory=dict)


def secret_key(data_dir: Path) -> bytes:
    """A per-box session key kept in the data dir, so a host stays logged in across a
    server restart (the tablet comes back to the right screen)."""
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_bytes()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


class Utf8Json:
    """JSON for Socket.IO frames without \\u escapes: Russian text is a third the size."""

    @staticmethod
    def dumps(obj: Any, **kw: Any) -> str:
        return json.dumps(obj, **{**kw, "ensure_ascii": False})

    @staticmethod
    def loads(s: str | bytes, **kw: Any) -> Any:
        return json.loads(s, **kw)


def create_app(services: Services) -> tuple[Flask, SocketIO, Hub]:
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=secret_key(services.data_dir),
        SESSION_COOKIE_SAMESITE="Lax",
        PERMANENT_SESSION_LIFETIME=30 * 24 * 3600,
        MAX_CONTENT_LENGTH=1024 * 1024 * 1024,  # package uploads
        SEND_FILE_MAX_AGE_DEFAULT=3600,
    )
    app.extensions["svoyak"] = services
    app.extensions["svoyak_pin_guard"] = PinGuard()
    socketio = SocketIO(app, async_mode="threading", cors_allowed_origins=None,
                        ping_interval=10, ping_timeout=10, logger=False,
                        engineio_logger=False, json=Utf8Json)

    def start_game(rules: str, players: list[str], package: str | None,
                   options: dict[str, Any] | None = None) -> Any:
        if services.start_game is None:
            raise ValueError("no game factory")
        return services.start_game(rules, players, package, options or {})

    hub = Hub(socketio, services.loop, simulate=services.simulate,
              settings=services.settings, start_game=start_game)
    app.extensions["svoyak_hub"] = hub
    if services.library is not None:
        hub.media_type = services.library.media_type

    from webui import admin, pages

    app.register_blueprint(pages.bp)
    app.register_blueprint(admin.bp)
    _register_optional(app, services)
    return app, socketio, hub


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
