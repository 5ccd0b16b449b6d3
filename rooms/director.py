"""The director's side: every room's events and results in, assignments out.

The director's SQLite file is the authority. A room's events are applied exactly once:
``rooms_applied`` has the primary key (box, game, seq) and takes only the next sequence
number of a game, in the same transaction that updates nothing else, so a duplicate
(a republish after a cut, a broker redelivery) or a run with a gap changes nothing; the
acknowledgement, retained on the room's ``down/ack`` topic, tells the room where to go on
from. A result is applied once per (box, game): it goes into the tournament's log as one
event (through the box's `TournamentShell`, with the room box, game and room as its
source), which advances the bracket, and the next ready battle is assigned to the room
that is free. The tournament is the director box's own running tournament; folding its
log again (`Director.replay`) gives the same bracket.

Each room's battle is also folded here with the battle engine, from the very events the
room committed, so the director's screens show the live score, theme, value and who is
answering without any second source of truth."""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from appliance.packages.model import Package
from appliance.rules import registry
from appliance.rules.protocol import Event, Refused
from appliance.runtime.coalesce import Coalesced
from appliance.runtime.tournament import TournamentShell
from rooms import messages, topics
from rooms.assignments import Assignments
from rooms.db import Tables
from rooms.link import Broker, Link

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
    room TEXT PRIMARY KEY, joined REAL NOT NULL, box TEXT);
CREATE TABLE IF NOT EXISTS rooms_games (
    assignment TEXT PRIMARY KEY, room TEXT NOT NULL, box TEXT NOT NULL, game INTEGER NOT NULL,
    battle TEXT NOT NULL)
"""

LiveListener = Callable[[str, dict[str, Any]], None]
# The director's admin page is told the link's status at most this often (a busy venue
# changes it with every batch; a person reads it at this pace).
STATUS_EVERY_S = 0.5


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Director:
    def __init__(self, *, broker: Broker | None, tournament: TournamentShell,
                 package: Package | None = None, wall: Callable[[], float] = time.time):
        """`tournament`: the box's tournament shell (its loop's store holds the link's
        tables too); `package`: where the battles' themes come from (default: the built-in
        sport demo)."""
        self.wall = wall
        self.broker = broker
        self.tournament = tournament
        self.db = Tables(tournament.loop.store.path, SCHEMA)
        with self.db.write() as c:  # a director's file from before the box binding
            if "box" not in {r[1] for r in c.execute("PRAGMA table_info(rooms_rooms)")}:
                c.execute("ALTER TABLE rooms_rooms ADD COLUMN box TEXT")
        self._lock = threading.RLock()
        if package is None:
            from appliance.packages import jsonform

            package = jsonform.demo("demo-sport")
        self.t = Assignments(self.db, tournament, package, wall)
        self.rules = registry.get("battle")
        # The event types the battle engine folds (its own table): any other is refused.
        folds = getattr(self.rules, "EVOLVERS", None)
        self.event_types = frozenset(folds) if folds is not None else None
        self._battles: dict[tuple[str, int], Any] = {}  # (box, game) -> battle engine state
        self.live: dict[str, dict[str, Any]] = {}  # room -> what the screens show
        self.listeners: list[LiveListener] = []
        # Told the link's status (`status()` without the bracket) after a change, at most
        # every STATUS_EVERY_S: the admin rooms page is pushed to, never polls.
        self.on_status: list[Callable[[dict[str, Any]], None]] = []
        self._status_soon = Coalesced(STATUS_EVERY_S, self._tell_status)
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
        # The box each room writes as (the first that wrote with the room's code) and the
        # game each assignment is played as: nothing else is applied for them.
        self._boxes: dict[str, str] = {str(r): str(b) for r, b in self.db.query(
            "SELECT room, box FROM rooms_rooms WHERE box IS NOT NULL")}
        self._games: dict[str, tuple[str, str, int]] = {
            str(a): (str(r), str(b), int(g))  # type: ignore[call-overload]
            for a, r, b, g in self.db.query("SELECT assignment, room, box, game FROM rooms_games")}
        # What the director refused, per room, box and game: in the room's acknowledgement,
        # so its host sees it.
        self._refusals_acked: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
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
                             on_up=self._on_up, on_down=self._changed, persistent=True)

    def start(self) -> Director:
        self._unwatch = self.t.watch(self._tournament_changed)
        self._ingester.start()
        if self.link is not None:
            self.link.start()
        return self

    def close(self) -> None:
        self.on_status.clear()
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

    def add_room(self, room: str) -> None:
        if not topics.valid_room(room):
            raise Refused("Неверное имя зала.", "Bad room name.", "bad_room")
        with self.db.write() as c:
            c.execute("INSERT OR IGNORE INTO rooms_rooms (room, joined) VALUES (?, ?)",
                      (room, self.wall()))
        self.assign_free_rooms()
        self._changed()

    def rejoin(self, room: str) -> None:
        """The room got a new join code: the next box that writes with it is the room's.
        That box (a spare for one that died) plays the room's battle as a game of its own,
        so the battle's binding to the old box's game goes too, unless its result is in."""
        with self._lock:
            with self.db.write() as c:
                c.execute("UPDATE rooms_rooms SET box = NULL WHERE room = ?", (room,))
                results = self._results.get(room, {})
                for aid, (r, box, game) in list(self._games.items()):
                    if r == room and game not in results.get(box, []):
                        c.execute("DELETE FROM rooms_games WHERE assignment = ?", (aid,))
                        del self._games[aid]
            self._boxes.pop(room, None)
            self.live.get(room, {}).pop("intruder", None)
        self.assign_free_rooms()
        self._changed()

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
            refused = {box: dict(g) for box, g in self._refusals_acked.get(room, {}).items()
                       if g}
        out = {"v": messages.VERSION, "room": room, "acks": acks, "results": results}
        if stale:
            out["stale"] = stale
        if refused:
            out["refused"] = refused
        return out

    def _tournament_changed(self) -> None:
        """The director corrected the tournament by hand: give the rooms their battles
        again (on the ingest thread, never on the game loop's)."""
        if not self._reassign.is_set():
            self._reassign.set()
            self._inbox.put(("", b""))

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
        self._changed()

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
            self._changed()

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
                    result = messages.decode(payload, kind="result", sealed_=True)
                    # apply_result records its own refusals (with the box and game)
                    with contextlib.suppress(messages.BadMessage, Refused):
                        self.apply_result(room, result)
                elif kind == topics.STATUS:
                    self._apply_status(room, messages.decode(payload, kind="status"))
            except (messages.BadMessage, Refused) as e:
                self._refused(room, kind, e)
                self._publish_ack(room)
            except Exception as e:  # one message's fault, never the batch's
                log.exception("rooms: %s from %s failed", kind, room)
                self._refused(room, kind, _internal(e))
        if runs:
            self.apply_runs(runs)

    def _apply_status(self, room: str, obj: Mapping[str, Any]) -> None:
        box = obj.get("box")
        if not isinstance(box, str) or not 0 < len(box) <= messages.MAX_NAME:
            raise messages.BadMessage("«status»: нет бокса", "status: no box")
        bound = self._boxes.get(room)
        with self._lock:
            live = self.live.setdefault(room, {"room": room})
            if bound is not None and box != bound:
                # A second box with this room's code: the broker handed it the room's
                # connection (one client id per code), so the room's own box was put off.
                live["intruder"] = box
                live["takeovers"] = int(live.get("takeovers") or 0) + 1
            else:
                live.update(online=bool(obj.get("online")), box=box, last_message=self.wall())
        self._tell(room)
        if bound is not None and box != bound:
            raise _forged(room, box, bound)

    def _refused(self, room: str, kind: str, e: Exception, *, box: str | None = None,
                 game: int | None = None, seq: int | None = None) -> None:
        """Record a refusal for the director's screens (the same refusal again only counts:
        a room resends what was not acknowledged every two seconds) and, when it is about a
        game of a box, for that box's acknowledgement (its host sees it)."""
        en = getattr(e, "en", None) or getattr(e, "message_en", str(e))
        ru = getattr(e, "ru", None) or getattr(e, "message_ru", "") or en
        code = str(getattr(e, "code", "bad_message"))
        with self._lock:
            key = (room, kind, code, box, game, seq, en)
            same = next((r for r in self.refusals if r["key"] == key), None)
            if same is not None:
                self.refusals.remove(same)
                same["count"] += 1
                same["at"] = self.wall()
                self.refusals.append(same)
            else:
                log.warning("rooms: %s from %s refused: %s", kind, room, en)
                self.refusals.append({"key": key, "room": room, "kind": kind, "code": code,
                                      "box": box, "game": game, "seq": seq, "ru": ru,
                                      "en": en, "at": self.wall(), "count": 1})
                del self.refusals[:-50]
            if box is not None and game is not None:
                self._refusals_acked.setdefault(room, {}).setdefault(box, {})[str(game)] = {
                    "kind": kind, "seq": seq, "code": code, "ru": ru, "en": en}

    def apply_events(self, room: str, msg: Mapping[str, Any]) -> int:
        """Apply the next events of a room's game; returns how many were new."""
        return self.apply_runs([(room, msg)], strict=True)

    def apply_runs(self, runs: Sequence[tuple[str, Mapping[str, Any]]],
                   strict: bool = False) -> int:
        """Apply runs of events (several rooms, several games) in one transaction, each run
        under its own savepoint: a run that is malformed, forged, stale or that the battle
        engine cannot fold is rolled back and refused alone (`strict`: raised), the others
        commit. What the director remembers (acknowledgements, the battles folded so far,
        the live cards) changes only after the commit, so it never runs ahead of the table,
        and a failed commit leaves it where the table still is."""
        received = self.wall()
        stage = _Stage()
        refusals: list[tuple[str, Exception, str | None, int | None, int | None]] = []
        new = 0
        with self._lock:
            in_play = self.t.in_play()
            with self.db.write() as c:
                for room, msg in runs:
                    c.execute("SAVEPOINT run")
                    try:
                        new += self._stage_run(c, stage, room, msg, in_play, received)
                        if stage.run.stale:
                            refusals.append((room, _withdrawn(), *_where(msg)))
                    except Exception as e:
                        c.execute("ROLLBACK TO run")
                        stage.undo_last()
                        if strict:
                            raise
                        err = e
                        if not isinstance(e, messages.BadMessage | Refused):
                            log.exception("rooms: events from %s failed", room)
                            err = _internal(e)
                        refusals.append((room, err, *_where(msg)))
                    finally:
                        c.execute("RELEASE run")
                    stage.commit_last()
            self._remember(stage, received)  # committed: now remember
        for room, err, box, game, seq in refusals:
            self._refused(room, topics.EVENTS, err, box=box, game=game, seq=seq)
        for room in stage.kept.cards:  # the screens first: the acks only let rooms go on
            self._tell(room)
        for room in dict.fromkeys(r for r, _ in runs):
            self._publish_ack(room)
        return new

    def _check_source(self, c: Any, stage: _Stage, room: str, box: str) -> None:
        """A room writes only under the box id that first wrote with its code (until the
        director adds the room again, which gives it a new code)."""
        bound = stage.get("boxes", room) or self._boxes.get(room)
        if bound is None:
            if c.execute("UPDATE rooms_rooms SET box = ? WHERE room = ?", (box, room)
                         ).rowcount == 0:
                raise Refused("Такого зала нет в турнире.", "No such room in the tournament.",
                              "unknown_room")
            stage.run.boxes[room] = box
        elif bound != box:
            raise _forged(room, box, bound)

    def _check_battle(self, c: Any, stage: _Stage, room: str, msg: Mapping[str, Any],
                      in_play: Mapping[str, str], *, start: bool) -> str:
        """The message's battle must be the room's current assignment, played as one game
        of the room's box: "ok", "done" (a game whose result is in: what it repeats is
        acknowledged again) or "stale" (a withdrawn assignment); anything else is refused.
        `start`: the first events of the assignment may bind it to their game."""
        box, game, battle, aid = msg["box"], msg["game"], msg["battle"], msg["assignment"]
        if self.t.room_of(battle) != room:
            raise Refused("Бой не назначен этому залу.",
                          "This battle is not assigned to this room.", "not_assigned")
        if game in self._results.get(room, {}).get(box, []):
            return "done"
        if aid != self.t.assignment_id(battle):
            stage.run.stale.append((room, box, game))
            return "stale"
        played = stage.get("games", aid) or self._games.get(aid)
        if played is None:
            if not start or in_play.get(battle) != room:
                raise Refused(f"Бой {battle} в этом зале уже не идёт.",
                              f"Battle {battle} is no longer in play in this room.",
                              "not_in_play")
            c.execute("INSERT INTO rooms_games (assignment, room, box, game, battle) "
                      "VALUES (?,?,?,?,?)", (aid, room, box, game, battle))
            stage.run.games[aid] = (room, box, game)
        elif played != (room, box, game):
            raise Refused(f"Бой {battle} уже играется как игра {played[2]} бокса {played[1]}.",
                          f"Battle {battle} is already played as game {played[2]} of box "
                          f"{played[1]}.", "other_game")
        return "ok"

    def _stage_run(self, c: Any, stage: _Stage, room: str, msg: Mapping[str, Any],
                   in_play: Mapping[str, str], received: float) -> int:
        stage.begin()
        messages.check_run(msg, self.event_types)
        box, game, battle = msg["box"], msg["game"], msg["battle"]
        self._check_source(c, stage, room, box)
        if self._check_battle(c, stage, room, msg, in_play, start=True) != "ok":
            self.duplicates += len(msg["events"])
            return 0
        key = (box, game)
        seq_now = stage.get("acks", key)
        if seq_now is None:
            seq_now = self._acks.get(room, {}).get(box, {}).get(str(game), 0)
        todo = []
        for ev in msg["events"]:
            if ev["seq"] <= seq_now:
                self.duplicates += 1
                continue
            if ev["seq"] != seq_now + 1:
                break  # a gap: the acknowledgement asks for the rest again
            todo.append(ev)
            seq_now = ev["seq"]
        if not todo:
            return 0
        # The battle engine folds them before anything is kept: an event it cannot fold
        # (a known type with a payload it cannot read) refuses the whole message.
        state = stage.get("states", key) or self._battles.get(key)
        if state is None:
            state = self._fold_table(c, battle, box, game)
        for ev in todo:
            try:
                state = self.rules.evolve(state, Event(ev["type"], ev["t_ns"], ev["payload"]))
            except Exception as e:
                raise Refused(
                    f"Событие seq {ev['seq']} ({ev['type']}) не складывается в бой: "
                    f"{type(e).__name__}", f"Event seq {ev['seq']} ({ev['type']}) cannot be "
                    f"folded into the battle: {type(e).__name__}", "unfoldable") from e
        try:
            view = self.rules.view(state, "board")
            card = _card(view)
        except Exception as e:
            raise Refused("После этих событий бой не показывается: "
                          f"{type(e).__name__}", "The battle cannot be shown after these "
                          f"events: {type(e).__name__}", "unfoldable") from e
        c.executemany(
            "INSERT INTO rooms_applied (box, game, seq, room, battle, type, t_ns, payload, "
            "wall, received) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [(box, game, ev["seq"], room, battle, ev["type"], ev["t_ns"],
              _dumps(ev["payload"]), _wall_of(ev, received), received) for ev in todo])
        stage.run.acks[key] = seq_now
        stage.run.states[key] = state
        stage.run.cards[room] = {
            "box": box, "game": game, "battle": battle, "last_message": received,
            "lag_s": max(0.0, received - _wall_of(todo[-1], received)), "online": True,
            **card}
        stage.run.rooms[key] = room
        return len(todo)

    def _fold_table(self, c: Any, battle: str, box: str, game: int) -> Any:
        """A game's battle folded from what the table holds (this transaction's rows too):
        once per game after a start, never per message."""
        state = self.rules.initial(self.t.setup(battle))
        for ty, t_ns, payload in c.execute(
                "SELECT type, t_ns, payload FROM rooms_applied WHERE box = ? AND game = ? "
                "ORDER BY seq", (box, game)):
            state = self.rules.evolve(state, Event(str(ty), int(t_ns), json.loads(payload)))
        return state

    def _remember(self, stage: _Stage, received: float) -> None:
        """After the commit: what the table now holds, in memory too."""
        kept = stage.kept
        self._boxes.update(kept.boxes)
        self._games.update(kept.games)
        for room, box, game in kept.stale:
            self._stale.setdefault(room, {}).setdefault(box, set()).add(game)
        for key, seq in kept.acks.items():
            room = kept.rooms[key]
            self._acks.setdefault(room, {}).setdefault(key[0], {})[str(key[1])] = seq
            self._refusals_acked.get(room, {}).get(key[0], {}).pop(str(key[1]), None)
        for room, card in kept.cards.items():
            key = (card["box"], card["game"])
            shown = self.live.get(room)
            if shown is not None and (shown.get("box"), shown.get("game")) != key:
                # one battle state per room: the one it plays now (an earlier one folds again
                # from rooms_applied if its events ever come back), not one per battle all
                # evening
                self._battles.pop((shown.get("box"), shown.get("game")), None)  # type: ignore[arg-type]
            self.live.setdefault(room, {"room": room}).update(card)
        self._battles.update(kept.states)

    def apply_result(self, room: str, msg: Mapping[str, Any]) -> bool:
        """Apply a room's result once; True when it advanced the bracket now. Refused unless
        it is the result of the very game the director folded for the room's current
        assignment, with the summary the director's own fold of that game gives."""
        where = _where(msg)

        def refuse(e: Exception) -> None:
            self._refused(room, topics.RESULT, e, box=where[0], game=where[1])

        try:
            messages.check_result(msg)
            if "events" in msg:  # carried by file: its events come with it, as runs
                events = msg["events"]
                if not isinstance(events, list):
                    raise messages.BadMessage("«result»: «events» — не список",
                                              "result: 'events' is not a list")
                head = {k: msg.get(k) for k in ("box", "game", "battle", "assignment")}
                for i in range(0, len(events), messages.MAX_EVENTS_PER_MESSAGE):
                    self.apply_events(room, {**head, "events": events[
                        i:i + messages.MAX_EVENTS_PER_MESSAGE]})
        except (messages.BadMessage, Refused) as e:
            refuse(e)
            raise
        box, game, battle = str(msg["box"]), int(msg["game"]), str(msg["battle"])
        with self._lock:
            stage = _Stage()
            stage.begin()
            try:
                with self.db.write() as c:
                    self._check_source(c, stage, room, box)
                    verdict = self._check_battle(c, stage, room, msg, {}, start=False)
                stage.commit_last()
                self._remember(stage, self.wall())
            except (messages.BadMessage, Refused) as e:
                refuse(e)
                raise
            if verdict == "done":
                self.duplicates += 1
                self._publish_ack(room)
                return False
            if verdict == "stale":
                refuse(_withdrawn())
                self._publish_ack(room)
                return False
            have = self._acks.get(room, {}).get(box, {}).get(str(game), 0)
            if have < msg["last_seq"]:
                return False  # its events first; the room sends the result again
            state = self._battles.get((box, game))
            if state is None:
                with self.db.lock:
                    state = self._fold_table(self.db.conn, battle, box, game)
            if _plain(self.rules.summary(state)) != _plain(msg["summary"]):
                mismatch = Refused(
                    "Итог не совпадает с событиями боя, которые получил директор.",
                    "The result does not match the battle's events the director received.",
                    "result_mismatch")
                refuse(mismatch)
                self._publish_ack(room)
                raise mismatch
            # The tournament's log first (it ignores a battle already done), then ours.
            try:
                self.t.record(battle, msg["summary"], {"box": box, "game": game, "room": room})
            except Refused as e:
                refuse(e)
                self._publish_ack(room)
                raise
            with self.db.write() as c:
                c.execute("INSERT INTO rooms_results (box, game, room, battle, sha256, payload, "
                          "received) VALUES (?,?,?,?,?,?,?)",
                          (box, game, room, battle, msg["sha256"], _dumps(msg), self.wall()))
            self._results.setdefault(room, {}).setdefault(box, []).append(game)
            self._refusals_acked.get(room, {}).get(box, {}).pop(str(game), None)
            self._battles.pop((box, game), None)  # played: its live state is not needed
            live = self.live.setdefault(room, {"room": room})
            live["finished"] = battle
        self._publish_ack(room)
        self.assign_free_rooms()
        self._tell(room)
        return True

    # -- live view -------------------------------------------------------------------------
    def _tell(self, room: str) -> None:
        with self._lock:
            snapshot = dict(self.live.get(room) or {"room": room})
            self.live.get(room, {}).pop("finished", None)  # told once
        for fn in list(self.listeners):
            try:
                fn(room, snapshot)
            except Exception:
                log.exception("rooms: a live listener failed")

    def _changed(self) -> None:
        """The status may have changed: tell `on_status` once STATUS_EVERY_S has passed
        (one timer at a time, so a storm of batches costs one status)."""
        if self.on_status:
            self._status_soon()

    def _tell_status(self) -> None:
        try:
            st = {k: v for k, v in self.status().items() if k != "bracket"}
        except Exception:  # a closed director (its tables gone) tells nothing
            log.exception("rooms: the director's status failed")
            return
        for fn in list(self.on_status):
            try:
                fn(st)
            except Exception:
                log.exception("rooms: a status listener failed")

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
                    "duplicates": self.duplicates,
                    "refusals": [{k: v for k, v in r.items() if k != "key"}
                                 for r in self.refusals[-10:]]}

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


class _Stage:
    """What a transaction of runs will make the director remember once it commits: what the
    runs kept so far hold (`kept`), and the run being applied (`run`, dropped when its
    savepoint rolls back). Looking a key up asks the run first, then what was kept: each
    run costs its own size, however long the batch."""

    def __init__(self) -> None:
        self.kept = _Run()
        self.run = _Run()

    def begin(self) -> None:
        self.run = _Run()

    def undo_last(self) -> None:
        self.run = _Run()

    def commit_last(self) -> None:
        k, r = self.kept, self.run
        for name in _Run.__slots__:
            if name == "stale":
                k.stale.extend(r.stale)
            else:
                getattr(k, name).update(getattr(r, name))
        self.run = _Run()

    def get(self, name: str, key: Any) -> Any:
        got = getattr(self.run, name).get(key)
        return got if got is not None else getattr(self.kept, name).get(key)


class _Run:
    __slots__ = ("acks", "boxes", "cards", "games", "rooms", "stale", "states")

    def __init__(self) -> None:
        self.boxes: dict[str, str] = {}
        self.games: dict[str, tuple[str, str, int]] = {}
        self.acks: dict[tuple[str, int], int] = {}
        self.states: dict[tuple[str, int], Any] = {}
        self.cards: dict[str, dict[str, Any]] = {}
        self.rooms: dict[tuple[str, int], str] = {}
        self.stale: list[tuple[str, str, int]] = []


def _card(view: Mapping[str, Any]) -> dict[str, Any]:
    """What a room's live card shows of the battle's board view."""
    return {"phase": view.get("phase"),
            "players": [{"name": p["name"], "score": p["score"]} for p in view["players"]],
            "theme": (view.get("theme") or {}).get("name"), "value": view.get("value"),
            "answering": view.get("answering")}


def _plain(obj: Any) -> Any:
    """`obj` as JSON gives it back (tuples as lists), to compare two summaries."""
    return json.loads(json.dumps(obj, ensure_ascii=False))


def _where(msg: Mapping[str, Any]) -> tuple[str | None, int | None, int | None]:
    """The box, game and first event of a message, as far as they are readable."""
    box, game, events = msg.get("box"), msg.get("game"), msg.get("events")
    seq = events[0].get("seq") if isinstance(events, list) and events and isinstance(
        events[0], dict) else None
    return (box if isinstance(box, str) and len(box) <= messages.MAX_NAME else None,
            game if isinstance(game, int) and not isinstance(game, bool) else None,
            seq if isinstance(seq, int) and not isinstance(seq, bool) else None)


def _forged(room: str, box: str, bound: str) -> Refused:
    return Refused(f"С кодом зала {room} пишет бокс {box}, а зал — бокс {bound}: "
                   "его сообщения не приняты.",
                   f"Box {box} writes with {room}'s code, but the room is box {bound}: "
                   "its messages are refused.", "forged_box")


def _internal(e: Exception) -> Refused:
    return Refused(f"Директор не смог применить сообщение: {type(e).__name__}",
                   f"The director could not apply the message: {type(e).__name__}",
                   "internal")


def _withdrawn() -> Refused:
    return Refused("Этот бой директор отменил и назначил заново: его игра больше не "
                   "принимается.", "The director withdrew this battle and assigned it "
                   "again: this game of it is no longer applied.", "stale")
