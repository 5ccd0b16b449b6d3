"""Pages of the rooms link (docs/rooms.md): the rooms page in admin (director: every
room's box, its link, last message, lag and battle in play; room: the assigned battle and
the link), the rooms board for the director's TV, and the file carry for a venue without
network. The link itself is `services.rooms.link` (a `rooms.director.Director` or a
`rooms.room.RoomBox`, wired by the composition root); this module only calls it."""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, abort, jsonify, request

from appliance.rules.protocol import Refused
from webui import qr
from webui.pages import is_host, render, services

bp = Blueprint("rooms", __name__)


def link() -> Any:
    rooms = services().rooms
    return None if rooms is None else rooms.link


def role() -> str | None:
    lk = link()
    return None if lk is None else str(lk.status().get("role"))


def _host() -> None:
    if not is_host():
        abort(403)


def _refused(ru: str, en: str, code: str, status: int = 400) -> tuple[Response, int]:
    return jsonify({"ok": False, "refused": {"code": code, "ru": ru, "en": en}}), status


@bp.app_context_processor
def _rooms_context() -> dict[str, Any]:
    """Pages of other areas (the host tablet, the tournament's bracket TV) include the
    rooms link's script only on a box that is in a rooms tournament."""
    return {"rooms_live": link() is not None}


@bp.get("/rooms/status.json")
def status() -> Any:
    """What the rooms screens show; no secrets (no credentials, no answers)."""
    rooms = services().rooms
    return jsonify({"role": None} if rooms is None else rooms.status())


@bp.get("/admin/rooms")
def page() -> Any:
    if not is_host():
        from flask import redirect, url_for

        return redirect(url_for("pages.login", next=request.path))
    return render("rooms.html", role=role())


@bp.get("/rooms/board")
def board() -> Any:
    return render("rooms_board.html")


@bp.get("/rooms/director.svg")
def director_qr() -> Any:
    """The director's broker address (HOST:PORT) as a QR code, on its TV and rooms page,
    for room boxes to find it by."""
    lk = link()
    broker = lk.status().get("broker") if lk is not None else None
    if not broker:
        abort(404)
    return Response(qr.svg(f"{broker['host']}:{broker['port']}"), mimetype="image/svg+xml")


@bp.get("/admin/rooms/join/<room>.svg")
def join_qr(room: str) -> Any:
    """A new room's join text (address, room, code) as a QR code: host only."""
    _host()
    rooms = services().rooms
    text = None if rooms is None else rooms.joins.get(room)
    if text is None:
        abort(404)
    return Response(qr.svg(text), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@bp.post("/rooms/start")
def start() -> Any:
    """The room's host starts the battle the director assigned to this room."""
    _host()
    lk = link()
    if lk is None or role() != "room":
        return _refused("Этот бокс — не зал турнира.", "This box is not a tournament room.",
                        "not_a_room")
    try:
        return jsonify({"ok": True, "game": lk.start_battle()})
    except Refused as r:
        return jsonify({"ok": False, "refused": r.to_json()}), 409


@bp.post("/rooms/reconnect")
def reconnect() -> Any:
    """The room's host connects the box to the broker again after another box with the
    room's code took its link (the link stays off rather than fight it)."""
    _host()
    lk = link()
    if lk is None or role() != "room":
        return _refused("Этот бокс — не зал турнира.", "This box is not a tournament room.",
                        "not_a_room")
    lk.reconnect()
    return jsonify({"ok": True})


@bp.get("/admin/rooms/assignment/<room>.json")
def export_assignment(room: str) -> Any:
    """A room's assignment as a sealed file (director), for a room with no network."""
    _host()
    lk = link()
    if lk is None or role() != "director" or room not in lk.rooms():
        abort(404)
    body = json.dumps(lk.assignment(room), ensure_ascii=False, indent=1)
    return Response(body, mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="assignment-{room}.json"'})


@bp.get("/admin/rooms/result/<int:game>.json")
def export_result(game: int) -> Any:
    """A finished battle's result with its events, sealed (room box), for a USB stick."""
    _host()
    lk = link()
    if lk is None or role() != "room":
        abort(404)
    try:
        obj = lk.export_result(game)
    except KeyError:
        abort(404)
    return Response(json.dumps(obj, ensure_ascii=False), mimetype="application/json",
                    headers={"Content-Disposition":
                             f'attachment; filename="result-{obj["battle"]}.json"'})


@bp.post("/admin/rooms/import")
def import_file() -> Any:
    """A file from a USB stick: a result on the director, an assignment on a room box."""
    _host()
    lk = link()
    if lk is None:
        return _refused("Этот бокс не в турнире.", "This box is not in a tournament.",
                        "no_rooms")
    upload = request.files.get("file")
    try:
        obj = json.loads((upload.read() if upload else request.get_data()).decode("utf-8"))
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as e:
        return _refused(f"Файл не читается: {e}", f"The file cannot be read: {e}", "bad_file")
    try:
        if role() == "director":
            return jsonify({"ok": True, "applied": lk.import_result(obj)})
        lk.import_assignment(obj)
        return jsonify({"ok": True})
    except Refused as r:
        return jsonify({"ok": False, "refused": r.to_json()}), 409
    except ValueError as e:  # the link's BadMessage: a bad checksum, a foreign room
        return _refused(getattr(e, "ru", str(e)), getattr(e, "en", str(e)), "bad_file")


@bp.post("/admin/rooms/setup")
def setup() -> Any:
    """The room/director choice: make this box the director, add a room (its join code),
    or join a director as a room. The composition root does it (`rooms_setup`)."""
    _host()
    fn = services().rooms.setup if services().rooms is not None else None
    if fn is None:
        abort(404)
    form = request.get_json(silent=True) or request.form.to_dict()
    try:
        return jsonify({"ok": True, **fn(dict(form))})
    except (ValueError, KeyError) as e:
        return _refused(getattr(e, "ru", str(e)), getattr(e, "en", str(e)), "bad_setup")
