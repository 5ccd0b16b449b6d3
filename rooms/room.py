"""The room box's side of the link: its assignment in, its battle's events and result out.

The box's own event log is the outbox. For every battle played for the tournament the
table ``rooms_outbox`` remembers the game and the last sequence number the director
acknowledged; whatever is in the log after that is (re)sent, in order, until the
director's retained acknowledgement covers it. So after a power cut, a broker restart or a
cut cable the box simply sends again from there: nothing is lost, and the director drops
what it already applied. Battles never wait for the link: the game loop commits as always
and this side catches up when it can."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from rooms import messages, topics
from rooms.db import Tables
from rooms.link import Broker, Link

log = logging.getLogger("svoyak.rooms")

RETRY_S = 2.0  # no acknowledgement progress this long: send again from the last ack
PUMP_S = 0.5

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms_outbox (
    game INTEGER PRIMARY KEY, battle TEXT NOT NULL, room TEXT NOT NULL,
    acked INTEGER NOT NULL DEFAULT 0, result_acked INTEGER NOT NULL DEFAULT 0,
    started REAL NOT NULL, assignment TEXT);
CREATE TABLE IF NOT EXISTS rooms_assignment (
    room TEXT PRIMARY KEY, payload BLOB NOT NULL, received REAL NOT NULL)
"""


class RoomBox:
    def __init__(self, *, room: str, box: str, broker: Broker, store: Any, loop: Any,
                 wall: Callable[[], float] = time.time):
        self.room = room
        self.box = box
        self.store = store
        self.loop = loop
        self.wall = wall
        self.db = Tables(store.path, SCHEMA)
        self._kick = threading.Event()
        self._stop = threading.Event()
        self._sent: dict[int, int] = {}
        self._progress: dict[int, float] = {}
        self._result_sent: dict[int, float] = {}
        self.last_ack: float | None = None
        # What the director refused of this box's games (its acknowledgement says why): the
        # host's screens show it, in the director's words.
        self.refused: dict[int, dict[str, Any]] = {}
        # Told the box's link status (`status()`) whenever what its host's banner says
        # changes: the link up or down, what the director refused, what waits to be sent.
        self.on_status: list[Callable[[dict[str, Any]], None]] = []
        self._told: tuple[Any, ...] | None = None
        self.link = Link(broker, subscriptions=[topics.down_all(room)],
                         on_message=self._on_message, on_up=self._on_up,
                         on_down=self._kick.set,
                         will=(topics.up(room, topics.STATUS), self._status_payload(False)))
        self._thread = threading.Thread(target=self._pump_forever, name="rooms-outbox",
                                        daemon=True)
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> RoomBox:
        self._unsubscribe = self.loop.subscribe(self._on_update, inline=False)
        self._thread.start()
        self.link.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._kick.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._thread.join(5)
        self.link.stop(last=(topics.up(self.room, topics.STATUS), self._status_payload(False)))
        self.db.close()

    # -- what the host sees ----------------------------------------------------------------
    def assignment(self) -> dict[str, Any] | None:
        rows = self.db.query("SELECT payload FROM rooms_assignment WHERE room = ?", (self.room,))
        if not rows:
            return None
        obj = messages.decode(rows[0][0], kind="assignment")  # type: ignore[arg-type]
        return obj if obj.get("battle") else None

    def games(self) -> list[dict[str, Any]]:
        return [{"game": g, "battle": b, "acked": a, "result_acked": bool(r)}
                for g, b, a, r in self.db.query(
                    "SELECT game, battle, acked, result_acked FROM rooms_outbox ORDER BY game")]

    def status(self) -> dict[str, Any]:
        pending = 0
        for g in self.games():
            if not g["result_acked"]:
                pending += max(0, self.store.count(g["game"]) - g["acked"])
        a = self.assignment()
        return {"role": "room", "room": self.room, "box": self.box,
                "connected": self.link.connected, "refused": self.link.refused,
                "taken_over": self.link.taken_over,
                "director_refused": [{"game": g, **r} for g, r in sorted(self.refused.items())],
                "since": self.link.last_change, "last_ack": self.last_ack,
                "unacknowledged": pending, "assignment": a, "games": self.games(),
                "battle_game": self.game_of(_id(a)) if a else None}

    def game_of(self, assignment: str) -> int | None:
        """The game this box plays for an assignment (by its id), if it started it."""
        rows = self.db.query("SELECT game FROM rooms_outbox WHERE coalesce(assignment, battle) "
                             "= ? ORDER BY game DESC", (assignment,))
        return int(rows[0][0]) if rows else None  # type: ignore[call-overload]

    # -- the host starts the assigned battle -----------------------------------------------
    def start_battle(self) -> int:
        """Start the assigned battle on this box's loop (its players and themes come from
        the assignment). Starting it twice gives the same game."""
        from appliance.rules.protocol import Refused

        a = self.assignment()
        if a is None:
            raise Refused("Залу пока не назначен бой.", "No battle is assigned to this room yet.",
                          "no_assignment")
        existing = self.game_of(_id(a))
        if existing is not None:
            return existing
        started = self.wall()

        def outbox(conn: Any, game: int) -> None:  # in the game's own transaction
            conn.execute("INSERT INTO rooms_outbox (game, battle, room, started, assignment) "
                         "VALUES (?,?,?,?,?)", (game, a["battle"], self.room, started, _id(a)))

        # the game and its outbox row together: a power cut leaves both or neither, never a
        # battle game the director would not hear of
        game = int(self.loop.new_game("battle", a["setup"], also=outbox).result(10))
        self._kick.set()
        return game

    def reconnect(self) -> None:
        """The host's "connect again" after another box took the room's link."""
        self.link.reconnect()

    def import_assignment(self, obj: dict[str, Any]) -> None:
        """An assignment carried by file (no network): checked, then kept as if received."""
        messages.decode(messages.encode(obj), kind="assignment", sealed_=True)
        if obj.get("room") != self.room:
            raise messages.BadMessage(f"назначение для зала {obj.get('room')}, а это {self.room}",
                                      f"the assignment is for {obj.get('room')}, this is "
                                      f"{self.room}")
        self._keep_assignment(messages.encode(obj))

    def export_result(self, game: int) -> dict[str, Any]:
        """The result of a finished battle as a sealed JSON object, for a USB stick."""
        rows = self.db.query("SELECT battle, assignment FROM rooms_outbox WHERE game = ?",
                             (game,))
        record = self.store.game(game)
        if not rows or record is None or record.summary is None:
            raise KeyError(game)
        events = [e.to_json() for e in self.store.log(game)]
        msg = messages.result_message(self.box, game, str(rows[0][0]),
                                      events[-1]["seq"] if events else 0, record.summary,
                                      self.room, _opt(rows[0][1]))
        return messages.sealed({**msg, "events": events})

    # -- the link --------------------------------------------------------------------------
    def _status_payload(self, online: bool) -> bytes:
        return messages.encode({"v": messages.VERSION, "room": self.room, "box": self.box,
                                "online": online})

    def _on_up(self) -> None:
        self._sent.clear()  # whatever was in flight: send again from the last ack
        self._result_sent.clear()
        self.link.publish(topics.up(self.room, topics.STATUS), self._status_payload(True),
                          retain=True)
        self._kick.set()

    def _on_update(self, update: Any) -> None:
        self._kick.set()

    def _on_message(self, topic: str, payload: bytes, _retained: bool) -> None:
        parsed = topics.parse(topic)
        if parsed is None or parsed[0] != self.room:
            return
        kind = parsed[2]
        if kind == topics.ASSIGNMENT:
            if payload:
                self._keep_assignment(payload)
        elif kind == topics.ACK:
            self._apply_ack(payload)

    def _keep_assignment(self, payload: bytes) -> None:
        try:
            obj = messages.decode(payload, kind="assignment")
        except messages.BadMessage as e:
            log.warning("rooms: assignment ignored: %s", e.en)
            return
        if obj.get("room") != self.room:
            return
        with self.db.write() as c:
            c.execute("INSERT OR REPLACE INTO rooms_assignment (room, payload, received) "
                      "VALUES (?,?,?)", (self.room, payload, self.wall()))

    def _apply_ack(self, payload: bytes) -> None:
        try:
            obj = messages.decode(payload, kind="ack")
        except messages.BadMessage as e:
            log.warning("rooms: ack ignored: %s", e.en)
            return
        mine = (obj.get("acks") or {}).get(self.box) or {}
        results = set((obj.get("results") or {}).get(self.box) or [])
        stale = set((obj.get("stale") or {}).get(self.box) or [])
        if stale:  # the director withdrew these battles (a correction): stop sending them
            log.warning("rooms: the director no longer takes games %s", sorted(stale))
        results |= stale
        refused = (obj.get("refused") or {}).get(self.box) or {}
        ours = {g["game"] for g in self.games()}  # a game forged under our box id is not
        self.refused = {int(g): {k: r.get(k) for k in ("kind", "seq", "code", "ru", "en")}
                        for g, r in refused.items()
                        if isinstance(r, dict) and str(g).isdigit() and int(g) in ours}
        now = time.monotonic()
        with self.db.write() as c:
            for game, seq in mine.items():
                cur = c.execute("UPDATE rooms_outbox SET acked = ? WHERE game = ? AND acked < ?",
                                (int(seq), int(game), int(seq)))
                if cur.rowcount:
                    self._progress[int(game)] = now
            for game in results:
                c.execute("UPDATE rooms_outbox SET result_acked = 1 WHERE game = ?", (int(game),))
        self.last_ack = self.wall()
        self._kick.set()

    def _pump_forever(self) -> None:
        while not self._stop.is_set():
            kicked = self._kick.wait(PUMP_S)
            self._kick.clear()
            if self._stop.is_set():
                break
            try:
                self.pump()
            except Exception:
                log.exception("rooms: sending failed; will try again")
            if kicked and self.on_status:
                self._tell_status()

    def _tell_status(self) -> None:
        """Tell `on_status` the link's status when what the host's banner or the admin
        rooms page shows changed (on the outbox thread, after a kick: an update, an
        acknowledgement, the link up or down), so those screens are pushed to, never poll."""
        try:
            st = self.status()
        except Exception:
            log.exception("rooms: status failed")
            return
        # what the banner and the admin rooms page show
        told = (st["connected"], st["refused"], st["taken_over"], repr(st["director_refused"]),
                st["unacknowledged"], repr(st["assignment"]),
                repr([(g["game"], g["result_acked"]) for g in st["games"]]))
        if told == self._told:
            return
        self._told = told
        for fn in list(self.on_status):
            try:
                fn(st)
            except Exception:
                log.exception("rooms: status listener %r failed", fn)

    def pump(self) -> None:
        """Send what the director has not acknowledged (runs on the outbox thread)."""
        if not self.link.connected:
            return
        # Only what is on disk leaves the box: a deadline's decision is committed without an
        # fsync (`Store.sync`), and the director keeps whatever it was sent by its seq.
        self.store.sync()
        now = time.monotonic()
        rows = self.db.query("SELECT game, battle, acked, assignment FROM rooms_outbox "
                             "WHERE result_acked = 0 ORDER BY game")
        for game_, battle_, acked_, assignment_ in rows:
            game, battle, acked = int(game_), str(battle_), int(acked_)  # type: ignore[call-overload]
            assignment = _opt(assignment_)
            sent = self._sent.get(game, acked)
            if sent > acked and now - self._progress.get(game, now) > RETRY_S:
                sent = acked  # acknowledgements stopped coming: send again
                self._progress[game] = now
            sent = max(sent, acked)
            events = self.store.log(game)
            todo = [e.to_json() for e in events if e.seq > sent]
            for i in range(0, len(todo), messages.MAX_EVENTS_PER_MESSAGE):
                chunk = todo[i:i + messages.MAX_EVENTS_PER_MESSAGE]
                msg = messages.events_message(self.box, game, battle, chunk, assignment)
                if not self.link.publish(topics.up(self.room, topics.EVENTS),
                                         messages.encode(msg)):
                    return
                sent = chunk[-1]["seq"]
                self._progress.setdefault(game, now)
            self._sent[game] = sent
            record = self.store.game(game)
            if record is not None and record.status == "finished" and record.summary is not None:
                last = events[-1].seq if events else 0
                if now - self._result_sent.get(game, -1e9) > RETRY_S:
                    msg = messages.result_message(self.box, game, battle, last, record.summary,
                                                  self.room, assignment)
                    if self.link.publish(topics.up(self.room, topics.RESULT),
                                         messages.encode(msg)):
                        self._result_sent[game] = now


def _id(assignment: dict[str, Any]) -> str:
    """An assignment's id (older directors sent none: the battle then names it)."""
    return str(assignment.get("id") or assignment["battle"])


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
