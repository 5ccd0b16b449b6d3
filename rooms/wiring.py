"""Attach the rooms link to a running box (called by the composition root, `svoyak
serve`): a director or a room box when ``DATA/rooms.json`` says so, nothing otherwise."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from rooms import config

log = logging.getLogger("svoyak.rooms")


def attach(data: Path, store: Any, loop: Any) -> Any:
    """The started `Director` or `RoomBox`, or None. A broken rooms.json is logged and the
    box runs on as an ordinary box: a room must never stop a battle."""
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

        director = Director(broker=broker, store_path=store.path)
        for room in obj.get("rooms", []):
            director.add_room(room)
        return director.start()
    from rooms.room import RoomBox

    return RoomBox(room=obj["room"], box=obj["box"], broker=broker, store=store,
                   loop=loop).start()
