"""The floor of the fan-out bench: a bare Flask-SocketIO server that only broadcasts.

Same deployment as `svoyak serve` (`webui.server.Server`: gunicorn, one gthread worker) and
the same Socket.IO options and JSON encoder as the web UI, but no game: sockets join the
rooms the hub uses ("host", "board", "player:N") and ``POST /fire {"q": n}`` sends each room
the payload it was given (``POST /payloads {room: payload}``, the frames the real server sent
for one question), with the question number set to ``n``. What the real server takes beyond
this is the game: the press path, the settle window, the commit and the views.

    python bench/bare_broadcast.py --port 5055
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flask import Flask, request  # noqa: E402
from flask_socketio import SocketIO, join_room  # noqa: E402

from webui.app import Utf8Json  # noqa: E402
from webui.server import Server  # noqa: E402


def create() -> Flask:
    app = Flask(__name__)
    sio = SocketIO(app, async_mode="threading", cors_allowed_origins=None, ping_interval=10,
                   ping_timeout=10, logger=False, engineio_logger=False, json=Utf8Json)
    payloads: dict[str, dict[str, Any]] = {}

    @sio.on("connect")
    def on_connect(auth: Any = None) -> bool:
        auth = auth if isinstance(auth, dict) else {}
        role = auth.get("role", "board")
        join_room(f"player:{auth.get('seat')}" if role == "player" else role)
        return True

    @app.post("/payloads")
    def set_payloads() -> tuple[str, int]:
        payloads.clear()
        payloads.update(request.get_json())
        return "", 204

    @app.post("/fire")
    def fire() -> tuple[str, int]:
        q = int(request.get_json()["q"])
        for room, payload in payloads.items():
            data = copy.copy(payload)
            data["view"] = {**payload["view"], "question_index": q}
            sio.emit("view", data, to=room)
        return "", 204

    @app.get("/board")
    def alive() -> str:
        return "ok"

    return app


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    Server(create, "127.0.0.1", args.port).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
