"""The floors of the fan-out bench: a bare Flask-SocketIO server that only broadcasts.

Same deployment as `svoyak serve` (`webui.server.Server`: gunicorn, one gthread worker) and
the same Socket.IO options, packet class and JSON as the web UI, but no game: sockets join
the rooms the hub uses ("host", "board", "player:N"), and each room is sent the payload it was
given (``POST /payloads {room: payload}``, the frames the real server sent for one question)
with the question number set to the one asked for. Two ways to ask:

- ``POST /fire {"q": n}``: broadcast at once, on the request's thread (the bare floor);
- ``POST /api/sim/press {"player": p, "q": n}``, the real server's press request, path and
  body (the floor's part of it: a request to parse, a JSON answer): the request is stamped
  on arrival, the way the box stamps a press, and a waiter thread sleeping on a
  `queue.SimpleQueue` with a timeout to a deadline (the wait the game loop does) broadcasts
  when the settle window (``--settle-ms``) after that stamp has passed (the fair floor). The
  settle window is a rule of the game (a press must wait that long for an earlier one),
  not a cost of the box's code; what the real server takes beyond this floor is the box's:
  the decision, the commits, the hand-off to the notifier thread, the views;
- the same with ``"commit": true`` (the durable floor): the waiter also commits, the way the
  box's log does (a row in SQLite, WAL, in ``--db``, which the bench puts on the real
  server's file system), the press when it takes it (``synchronous=FULL``: an fsync), before
  the deadline, and the answerer right after broadcasting it (``synchronous=NORMAL``: a
  deadline's decision waits for no fsync, `Store.append`, and the box tells the screens
  before that commit, `GameLoop.subscribe` with ``ahead``): the press's commit is the disk's
  part of the real path, the answerer's shares the cores with the broadcast.

    python bench/bare_broadcast.py --port 5055 [--settle-ms 10] [--db floor.db]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import queue
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flask import Flask, jsonify, request  # noqa: E402
from flask_socketio import SocketIO, join_room  # noqa: E402

from webui.app import Utf8Json  # noqa: E402
from webui.hub import JsonPacket  # noqa: E402
from webui.server import Server  # noqa: E402


class Log:
    """An append-only table committed one row at a time, as the box's event log is."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, body TEXT)")

    def commit(self, body: str, durable: bool = True) -> None:
        """`durable` False: without an fsync of its own, as the box commits a deadline's
        decision (`Store.append`)."""
        if not durable:
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("INSERT INTO log (body) VALUES (?)", (body,))
        self.db.execute("COMMIT")
        if not durable:
            self.db.execute("PRAGMA synchronous=FULL")


# About the size of a press's or an answerer's events as the box logs them.
ROW = '{"type": "pressed", "player": 0, "t_ns": 1234567890123, "by": "sim"}' * 3


def create(settle_ns: int, log_path: Path | None) -> Flask:
    app = Flask(__name__)
    sio = SocketIO(app, async_mode="threading", cors_allowed_origins=None, ping_interval=10,
                   ping_timeout=10, logger=False, engineio_logger=False, json=Utf8Json,
                   serializer=JsonPacket)
    payloads: dict[str, dict[str, Any]] = {}
    due: queue.SimpleQueue[tuple[int, int, bool]] = queue.SimpleQueue()
    log = Log(log_path) if log_path is not None else None

    def send(q: int) -> None:
        for room, payload in payloads.items():
            data = copy.copy(payload)
            data["view"] = {**payload["view"], "question_index": q}
            sio.emit("view", data, to=room)

    def waiter() -> None:
        """The settle window's wait, as the game loop does it: asleep on its inbox with a
        timeout to the deadline, then the broadcast on this same thread."""
        inbox: queue.SimpleQueue[None] = queue.SimpleQueue()
        while True:
            deadline, q, durable = due.get()
            if durable and log is not None:
                log.commit(ROW)  # the press
            with contextlib.suppress(queue.Empty):
                inbox.get(timeout=max(0.0, (deadline - time.monotonic_ns()) / 1e9))
            send(q)
            if durable and log is not None:  # the answerer, a deadline's decision: the box
                log.commit(ROW, durable=False)  # tells the screens before this commit

    threading.Thread(target=waiter, name="settle-waiter", daemon=True).start()

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
        send(int(request.get_json()["q"]))
        return "", 204

    @app.post("/api/sim/press")
    def press() -> Any:
        t_ns = time.monotonic_ns()
        data = request.get_json()
        int(data["player"])
        due.put((t_ns + settle_ns, int(data["q"]), bool(data.get("commit"))))
        return jsonify({"ok": True, "t_ns": t_ns})

    @app.get("/board")
    def alive() -> str:
        return "ok"

    return app


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--settle-ms", type=float, default=10.0,
                    help="the settle window the fair floor waits after a press request")
    ap.add_argument("--db", type=Path, default=None,
                    help="the durable floor's log (SQLite); without it, it does not commit")
    args = ap.parse_args()
    settle_ns = round(args.settle_ms * 1_000_000)
    Server(lambda: create(settle_ns, args.db), "127.0.0.1", args.port).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
