"""Socket.IO plumbing: who is connected in which role, what each role may see, and the
translation of screen messages into engine commands. No rule logic lives here: views come
from the engine's `view(state, role)`, buttons from `legal_actions(state)`.

Rooms: "host", "board", "player:N" (a seated phone), "lobby" (a phone with no seat yet),
"tourney" (the tournament's TV pages: no game frames, only "tourney" when the tournament
changes, `Hub.tourney_changed`), "admin" (a logged-in admin page: no game frames, only what
its page is pushed, e.g. the rooms link's status).
Every (re)connect gets the full view for its role at once, then updates after each commit,
and a deadline's decision (the answerer) as soon as the loop decides it, before its commit
(`GameLoop.subscribe` with ``ahead``).
One committed update is one `Frame`: each part (a role's view, the legal actions) is
computed at most once, and only if an occupied room receives it. Frames are bounded: the
growing lists of a view carry their last page; the host asks for older pages (`history`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from flask import request as _flask_request
from flask_socketio import SocketIO, disconnect, join_room, leave_room
from socketio.packet import Packet

from appliance import storage
from appliance.rules.protocol import Command, Refused
from appliance.runtime.coalesce import Coalesced
from appliance.runtime.loop import END_GAME_ACTION
from webui import inbound, tracing
from webui.admission import is_loopback
from webui.inbound import MALFORMED_EVENT, refusal
from webui.ratelimit import MAX_ADDRESSES, Meter

log = logging.getLogger("svoyak.webui")
# Flask-SocketIO adds `sid` to Flask's request inside a socket handler; Flask's types do not
# know it, so the request is used untyped here.
request: Any = _flask_request

SUBMIT_TIMEOUT_S = 5.0
LOBBY_COALESCE_S = 0.25
# Host-only message names: anything else arriving from a non-host socket is refused.
HOST_ONLY = ("command", "new_game", "ui", "history")
# Commands a phone may send for its own seat when the engine lists them for that seat.
SELF_ACTIONS = ("bet", "write")
# Frames carry the last HISTORY_PAGE entries of these growing lists of a view (and of any
# action's choices longer than MAX_CHOICES); the host's `history` pages through the rest.
HISTORY_KEYS = ("judgements", "corrections")
HISTORY_PAGE = 20
MAX_CHOICES = 40
# Only choices that grow with the game are cut: a board's cells (up to 10 themes of 10 in
# the SIQ format) must all stay pickable, or the host could not choose a legal question.
GROWING_CHOICES = ("ref",)
MAX_HISTORY_PAGE = 200
# A state due to be replaced within this long is held back (see `_on_update`).
COALESCE_NS = 15_000_000
FALLBACK_S = 0.05
# Cues the board turns into sounds; derived from the hardware view, so no secret can ride on them.
LAMP_ON, PRESS, FALSE_START, TIME_UP = "lamp_on", "press", "false_start", "time_up"


# Roles that only listen: no game frames, nothing they may send.
LISTENERS = ("tourney", "admin")


class JsonPacket(Packet):
    """Socket.IO packets that are JSON text, never binary. The library's default class walks
    every payload it sends, each list and dict down to the leaves, looking for bytes to send
    as attachments (0.6 ms for a host's frame on the development machine, once per room and
    update); the box's frames are JSON views and never hold bytes, so that walk is skipped.
    Binary packets a client sends are decoded as before."""

    uses_binary_events = False


@dataclass
class Client:
    role: str  # "host" | "board" | "player" | "tourney" | "admin"
    seat: int | None = None
    lang: str = "ru"

    @property
    def room(self) -> str:
        if self.role == "player":
            return "lobby" if self.seat is None else f"player:{self.seat}"
        return self.role

    @property
    def view_role(self) -> str:
        """The engine role: a phone without a seat sees what the board sees."""
        if self.role == "player":
            return "board" if self.seat is None else f"player:{self.seat}"
        return self.role


@dataclass
class UiState:
    """Screen state that is not a game rule: the host shows the race, pauses the board,
    and phones propose names before a game starts."""

    race_shown: bool = False
    paused: bool = False
    lobby: dict[str, str] = field(default_factory=dict)  # sid -> proposed name
    # The chooser's pick sent from a phone, waiting for the host's one tap:
    # {"seat": N, "cell": "t:q"} (see `Hub.propose`).
    proposal: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"race_shown": self.race_shown, "paused": self.paused,
                "lobby": sorted(set(self.lobby.values())), "proposal": self.proposal}


def timers(view: Mapping[str, Any], now: int) -> dict[str, dict[str, int]]:
    """Countdowns the view names ("window_ends_ns" at the top, "answer_deadline_ns" in the
    question), as milliseconds left now, so a screen needs no clock of the box:
    {"window": {"ms": left, "ends": the deadline, as the countdown's identity}}."""
    found: dict[str, dict[str, int]] = {}
    question = view.get("question")
    for part in (view, question if isinstance(question, Mapping) else {}):
        for k, v in part.items():
            for suffix in ("_ends_ns", "_deadline_ns"):
                if k.endswith(suffix) and isinstance(v, int) and not isinstance(v, bool) \
                        and v > now:
                    found[k.removesuffix(suffix)] = {"ms": (v - now) // 1_000_000, "ends": v}
    return found


def seat_actions(seat: int, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a phone may send for its own seat: actions the engine gives to players
    (not presses: those take the press path), and a secret bet or written answer the
    engine lists for this seat (the rules let it be entered on the tablet or the phone).
    Choices of "player" are narrowed to this seat."""
    out = []
    for a in actions:
        if a["type"] == "press":
            continue
        if a.get("seat") == seat:  # the rules give this seat the move: its choices as they are
            out.append(a)
            continue
        choices = a["args"].get("player")
        for_me = isinstance(choices, list) and any(c.get("value") == seat for c in choices)
        if a["by"] in ("player", f"player:{seat}") or (a["type"] in SELF_ACTIONS and for_me):
            args = dict(a["args"])
            if isinstance(choices, list):
                if not for_me:
                    continue
                args["player"] = [c for c in choices if c.get("value") == seat]
            out.append({**a, "args": args})
    return out


def bounded_view(view: dict[str, Any]) -> dict[str, Any]:
    """A view with its history lists cut to the last `HISTORY_PAGE` entries (the host has
    the whole list one `history` request away), so a frame does not grow with the game.
    The engine's own copy of the legal actions is dropped: the host's frame carries them."""
    out = {k: v for k, v in view.items() if k != "actions"}
    for key in HISTORY_KEYS:
        items = out.get(key)
        if isinstance(items, list) and len(items) > HISTORY_PAGE:
            out[key] = items[-HISTORY_PAGE:]
            out[f"{key}_total"] = len(items)
    return out


def bounded_actions(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Actions whose list of choices grows with the game (a judgement to change) keep the
    last `HISTORY_PAGE` choices, with the full count in ``args_total``."""
    out = []
    for a in actions:
        long = {k: v for k, v in a["args"].items()
                if k in GROWING_CHOICES and isinstance(v, list) and len(v) > MAX_CHOICES}
        if long:
            a = {**a, "args": {**a["args"], **{k: v[-HISTORY_PAGE:] for k, v in long.items()}},
                 "args_total": {k: len(v) for k, v in long.items()}}
        out.append(a)
    return out


class Frame:
    """One committed update as the screens see it. Built once per update and shared by every
    room: each part is computed on first use and kept, so a part no room receives (the
    legal actions when only boards are connected) is never computed, and a part several
    rooms receive (the board's view for the board and the lobby) is computed once."""

    def __init__(self, hub: Hub, snapshot: tuple[Any, Any] | None, game: int | None):
        self.hub = hub
        self.game = hub.loop.current if game is None else game
        self.ui = hub.ui.to_json()
        settings = hub.settings.get()  # one copy for the whole frame
        self.box = {"simulate": hub.simulate,
                    "phone_buzzer": hub.simulate or bool(settings.get("casual_buzzer")),
                    # The box's language: a screen that has not picked its own follows it.
                    "language": settings.get("language") or "ru",
                    # The board drops a first PIN it shows once a host has logged in.
                    "pin_on_board": bool(settings.get("pin_on_board")),
                    # The board's notice of a full card comes and goes with the space.
                    "disk_full": hub.hooks.card_full()}
        self._views: dict[str, dict[str, Any] | None] = {}
        self._actions: list[dict[str, Any]] | None = None
        self._host_actions: list[dict[str, Any]] | None = None
        self._tourney: tuple[dict[str, Any] | None] | None = None
        self._hardware: dict[str, Any] | None = None
        with hub._lock:  # a second host tablet or tab gets a notice
            self.hosts = sum(1 for c in hub.clients.values() if c.role == "host")
        if self.game is None:
            return
        # without an update: what the screens were last told (`GameLoop.shown`), which may
        # be a deadline's decision ahead of its commit; never take that back
        self.rules, self.state = snapshot or hub.loop.shown(self.game)
        self.finished = hub.loop.is_finished(self.game)
        # A sport battle that ends by itself («бой окончен») has its result before the host
        # presses «Завершить игру»: the screens show its statistics at once, as in a TV game.
        over = self.finished or getattr(self.state, "phase", None) == "finished"
        self.summary = self.rules.summary(self.state) if over else None
        self.now = hub.loop.now(self.game)
        deadline = None if self.finished else self.rules.next_deadline(self.state)
        self.deadline_ms = None if deadline is None else max((deadline - self.now) // 1_000_000,
                                                             0)

    def view(self, role: str) -> dict[str, Any] | None:
        """The engine's view for `role`, or None when the state has no such seat."""
        if role not in self._views:
            try:
                v: dict[str, Any] | None = self.rules.view(self.state, role)
            except Refused:
                v = None
            if v is not None:
                v = bounded_view(v)
            self._views[role] = v
        return self._views[role]

    def actions(self) -> list[dict[str, Any]]:
        """The actions of the very state shown (an update may trail the loop by a commit)."""
        if self._actions is None:
            legal = [] if self.finished else [*self.rules.legal_actions(self.state),
                                              END_GAME_ACTION]
            self._actions = [a.to_json() for a in legal]
        return self._actions

    def tourney(self) -> dict[str, Any] | None:
        """The battle's place in the tournament (once per frame), None outside one."""
        hook = self.hub.hooks.tourney
        if self._tourney is None and hook is not None and self.game is not None:
            try:
                self._tourney = (hook(self.game),)
            except Exception:  # a caption problem must not hide the game
                log.exception("tournament caption failed")
                self._tourney = (None,)
        return self._tourney[0] if self._tourney is not None else None

    def hardware(self) -> dict[str, Any] | None:
        if self._hardware is None and self.hub.hooks.hardware_status is not None:
            try:
                self._hardware = self.hub.hooks.hardware_status()
            except Exception:  # a status problem must not hide the game
                log.exception("hardware status failed")
        return self._hardware

    def payload(self, client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {"role": client.role, "seat": client.seat, "game": self.game,
                               "ui": self.ui, "box": self.box}
        if client.role == "host":
            out["hosts"] = self.hosts
        if client.role == "host" and (fault := getattr(self.hub.loop, "fault", None)):
            out["loop_fault"] = fault  # a deadline's decision cannot be written: the banner
        if client.role == "host" and self.hub.hooks.hardware_status is not None:
            hw = self.hardware()
            if hw is not None:
                out["hardware"] = hw
        if self.game is None:
            return out
        out["rules"] = self.rules.NAME
        out["finished"] = self.finished
        view = self.view(client.view_role)
        if view is None:  # a phone kept a seat the new game does not have: show the board
            out["seat"] = None
            view = self.view("board")
        out["view"] = view
        if self.summary is not None:
            out["summary"] = self.summary
        question = view.get("question") if view is not None else None
        media_type = self.hub.hooks.media_type
        if media_type is not None and isinstance(question, dict) and question.get("media"):
            out["media_types"] = {h: media_type(h) for h in question["media"]
                                  if isinstance(h, str)}
        if client.role == "host" and self.rules.NAME == "battle":
            out["tourney"] = self.tourney()
        out["deadline_ms"] = self.deadline_ms
        out["timers"] = {} if self.finished or view is None else timers(view, self.now)
        if client.role == "host":  # the host may also enter a player's action for them
            if self._host_actions is None:
                self._host_actions = bounded_actions(self.actions())
            out["actions"] = self._host_actions
        elif client.role == "player" and client.seat is not None:
            out["actions"] = seat_actions(client.seat, self.actions())
        return out


def _nobody() -> bool:
    return False


@dataclass(frozen=True)
class Hooks:
    """What the hub asks the rest of the box, given once when it is built (`create_app`,
    from what the composition root put in `Services`), never set on it afterwards."""

    # The wired buttons' press path, when they are wired: simulated presses then take it
    # (bounce window included); `press(seat, by)` returns the press's tick.
    press: Callable[[int, str], Any] | None = None
    # The buttons' status for the host's screen (stuck buttons, or why they are off).
    hardware_status: Callable[[], dict[str, Any]] | None = None
    # The package library's content types, so a screen knows image from audio or video.
    media_type: Callable[[str], str | None] | None = None
    # Whether the socket's request carries a live host session.
    is_host: Callable[[], bool] = _nobody
    # Whether the data partition is full (appliance.runtime.space).
    card_full: Callable[[], bool] = _nobody
    # A stranger's address stormed: turn it away for a while (`webui.admission`).
    on_storm: Callable[[str], None] | None = None
    # A game's place in the tournament when it is one of its battles (the host's caption
    # and the end of a battle), pushed with the host's frames instead of polled.
    tourney: Callable[[int], dict[str, Any] | None] | None = None


class Hub:
    """Connects the game loop to the screens. `start_game(rules, players, package_id)`
    is given by the composition root (it knows packages and setups), and so is what the hub
    asks of the rest of the box (`hooks`)."""

    def __init__(self, socketio: SocketIO, loop: Any, *, simulate: bool,
                 settings: Any, start_game: Callable[..., Any], hooks: Hooks = Hooks(),
                 clock: Callable[[], int] = time.monotonic_ns):
        self.sio = socketio
        self.loop = loop
        self.simulate = simulate
        self.settings = settings
        self.start_game = start_game
        self.clock = clock
        self.clients: dict[str, Client] = {}
        self.ui = UiState()
        self._lock = threading.Lock()
        self._hw: dict[str, Any] | None = None
        self._seq = 0
        self._tourney = 0  # changes of the tournament, for its TV pages
        self._held_cues: list[str] = []
        self._held_events: list[dict[str, Any]] = []
        self.hooks = hooks
        self._meters: dict[str, Meter] = {}  # sid -> its buckets
        self.meter_clock: Callable[[], float] = time.monotonic  # tests stop it
        self._sid_address: dict[str, str] = {}  # sid -> a stranger's address
        self._address_meters: dict[str, Meter] = {}  # address -> buckets all its sockets share
        self.dropped: Counter[str] = Counter()  # messages over a socket's rate limit
        # Names proposed in the lobby reach the screens together, at most once per
        # LOBBY_COALESCE_S: a room of phones joining at once costs one fan-out, not one each.
        self._lobby_changed = Coalesced(LOBBY_COALESCE_S, self.broadcast)
        self._register()
        self.trace = tracing.from_environment()  # the fan-out bench's profile, else None
        # ahead: a deadline's decision (the answerer) before its commit, see `GameLoop`
        loop.subscribe(self._on_update if self.trace is None
                       else self.trace.wrap(self._on_update), ahead=True)
        if self.trace is not None:  # on the loop thread: when decided, when committed
            loop.subscribe(self._trace_loop, inline=True, early=True)

    # --- what each role sees -------------------------------------------------------------

    def phone_buzzer(self) -> bool:
        return self.simulate or bool(self.settings.get().get("casual_buzzer"))

    def payload(self, client: Client, snapshot: tuple[Any, Any] | None = None,
                game: int | None = None) -> dict[str, Any]:
        """The full frame for one client (a connect, a seat change)."""
        return Frame(self, snapshot, game).payload(client)

    def _seat_actions(self, seat: int, actions: list[dict[str, Any]] | None = None
                      ) -> list[dict[str, Any]]:
        return seat_actions(seat, actions if actions is not None
                            else [a.to_json() for a in self.loop.legal_actions()])

    def history(self, key: str, offset: int, limit: int) -> dict[str, Any]:
        """A page of one of the host view's history lists (the frame carries only the last
        `HISTORY_PAGE` entries), oldest first: ``{"items", "offset", "total"}``."""
        if key not in HISTORY_KEYS:
            return refusal("Нет такой истории.", "No such history.", "malformed")
        game = self.loop.current
        if game is None:
            return refusal("Игра не начата.", "No game is running.", "no_game")
        rules, state = self.loop.snapshot(game)
        items = rules.view(state, "host").get(key)
        items = items if isinstance(items, list) else []
        offset = max(0, min(offset, len(items)))
        limit = max(1, min(limit, MAX_HISTORY_PAGE))
        return {"ok": True, "key": key, "items": items[offset:offset + limit],
                "offset": offset, "total": len(items)}

    def packages_changed(self, packages: list[dict[str, Any]]) -> None:
        """The package library changed (an upload, a delete): the host's start screen gets
        the new list at once, over the socket it already has, without a reload."""
        self.sio.emit("packages", {"packages": packages}, to="host")

    def _send_full(self, sid: str) -> None:
        client = self.clients.get(sid)
        if client is None:
            return
        if client.role == "tourney":
            self.sio.emit("tourney", {"v": self._tourney}, to=sid)
        elif client.role != "admin":  # an admin page reads its own state once it connects
            self.sio.emit("view", self.payload(client), to=sid)

    def tourney_changed(self) -> None:
        """The tournament changed (its shell's watcher, on the notifier thread): its TV
        pages redraw. A counter, not the bracket: each page renders its own part."""
        with self._lock:
            self._tourney += 1
            v = self._tourney
        self.sio.emit("tourney", {"v": v}, to="tourney")

    def broadcast(self, cues: list[str] | None = None, events: list[dict] | None = None,
                  snapshot: tuple[Any, Any] | None = None, game: int | None = None) -> None:
        """Send each occupied room its own frame. What rooms share (the legal actions, the
        deadline, the summary, each role's view) is computed once for the update, and only
        when a room that receives it is occupied."""
        with self._lock:
            rooms = {c.room: c for c in self.clients.values() if c.role not in LISTENERS}
        if not rooms:
            return
        clock = time.perf_counter
        started = clock()
        try:
            frame = Frame(self, snapshot, game)
        except Exception:
            log.exception("frame for game %s failed", game)
            return
        build = clock() - started
        for room, client in rooms.items():
            t = clock()
            try:
                data = frame.payload(client)
            except Exception:  # one room's problem must not keep the others in the dark
                log.exception("view for room %s failed", room)
                continue
            if cues:
                data["cues"] = cues
            if events is not None and client.role == "host":
                data["events"] = events  # only the host sees event payloads
            build += clock() - t
            self.sio.emit("view", data, to=room)
        if self.trace is not None:
            total = clock() - started
            self.trace.note({"rooms": len(rooms), "build_ms": round(build * 1e3, 3),
                             "emit_ms": round((total - build) * 1e3, 3),
                             "done": time.monotonic()})

    def _on_update(self, update: Any) -> None:
        """Loop subscriber (notifier thread): derive sound cues, then fan out."""
        rules, state = update.rules, update.state
        if self.trace is not None and update.command is not None:
            self.trace.note({"command": update.command.type, "t_ns": update.command.t_ns,
                             "at": time.monotonic(), "lag_ms": round(
                (self.loop.now(update.game) - update.command.t_ns) / 1e6, 3)})
        if not update.current:  # decided by the loop, as for the lamp (`Update.current`)
            return
        if not update.events and not update.finished and update.command is None:
            self._hw = None  # a new game
        try:
            hw = rules.view(state, "hardware")
        except Exception:  # an engine without a hardware view still updates the screens
            log.exception("hardware view failed")
            hw = {}
        command = getattr(update, "command", None)
        cues = self._cues(hw, command.type if command is not None else "")
        if LAMP_ON in cues:
            self.ui.race_shown = False
        with self._lock:
            self._seq += 1
            seq = self._seq
            cues = self._held_cues + cues
            events = self._held_events + [e.to_json() for e in update.events]
            self._held_cues, self._held_events = [], []
            # A state the engine will replace within a few ms (a press waiting out the settle
            # window) is not fanned out: sending it would only delay the answerer's name.
            # A timer sends it anyway should the deadline bring no new state.
            due = None if update.finished else rules.next_deadline(state)
            left = None if due is None else due - self.loop.now(update.game)
            if update.events and left is not None and 0 <= left <= COALESCE_NS:
                self._held_cues, self._held_events = cues, events
                timer = threading.Timer(left / 1e9 + FALLBACK_S, self._flush,
                                        (seq, update.game))
                timer.daemon = True
                timer.start()
                return
        self.broadcast(cues, events, (rules, state), update.game)

    def _trace_loop(self, update: Any) -> None:
        if self.trace is not None and update.command is not None:
            self.trace.note({"loop": update.command.type, "t_ns": update.command.t_ns,
                             "committed": update.committed, "at": time.monotonic()})

    def _flush(self, seq: int, game: int) -> None:
        """The held state, if nothing newer was sent since."""
        with self._lock:
            if seq != self._seq or game != self.loop.current:
                return
            cues, events = self._held_cues, self._held_events
            self._held_cues, self._held_events = [], []
        self.broadcast(cues, events)

    def _cues(self, hw: Mapping[str, Any], command_type: str) -> list[str]:
        """Sound cues from the hardware view's changes (no secret can ride on them): the
        lamp lit, someone won the press, a false start; time up when a deadline (a
        timeout, not the host) put the lamp out with nobody answering."""
        prev = self._hw or {}
        self._hw = dict(hw)
        cues = []
        if hw.get("lamp") and not prev.get("lamp"):
            cues.append(LAMP_ON)
        if hw.get("answering") is not None and hw.get("answering") != prev.get("answering"):
            cues.append(PRESS)
        if int(hw.get("false_starts") or 0) > int(prev.get("false_starts") or 0):
            cues.append(FALSE_START)
        if (command_type == "timeout" and prev.get("lamp") and not hw.get("lamp")
                and hw.get("answering") is None):
            cues.append(TIME_UP)
        return cues

    # --- commands -------------------------------------------------------------------------

    def seat_count(self) -> int:
        """Seats of the current game (MAX_SEATS when none is running)."""
        if self.loop.current is None:
            return inbound.MAX_SEATS
        try:
            _rules, state = self.loop.snapshot()
        except Exception:
            return inbound.MAX_SEATS
        seats = getattr(state, "seats", None)
        if isinstance(seats, int) and not isinstance(seats, bool):
            return seats
        try:
            return len(_rules.view(state, "board").get("players") or ()) or inbound.MAX_SEATS
        except Exception:
            return inbound.MAX_SEATS

    def submit(self, command: Command) -> dict[str, Any]:
        if self.loop.current is None:
            return refusal("Игра не начата.", "No game is running.", "no_game")
        pending = getattr(self.loop, "pending", None)
        if pending is not None and pending() >= inbound.INBOX_HIGH_WATER:
            self.dropped["inbox_full"] += 1
            return refusal("Коробка занята, повторите.", "The box is busy: try again.", "busy")
        try:
            outcome = self.loop.submit(command).result(SUBMIT_TIMEOUT_S)
        except Refused as r:
            return {"ok": False, "refused": r.to_json()}
        except FutureTimeout:
            return refusal("Коробка не ответила вовремя.", "The box did not answer in time.",
                           "busy")
        except Exception as e:  # a bug in an engine must still answer the screen
            if storage.disk_full(e):
                # The commit failed, so the game is as it was before this command.
                return refusal("Карта памяти заполнена: действие не записано, игра как была. "
                               "Освободите место (удалите старые пакеты).",
                               "The memory card is full: the action was not recorded, the "
                               "game is as it was. Free some space (delete old packages).",
                               "disk_full")
            log.exception("command %r failed", command.type)
            return refusal("Команда не выполнена (ошибка).", "The command failed (an error).",
                           "error")
        if outcome.refused is not None:
            return {"ok": False, "refused": outcome.refused.to_json()}
        return {"ok": True, "events": len(outcome.events)}

    def press(self, player: Any, by: str) -> dict[str, Any]:
        """A simulated press, stamped on arrival: the same `press` path as GPIO."""
        if not inbound.is_int(player) or not 0 <= player < self.seat_count():
            return refusal("Нет такого игрока.", "No such player.", "malformed")
        if self.loop.current is None:
            return refusal("Игра не начата.", "No game is running.", "no_game")
        if self.hooks.press is not None:
            return {"ok": True, "t_ns": self.hooks.press(player, by)}
        return self.submit(Command("press", self.clock(), {"player": player}, by))

    def propose(self, seat: int, cell: Any) -> dict[str, Any]:
        """The chooser's pick from a phone: shown to the host, who confirms it with one tap
        (the same `choose` the host sends); the admin setting ``phone_pick_direct`` lets it
        go straight through instead."""
        if not isinstance(cell, str) or len(cell) > 16:
            return inbound.MALFORMED
        self.ui.proposal = {"seat": seat, "cell": cell}
        self.broadcast()
        return {"ok": True, "proposed": True}

    def _archive(self, game: int) -> None:
        """End the game a new one replaces (its summary goes to the log and it leaves
        memory), unless it is a tournament: that one spans many games and ends by itself."""
        try:
            rules, _state = self.loop.snapshot(game)
            if self.loop.is_finished(game) or rules.NAME == "tournament":
                return
            self.loop.end_game(game)
        except Exception:  # the new game is on; an old one left running is no harm
            log.exception("could not end game %s", game)

    def disconnect_hosts(self) -> None:
        """Close every host and admin socket (the host sessions were ended)."""
        with self._lock:
            sids = [sid for sid, c in self.clients.items() if c.role in ("host", "admin")]
        for sid in sids:
            try:
                self.sio.server.disconnect(sid, namespace="/")
            except Exception:
                log.exception("could not close host socket %s", sid)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            roles = Counter(c.role for c in self.clients.values())
        out: dict[str, Any] = {"sockets": dict(roles), "dropped": dict(self.dropped)}
        if hasattr(self.loop, "refused_busy"):  # the loop's own inbox, per source
            out["inbox"] = {"pending": self.loop.pending(), "busy": self.loop.refused_busy()}
        return out

    # --- Socket.IO handlers ---------------------------------------------------------------

    def _client(self) -> Client | None:
        return self.clients.get(request.sid)

    def _refuse_non_host(self, name: str) -> dict[str, Any] | None:
        client = self._client()
        if client is not None and client.role == "host":
            return None
        who = client.role if client else "unknown"
        log.warning("refused host-only %r from %s socket %s (%s)", name, who, request.sid,
                    request.remote_addr)
        return refusal("Только ведущий может это сделать.", "Only the host may do this.",
                       "forbidden")

    def _handler(self, name: str) -> Callable[[Callable[..., dict[str, Any]]], Any]:
        """Register a message handler behind the socket's rate limit: a message over the
        limit is counted and answered at once, and never reaches the handler (or the game
        loop's queue). A handler that fails still answers."""

        def register(fn: Callable[..., dict[str, Any]]) -> Any:
            def guarded(data: Any = None, *extra: Any) -> dict[str, Any]:
                client = self._client()
                meter = self._meters.get(request.sid)
                if client is None or meter is None:
                    return refusal("Нет соединения.", "Not connected.", "forbidden")
                if not meter.allow(name) or not self._address_allows(name):
                    self.dropped[name] += 1
                    if meter.storming():
                        self._cut_storm()
                    return TOO_FAST
                if extra:
                    return inbound.MALFORMED
                try:
                    return fn(data)
                except Exception:
                    log.exception("handler %r failed", name)
                    return refusal("Ошибка на коробке.", "An error on the box.", "error")

            guarded.__name__ = f"on_{name}"
            return self.sio.on(name)(guarded)

        return register

    def _cut_storm(self) -> None:
        """Close a storming socket; a stranger's address is turned away for a while
        (`on_storm`), so the storm costs refused connections, not parsed messages."""
        sid = request.sid
        address = self._sid_address.get(sid)
        self.dropped["storms_cut"] += 1
        log.warning("socket %s from %s storms: closed", sid, request.remote_addr)
        if address is not None and self.hooks.on_storm is not None:
            self.hooks.on_storm(address)
        disconnect()

    def _address_allows(self, name: str) -> bool:
        address = self._sid_address.get(request.sid)
        if address is None:
            return True
        meter = self._address_meters.get(address)
        return meter is None or meter.allow(name)

    def _register(self) -> None:
        sio = self.sio

        @sio.on("connect")
        def on_connect(auth: Any = None) -> bool:
            hello = inbound.hello(auth)
            if hello is None:
                return False
            role, seat, lang = hello
            if role in ("host", "admin") and not self.hooks.is_host():
                log.warning("%s socket without login from %s", role, request.remote_addr)
                return False
            client = Client(role, None, lang)
            address = request.remote_addr or "?"
            with self._lock:
                self.clients[request.sid] = client
                self._meters[request.sid] = Meter(role, self.meter_clock)
                if role not in ("host", "admin") and not is_loopback(address):
                    self._sid_address[request.sid] = address
                    if address not in self._address_meters:
                        self._address_meters[address] = Meter("address", self.meter_clock)
                        while len(self._address_meters) > MAX_ADDRESSES:
                            del self._address_meters[next(iter(self._address_meters))]
            join_room(client.room)
            # A phone keeps its seat only in the game it took it in (a reconnect, a restart):
            # in a new game the seat number may be another person's, so it asks again.
            # (The box's phones name that game; a client that names none keeps the seat.)
            same = not isinstance(auth, dict) or "game" not in auth or (
                auth["game"] is not None and auth["game"] == self.loop.current)
            if role == "player" and seat is not None and seat < self.seat_count() and same:
                self._take_seat(client, seat)
            if role == "host":
                self.broadcast()  # every host screen learns how many hosts there are
            else:
                self._send_full(request.sid)
            return True

        @sio.on("disconnect")
        def on_disconnect(*_: Any) -> None:
            with self._lock:
                gone = self.clients.pop(request.sid, None)
                self._meters.pop(request.sid, None)
                self._sid_address.pop(request.sid, None)
                lobby_changed = self.ui.lobby.pop(request.sid, None) is not None
            if gone is not None and gone.role == "host":
                self.broadcast()  # the other host screens drop their notice
            elif lobby_changed:
                self._lobby_changed()

        @self._handler("command")
        def on_command(data: Any) -> dict[str, Any]:
            if (bad := self._refuse_non_host("command")) is not None:
                return bad
            if (bad := inbound.command(data)) is not None:
                return bad
            data = {**data, "t_ns": self.clock()}
            data.pop("by", None)
            data.pop("at_ns", None)
            if "player" in data and (not inbound.is_int(data["player"]) or
                                     not 0 <= data["player"] < self.seat_count()):
                return refusal("Нет такого игрока.", "No such player.", "malformed")
            try:
                cmd = Command.from_json(data)
            except Refused as r:
                return {"ok": False, "refused": r.to_json()}
            if self.ui.proposal is not None:  # the host decided: a phone's pick is done with
                self.ui.proposal = None
                self.broadcast()
            return self.submit(cmd)

        @self._handler("player_command")
        def on_player_command(data: Any) -> dict[str, Any]:
            """A phone's own action (a final bet, a written answer): allowed only when the
            engine lists it for this seat, and always about this seat."""
            client = self._client()
            if self.loop.current is None and client is not None and client.role == "player":
                return refusal("Игра не начата.", "No game is running.", "no_game")
            if client is None or client.role != "player" or client.seat is None:
                return refusal("Сначала выберите место.", "Choose your seat first.", "no_seat")
            if (bad := inbound.command(data)) is not None:
                return bad
            listed = [a for a in self._seat_actions(client.seat) if a["type"] == data["type"]]
            if not listed:
                return refusal("Сейчас это нельзя.", "Not allowed now.", "not_now")
            args = {k: v for k, v in data.items() if k not in ("type", "t_ns", "by", "at_ns")}
            # The seat acts for itself (a bet, a bid): "player" is this seat. A move the
            # rules give this seat about another (the cat given to someone) keeps its
            # "player", which the engine checks against its choices.
            choices = listed[0]["args"].get("player")
            if listed[0].get("seat") != client.seat or (
                    isinstance(choices, list) and all(c.get("value") == client.seat
                                                      for c in choices)):
                args["player"] = client.seat
            if data["type"] == "choose" and not self.settings.get().get("phone_pick_direct"):
                return self.propose(client.seat, args.get("cell"))
            return self.submit(Command(data["type"], self.clock(), args, f"player:{client.seat}"))

        @self._handler("press")
        def on_press(data: Any) -> dict[str, Any]:
            """Simulated buttons: board keys (simulator) and phone buzzers (simulator or
            casual mode). A phone may press only for its own seat."""
            client = self._client()
            assert client is not None
            if client.role in LISTENERS:
                return refusal("Только ведущий может это сделать.", "Only the host may do this.",
                               "forbidden")
            if client.role == "player":
                if not self.phone_buzzer() or client.seat is None:
                    return refusal("Кнопка на телефоне выключена.",
                                   "The phone buzzer is off.", "forbidden")
                return self.press(client.seat, "phone")
            if not self.simulate:
                return refusal("Только в режиме симулятора.", "Simulator mode only.",
                               "forbidden")
            if not isinstance(data, dict):
                return inbound.MALFORMED
            return self.press(data.get("player"), "key")

        @self._handler("seat")
        def on_seat(data: Any) -> dict[str, Any]:
            client = self._client()
            if client is None or client.role != "player":
                return refusal("Только для телефонов игроков.", "Players' phones only.",
                               "forbidden")
            parsed = inbound.seat(data, self.seat_count())
            if isinstance(parsed, dict):
                return parsed
            seat, name = parsed
            if seat is None:
                leave_room(client.room)
                client.seat = None
                join_room(client.room)
                if name:
                    with self._lock:
                        self.ui.lobby[request.sid] = name
                    self._lobby_changed()
                self._send_full(request.sid)
                return {"ok": True}
            self._take_seat(client, seat)
            self._send_full(request.sid)
            return {"ok": True, "seat": seat}

        @self._handler("new_game")
        def on_new_game(data: Any) -> dict[str, Any]:
            if (bad := self._refuse_non_host("new_game")) is not None:
                return bad
            parsed = inbound.new_game(data)
            if isinstance(parsed, dict) and parsed.get("ok") is False:
                return parsed
            assert isinstance(parsed, tuple)
            rules, players, package, options = parsed
            previous = self.loop.current
            try:
                game = self.start_game(rules, players, package, options)
            except Refused as r:
                return {"ok": False, "refused": r.to_json()}
            except (ValueError, KeyError, TypeError) as e:
                return refusal(f"Не удалось начать игру: {e}", f"Cannot start a game: {e}",
                               "bad_setup")
            if previous is not None and previous != game and not data.get("keep"):
                self._archive(previous)
            self._unseat_phones()
            self.ui = UiState(lobby=self.ui.lobby)
            self._hw = None
            self.broadcast()
            return {"ok": True, "game": game}

        @self._handler("ui")
        def on_ui(data: Any) -> dict[str, Any]:
            """Host-only screen switches: show the race on the board, pause the board."""
            if (bad := self._refuse_non_host("ui")) is not None:
                return bad
            if not isinstance(data, dict) or not data or \
                    any(k not in ("race_shown", "paused", "proposal")
                        or not isinstance(v, bool) or (k == "proposal" and v)
                        for k, v in data.items()):
                return inbound.MALFORMED
            if "proposal" in data:  # the host turns a phone's pick down
                self.ui.proposal = None
            if "race_shown" in data:
                self.ui.race_shown = data["race_shown"]
            if "paused" in data:
                self.ui.paused = data["paused"]
            self.broadcast()
            return {"ok": True}

        @self._handler("history")
        def on_history(data: Any) -> dict[str, Any]:
            """Host only: ``{"key": "judgements", "offset": 0, "limit": 50}``."""
            if (bad := self._refuse_non_host("history")) is not None:
                return bad
            data = data if isinstance(data, dict) else {}
            offset, limit = data.get("offset", 0), data.get("limit", HISTORY_PAGE)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (offset, limit)):
                return refusal("Неверный запрос истории.", "Malformed history request.",
                               "malformed")
            return self.history(str(data.get("key")), offset, limit)

        @sio.on("*")
        def on_unknown(event: Any, *_: Any) -> dict[str, Any]:
            meter = self._meters.get(request.sid)
            if meter is not None and not (meter.allow("unknown") and
                                          self._address_allows("unknown")):
                self.dropped["unknown"] += 1
                if meter.storming():
                    self._cut_storm()
                return TOO_FAST
            if event == MALFORMED_EVENT:
                return inbound.MALFORMED
            log.warning("unknown message %r from %s", str(event)[:40], request.sid)
            return refusal("Неизвестное сообщение.", "Unknown message.", "unknown")

    def _unseat_phones(self) -> None:
        """A new game: every phone leaves its seat and confirms (or picks) its player again,
        so no phone follows a seat number into another person's name."""
        with self._lock:
            seated = [(sid, c) for sid, c in self.clients.items()
                      if c.role == "player" and c.seat is not None]
        for sid, c in seated:
            leave_room(c.room, sid=sid, namespace="/")
            c.seat = None
            join_room(c.room, sid=sid, namespace="/")

    def _take_seat(self, client: Client, seat: int) -> None:
        leave_room(client.room)
        client.seat = seat
        join_room(client.room)
        with self._lock:
            self.ui.lobby.pop(request.sid, None)


TOO_FAST = refusal("Слишком часто.", "Too fast.", "rate_limited")


