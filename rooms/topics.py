"""The topic tree (docs/rooms.md). Every topic of a tournament lives under ``svoyak/``;
each room has its own subtree, split by direction so the broker's access lists can say
"a room writes only its own ``up`` and reads only its own ``down``":

    svoyak/room/<room>/down/assignment   director → room, retained: the battle to play
    svoyak/room/<room>/down/ack          director → room, retained: what was applied
    svoyak/room/<room>/up/events         room → director: committed battle events
    svoyak/room/<room>/up/result         room → director: a finished battle's result
    svoyak/room/<room>/up/status         room → director, retained (+ will): online/offline
"""

from __future__ import annotations

import re

ROOT = "svoyak"
ASSIGNMENT, ACK = "assignment", "ack"
EVENTS, RESULT, STATUS = "events", "result", "status"
UP_ALL = f"{ROOT}/room/+/up/#"
# A room's name is its broker user name: letters, digits, dash; never a wildcard or '/'.
ROOM_NAME = re.compile(r"^room[0-9]{1,3}$")


def down(room: str, kind: str) -> str:
    return f"{ROOT}/room/{room}/down/{kind}"


def up(room: str, kind: str) -> str:
    return f"{ROOT}/room/{room}/up/{kind}"


def down_all(room: str) -> str:
    return f"{ROOT}/room/{room}/down/#"


def parse(topic: str) -> tuple[str, str, str] | None:
    """(room, "up" | "down", kind) of a topic of ours, else None."""
    parts = topic.split("/")
    if len(parts) != 5 or parts[0] != ROOT or parts[1] != "room" or parts[3] not in (
            "up", "down") or not ROOM_NAME.match(parts[2]):
        return None
    return parts[2], parts[3], parts[4]


def valid_room(room: str) -> bool:
    return bool(ROOM_NAME.match(room))
