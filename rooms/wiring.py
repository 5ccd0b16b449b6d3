"""Attach the rooms link to a running box (called by the composition root, `svoyak
serve`): a director or a room box when ``DATA/rooms.json`` says so, nothing otherwise.
The composition root hands the `Rooms` object to the web UI (`Services.rooms`), whose rooms
pages call it: the link, the room/director choice, the join texts; and it pushes each room's
live battle to the director's TV."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from appliance.runtime.tournament import TournamentShell
from rooms import config

log = logging.getLogger("svoyak.rooms")


def start_link(data: Path, store: Any, loop: Any, tournament: TournamentShell) -> Any:
    """The started `Director` (over the box's tournament shell) or `RoomBox`, or None. A
    broken rooms.json is logged and the box runs on as an ordinary box: a room must never
    stop a battle."""
    try:
        obj = config.load(data)
    except config.ConfigError as e:
        log.error("rooms: %s", e.en)
        return None
    if obj is None:
        return None
    broker = config.broker_of(obj)
    if obj["role"] == "director":
        from rooms.director import Director

        director = Director(broker=broker, tournament=tournament,
                            package=load_package(data, obj.get("package")))
        for room in obj.get("rooms", []):
            director.add_room(room)
        return director.start()
    from rooms.room import RoomBox

    return RoomBox(room=obj["room"], box=obj["box"], broker=broker, store=store,
                   loop=loop).start()


def load_package(data: Path, ref: Any) -> Any:
    """The package the director's battles take their themes from: a JSON file in the
    project's form (a path), a package of the box's library (its number), or the built-in
    sport demo."""
    from appliance.packages import jsonform

    if isinstance(ref, str) and ref.endswith(".json"):
        import json

        return jsonform.from_dict(json.loads(Path(ref).read_text("utf-8")))
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
        from appliance.packages.library import Library

        return Library(data).get(int(ref))
    return jsonform.demo("demo-sport")


def public(status: dict[str, Any]) -> dict[str, Any]:
    """A link's status as screens may see it: a room's assignment keeps only who plays
    which battle (its setup holds the questions and answers)."""
    a = status.get("assignment")
    if status.get("role") == "room" and a:
        return {**status, "assignment": {k: a.get(k) for k in ("battle", "stage", "players",
                                                               "room")}}
    return status


class Rooms:
    """The link of one box, replaceable when the host changes the box's role in admin."""

    def __init__(self, data: Path, store: Any, loop: Any, tournament: TournamentShell):
        self.data, self.store, self.loop = data, store, loop
        self.tournament = tournament
        self.socketio: Any = None
        self._lock = threading.Lock()
        self._seq = 0
        self.link = start_link(data, store, loop, tournament)
        # Join texts of the rooms added since the box started (they hold the join code:
        # shown to the host only, as text and QR, never stored in plain text).
        self.joins: dict[str, str] = {}
        self._publish()

    def _publish(self) -> None:
        if self.link is None:
            return
        if hasattr(self.link, "listeners"):
            self.link.listeners.append(self._push)
        if hasattr(self.link, "on_status"):
            self.link.on_status.append(self._push_status)

    def status(self) -> dict[str, Any]:
        """What the rooms screens show of the link; no secrets (no credentials, no answers:
        a room's assignment without its setup)."""
        if self.link is None:
            return {"role": None}
        return public(self.link.status())

    def _push_status(self, status: dict[str, Any]) -> None:
        """The link's status, as it changes: a room box's to its host tablets (the banner)
        and its admin rooms page, a director's to its admin rooms page."""
        if self.socketio is None:
            return
        shown = public(status)
        if status.get("role") == "room":
            self.socketio.emit("rooms_link", shown, to="host")
        self.socketio.emit("rooms_link", shown, to="admin")

    def screens(self, socketio: Any) -> None:
        """Push every room's live battle to the boards (the director's TV) at once."""
        self.socketio = socketio

    def _push(self, room: str, live: dict[str, Any]) -> None:
        if self.socketio is None:
            return
        with self._lock:
            self._seq += 1
            seq = self._seq
        payload: dict[str, Any] = {"room": room, "live": live, "seq": seq}
        if live.get("finished"):  # a result moved the bracket: the TV redraws it
            payload["bracket"] = self.link.t.view()
        self.socketio.emit("rooms_live", payload, to="board")

    def setup(self, form: dict[str, Any]) -> dict[str, Any]:
        """The admin's room/director choice; the new link starts at once."""
        action = form.get("action")
        out: dict[str, Any]
        if action == "director":
            passwd = Path(form.get("passwd") or self.data / "broker" / "passwd")
            config.make_director(self.data, str(form["host"]), int(form.get("port") or 1883),
                                 passwd)
            out = {"role": "director"}
        elif action == "join":
            host, port, room, code = (str(form.get("host") or ""), int(form.get("port") or 1883),
                                      str(form.get("room") or ""), str(form.get("code") or ""))
            if form.get("qr"):
                host, port, room, code = config.parse_qr(str(form["qr"]))
            config.join(self.data, host, port, room, code)
            out = {"role": "room", "room": room}
        elif action == "add_room":
            director = self.link if hasattr(self.link, "add_room") else None
            known = director.rooms() if director is not None else []
            out = config.add_room(self.data, form.get("room") or None)
            self.joins[out["room"]] = out["qr"]
            if director is not None and out["room"] in known:
                # A new code for a room there was (a lost tablet): the next box that
                # writes with it is the room's, at once, without a restart.
                director.rejoin(out["room"])
            elif director is not None:
                director.add_room(out["room"])
            return out
        else:
            raise KeyError(f"unknown action {action!r}")
        self.restart()
        return out

    def restart(self) -> None:
        if self.link is not None:
            self.link.close()
        self.link = start_link(self.data, self.store, self.loop, self.tournament)
        self._publish()

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
            self.link = None
