"""The director's side: every room's events and results in, assignments out.

The director's SQLite file is the authority. A room's events are applied exactly once:
``rooms_applied`` has the primary key (box, game, seq) and takes only the next sequence
number of a game, in the same transaction that updates nothing else, so a duplicate
(a republish after a cut, a broker redelivery) or a run with a gap changes nothing; the
acknowledgement, retained on the room's ``down/ack`` topic, tells the room where to go on
from. A result is applied once per (box, game): it goes into the tournament's log as one
event, which advances the bracket, and the next ready battle is assigned to the room that
is free. The tournament's events are in ``rooms_tournament``; folding them again
(`Director.replay`) gives the same bracket.

Each room's battle is also folded here with the battle engine, from the very events the
room committed, so the director's screens show the live score, theme, value and who is
answering without any second source of truth."""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from appliance.rules import registry
from appliance.rules.protocol import Event, Refused
from rooms import messages, topics
from rooms.db import Tables
from rooms.link import Broker, Link
from rooms.tournaments import Bracket, StandInBracket

log = logging.getLogger("svoyak.rooms")

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms_applied (
    box TEXT NOT NULL, game INTEGER NOT NULL, seq INTEGER NOT NULL, room TEXT NOT NULL,
    battle TEXT NOT NULL, type TEXT NOT NULL, t_ns INTEGER NOT NULL, payload TEXT NOT NULL,
    wall REAL NOT NULL, received REAL NOT NULL, PRIMARY KEY (box, game, seq));
CREATE TABLE IF NOT EXISTS rooms_results (
    box TEXT NOT NULL, game INTEGER NOT NULL, room TEXT NOT NULL, battle TEXT NOT NULL,
    sha256 TEXT NOT NULL, payload TEXT NOT NULL, received REAL NOT NULL,
    PRIMARY KEY (box, game));
CREATE TABLE IF NOT EXISTS rooms_rooms (
    room TEXT PRIMARY KEY, joined REAL NOT NULL)
"""

LiveListener = Callable[[str, dict[str, Any]], None]


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Director:
    def __init__(self, *, broker: Broker | None, store_path: Any,
                 tournament: Callable[[Tables], Bracket] | None = None,
                 wall: Callable[[], float] = time.time):
        self.wall = wall
        self.broker = broker
        self.db = Tables(store_path, SCHEMA)
        self._lock = threading.RLock()
        self.t: Bracket = (tournament or (lambda db: StandInBracket(db, wall)))(self.db)
        self.rules = registry.get("battle")
        self._battles: dict[tuple[str, int], Any] = {}  # (box, game) -> battle engine state
        self.live: dict[str, dict[str, Any]] = {}  # room -> what the screens show
        self.listeners: list[LiveListener] = []
        self.duplicates = 0
        self.refusals: list[dict[str, Any]] = []
        # What was applied, per room: the acknowledgements, kept in memory (loaded once).
        self._acks: dict[str, dict[str, dict[str, int]]] = {}
        self._results: dict[str, dict[str, list[int]]] = {}
        for room, box, game, seq in self.db.query(
                "SELECT room, box, game, max(seq) FROM rooms_applied GROUP BY box, game"):
            self._acks.setdefault(str(room), {}).setdefault(str(box), {})[str(game)] = int(
                seq)  # type: ignore[call-overload]
        for room, box, game in self.db.query("SELECT room, box, game FROM rooms_results"):
            self._results.setdefault(str(room), {}).setdefault(str(box), []).append(
                int(game))  # type: ignore[call-overload]
        # Games of a withdrawn assignment (a battle replayed by the director): acknowledged
        # as stale, so their rooms stop sending them.
        self._stale: dict[str, dict[str, set[int]]] = {}
        self._reassign = threading.Event()
        self._inbox: queue.Queue[tuple[str, bytes] | None] = queue.Queue()
        self._ingester = threading.Thread(target=self._ingest_forever, name="rooms-director",
                                          daemon=True)
        self._unwatch: Callable[[], None] = _nothing
        self.link = None
        if broker is not None:
            self.link = Link(broker, subscriptions=[topics.UP_ALL], on_message=self._on_message,
                             on_up=self._on_up, persistent=True)

    def start(self) -> Director:
        self._unwatch = self.t.watch(self._tournament_changed)
        self._ingester.start()
        if self.link is not None:
            self.link.start()
        return self

    def close(self) -> None:
        self._unwatch()
        self._unwatch = _nothing
        if self.link is not None:
            self.link.stop()
        if self._ingester.is_alive():
            self._inbox.put(None)
            self._ingester.join(10)
        self.db.close()

    # -- the tournament ----------------------------------------------------------------
    def replay(self) -> dict[str, Any]:
        """The bracket folded again from the director's log alone."""
        return self.t.replay_view()

    def draw(self, entries: Sequence[str], seed: int) -> None:
        """The stand-in bracket's draw (the tournament engine draws on its own)."""
        draw = getattr(self.t, "draw", None)
        if draw is None:
            raise Refused("Жеребьёвку проводит турнир.", "The tournament makes its own draw.",
                          "not_standin")
        with self._lock:
            draw(entries, seed)
        self.assign_free_rooms()

    def add_room(self, room: str) -> None:
        if not topics.valid_room(room):
            raise Refused("Неверное имя зала.", "Bad room name.", "bad_room")
        with self.db.write() as c:
            c.execute("INSERT OR IGNORE INTO rooms_rooms (room, joined) VALUES (?, ?)",
                      (room, self.wall()))
        self.assign_free_rooms()

    def rooms(self) -> list[str]:
        return [str(r) for (r,) in self.db.query("SELECT room FROM rooms_rooms ORDER BY room")]

    # -- assignments -----------------------------------------------------------------------
    def in_play(self, room: str) -> str | None:
        return next((b for b, r in self.t.in_play().items() if r == room), None)

    def assign_free_rooms(self) -> None:
        """Give the next ready battles to the rooms that have none, in playing order."""
        with self._lock:
            busy = set(self.t.in_play().values())
            for room in self.rooms():
                if room in busy:
                    continue
                ready = self.t.ready()
                if not ready:
                    break
                try:
                    self.t.assign(ready[0], room)
                except Refused as r:  # e.g. the package ran out of unplayed themes
                    self._refused(room, "assignment", r)
                    break
            self.publish_assignments()

    def assignment(self, room: str) -> dict[str, Any]:
        battle = self.in_play(room)
        body: dict[str, Any] = {"v": messages.VERSION, "room": room, "battle": battle}
        if battle is not None:
            body["id"] = self.t.assignment_id(battle)
            stage, players = self.t.players(battle)
            body.update({"stage": stage, "players": players, "setup": self.t.setup(battle)})
        return messages.sealed(body)

    def publish_assignments(self) -> None:
        if self.link is None:
            return
        for room in self.rooms():
            self.link.publish(topics.down(room, topics.ASSIGNMENT),
                              messages.encode(self.assignment(room)), retain=True)

    def ack(self, room: str) -> dict[str, Any]:
        with self._lock:
            acks = {box: dict(games) for box, games in self._acks.get(room, {}).items()}
            results = {box: list(g) for box, g in self._results.get(room, {}).items()}
            stale = {box: sorted(g) for box, g in self._stale.get(room, {}).items()}
        out = {"v": messages.VERSION, "room": room, "acks": acks, "results": results}
        if stale:
            out["stale"] = stale
        return out

    def _tournament_changed(self) -> None:
        """The director corrected the tournament by hand: give the rooms their battles
        again (on the ingest thread, never on the game loop's)."""
        if not self._reassign.is_set():
            self._reassign.set()
            self._inbox.put(("", b""))

    def _is_stale(self, room: str, msg: Mapping[str, Any]) -> bool:
        """A message of a game whose assignment the director withdrew."""
        aid = msg.get("assignment")
        if aid is None or aid == self.t.assignment_id(msg["battle"]):
            return False
        with self._lock:
            self._stale.setdefault(room, {}).setdefault(msg["box"], set()).add(msg["game"])
        return True

    def _publish_ack(self, room: str) -> None:
        if self.link is not None:
            self.link.publish(topics.down(room, topics.ACK), messages.encode(self.ack(room)),
                              retain=True)

    def _on_up(self) -> None:
        # The broker may have lost its retained messages (killed before its autosave):
        # the director's log says what they are, so publish them again.
        self.publish_assignments()
        for room in self.rooms():
            self._publish_ack(room)

    # -- a room's messages -----------------------------------------------------------------
    def _on_message(self, topic: str, payload: bytes, _retained: bool) -> None:
        self._inbox.put((topic, payload))  # paho's thread only queues: it never waits on disk

    def _ingest_forever(self) -> None:
        """Apply what arrived, a batch at a time: every events message waiting is applied in
        one transaction (one fsync for the lot), so 27 busy rooms do not queue behind the
        disk one message at a time."""
        while (item := self._inbox.get()) is not None:
            batch = [item]
            while len(batch) < 1000:
                try:
                    nxt = self._inbox.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._inbox.put(None)
                    break
                batch.append(nxt)
            try:
                if self._reassign.is_set():
                    self._reassign.clear()
                    self.assign_free_rooms()
                self._ingest(batch)
            except Exception:
                log.exception("rooms: a batch of %d messages failed", len(batch))

    def _ingest(self, batch: Sequence[tuple[str, bytes]]) -> None:
        runs: list[tuple[str, Mapping[str, Any]]] = []
        for topic, payload in batch:
            parsed = topics.parse(topic)
            if parsed is None or parsed[1] != "up":
                continue
            room, _, kind = parsed
            try:
                if kind == topics.EVENTS:
                    runs.append((room, messages.decode(payload, kind="events")))
                    continue
                if runs:  # keep the order: events before the result that follows them
                    self.apply_runs(runs)
                    runs = []
                if kind == topics.RESULT:
                    self.apply_result(room, messages.decode(payload, kind="result",
                                                            sealed_=True))
                elif kind == topics.STATUS:
                    obj = messages.decode(payload, kind="status")
                    with self._lock:
                        live = self.live.setdefault(room, {"room": room})
                        live.update(online=bool(obj.get("online")), box=obj.get("box"),
                                    last_message=self.wall())
                    self._tell(room)
            except (messages.BadMessage, Refused) as e:
                self._refused(room, kind, e)
        if runs:
            self.apply_runs(runs)

    def _refused(self, room: str, kind: str, e: Exception) -> None:
        en = getattr(e, "en", None) or getattr(e, "message_en", str(e))
        ru = getattr(e, "ru", None) or getattr(e, "message_ru", "")
        log.warning("rooms: %s from %s refused: %s", kind, room, en)
        with self._lock:
            self.refusals.append({"room": room, "kind": kind, "ru": ru, "en": en,
                                  "at": self.wall()})
            del self.refusals[:-50]

    def apply_events(self, room: str, msg: Mapping[str, Any]) -> int:
        """Apply the next events of a room's game; returns how many were new."""
        return self.apply_runs([(room, msg)], strict=True)

    def apply_runs(self, runs: Sequence[tuple[str, Mapping[str, Any]]],
                   strict: bool = False) -> int:
        """Apply runs of events (several rooms, several games) in one transaction. A run
        that is malformed or not this room's battle is refused alone (`strict`: raised)."""
        received = self.wall()
        new: dict[tuple[str, str, int, str], list[Mapping[str, Any]]] = {}
        with self._lock:
            last: dict[tuple[str, int], int] = {}
            rows = []
            for room, msg in runs:
                try:
                    messages.require(msg, "events", box=str, game=int, battle=str,
                                     events=list)
                    box, game, battle = msg["box"], msg["game"], msg["battle"]
                    if self.t.room_of(battle) != room:
                        raise Refused("Бой не назначен этому залу.",
                                      "This battle is not assigned to this room.",
                                      "not_assigned")
                    if self._is_stale(room, msg):
                        continue
                except (messages.BadMessage, Refused) as e:
                    if strict:
                        raise
                    self._refused(room, topics.EVENTS, e)
                    continue
                key = (box, game)
                seq_now = last.get(key, self._acks.get(room, {}).get(box, {}).get(str(game), 0))
                for ev in msg["events"]:
                    seq = ev.get("seq") if isinstance(ev, dict) else None
                    if not isinstance(seq, int) or seq <= seq_now:
                        self.duplicates += 1
                        continue
                    if seq != seq_now + 1:
                        break  # a gap: the acknowledgement asks for the rest again
                    rows.append((box, game, seq, room, battle, str(ev["type"]),
                                 int(ev["t_ns"]), _dumps(ev.get("payload") or {}),
                                 _wall_of(ev, received), received))
                    seq_now = seq
                    new.setdefault((room, box, game, battle), []).append(ev)
                last[key] = seq_now
            if rows:
                with self.db.write() as c:
                    c.executemany(
                        "INSERT INTO rooms_applied (box, game, seq, room, battle, type, t_ns, "
                        "payload, wall, received) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            for (room, box, game, battle), evs in new.items():  # committed: now remember
                self._acks.setdefault(room, {}).setdefault(box, {})[str(game)] = int(
                    evs[-1]["seq"])
                self._fold_live(room, box, game, battle, evs, received)
        for room in dict.fromkeys(r for r, _ in runs):
            self._publish_ack(room)
        for room in dict.fromkeys(k[0] for k in new):
            self._tell(room)
        return len(rows)

    def apply_result(self, room: str, msg: Mapping[str, Any]) -> bool:
        """Apply a room's result once; True when it advanced the bracket now."""
        messages.require(msg, "result", box=str, game=int, battle=str, summary=dict,
                         last_seq=int)
        box, game, battle = msg["box"], msg["game"], msg["battle"]
        if "events" in msg:  # carried by file: its events come with it
            self.apply_events(room, {"box": box, "game": game, "battle": battle,
                                     "events": msg["events"]})
        with self._lock:
            if game in self._results.get(room, {}).get(box, []):
                self.duplicates += 1
                self._publish_ack(room)
                return False
            have = self._acks.get(room, {}).get(box, {}).get(str(game), 0)
            if have < msg["last_seq"]:
                return False  # its events first; the room sends the result again
            if self.t.room_of(battle) != room:
                raise Refused("Бой не назначен этому залу.",
                              "This battle is not assigned to this room.", "not_assigned")
            if self._is_stale(room, msg):
                self._refused(room, topics.RESULT, Refused(
                    "Итог боя, который директор отменил, не принят.",
                    "The result of a battle the director withdrew was not applied.", "stale"))
                self._publish_ack(room)
                return False
            # The tournament's log first (it ignores a battle already done), then ours.
            self.t.record(battle, msg["summary"], {"box": box, "game": game, "room": room})
            with self.db.write() as c:
                c.execute("INSERT INTO rooms_results (box, game, room, battle, sha256, payload, "
                          "received) VALUES (?,?,?,?,?,?,?)",
                          (box, game, room, battle, msg["sha256"], _dumps(msg), self.wall()))
            self._results.setdefault(room, {}).setdefault(box, []).append(game)
            self._battles.pop((box, game), None)  # played: its live state is not needed
            live = self.live.setdefault(room, {"room": room})
            live["finished"] = battle
        self._publish_ack(room)
        self.assign_free_rooms()
        self._tell(room)
        return True

    # -- live view -------------------------------------------------------------------------
    def _fold_live(self, room: str, box: str, game: int, battle: str,
                   new: Sequence[Mapping[str, Any]], received: float) -> None:
        key = (box, game)
        shown = self.live.get(room)
        if shown is not None and (shown.get("box"), shown.get("game")) != key:
            # one battle state per room: the one it plays now (an earlier one folds again
            # from rooms_applied if its events ever come back), not one per battle all evening
            self._battles.pop((shown.get("box"), shown.get("game")), None)  # type: ignore[arg-type]
        state = self._battles.get(key)
        if state is None:
            state = self.rules.initial(self.t.setup(battle))
            for ty, t_ns, payload in self.db.query(
                    "SELECT type, t_ns, payload FROM rooms_applied WHERE box = ? AND game = ? "
                    "ORDER BY seq", (box, game)):
                state = self.rules.evolve(state, Event(str(ty), int(t_ns),  # type: ignore
                                                       json.loads(str(payload))))
        else:
            for e in new:
                state = self.rules.evolve(state, Event(str(e["type"]), int(e["t_ns"]),
                                                       e.get("payload") or {}))
        self._battles[key] = state
        view = self.rules.view(state, "board")
        live = self.live.setdefault(room, {"room": room})
        last = new[-1] if new else None
        live.update({
            "box": box, "game": game, "battle": battle, "last_message": received,
            "lag_s": None if last is None else max(0.0, received - _wall_of(last, received)),
            "phase": view.get("phase"),
            "players": [{"name": p["name"], "score": p["score"]} for p in view["players"]],
            "theme": (view.get("theme") or {}).get("name"), "value": view.get("value"),
            "answering": view.get("answering"), "online": True,
        })

    def _tell(self, room: str) -> None:
        with self._lock:
            snapshot = dict(self.live.get(room) or {"room": room})
            self.live.get(room, {}).pop("finished", None)  # told once
        for fn in list(self.listeners):
            try:
                fn(room, snapshot)
            except Exception:
                log.exception("rooms: a live listener failed")

    def status(self) -> dict[str, Any]:
        with self._lock:
            rooms = []
            for room in self.rooms():
                live = dict(self.live.get(room) or {"room": room})
                live["in_play"] = self.in_play(room)
                rooms.append(live)
            return {"role": "director", "connected": bool(self.link and self.link.connected),
                    "broker": None if self.broker is None else {
                        "host": self.broker.host, "port": self.broker.port},
                    "rooms": rooms, "bracket": self.t.view(),
                    "duplicates": self.duplicates, "refusals": list(self.refusals[-10:])}

    def import_result(self, obj: Mapping[str, Any]) -> bool:
        """A result carried on a USB stick: the same checks and the same once-only rule."""
        msg = messages.decode(messages.encode(obj), kind="result", sealed_=True)
        room = msg.get("room")
        if not isinstance(room, str) or not topics.valid_room(room):
            raise messages.BadMessage("в файле нет зала", "the file names no room")
        return self.apply_result(room, msg)


def _nothing() -> None:
    """What closing unsubscribes before the link started watching."""


def _wall_of(e: Mapping[str, Any], default: float) -> float:
    """An event's wall time as the room box logged it (ISO 8601) in seconds."""
    from datetime import datetime

    w = e.get("wall")
    if isinstance(w, str):
        try:
            return datetime.fromisoformat(w).timestamp()
        except ValueError:
            return default
    return default
