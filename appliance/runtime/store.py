"""The event log: one SQLite file that is the truth about every game.

Two tables:

- ``games``  (id, rules, setup JSON, created wall time, status ``running``/``finished``,
  finished wall time, final summary JSON);
- ``events`` (game, seq, t_ns on the game's monotonic clock, wall time, type, JSON payload),
  primary key ``(game, seq)``, append-only;
- ``clocks`` (game, t_ns): the game clock the box last noted while a deadline was pending
  (`mark_clock`), so a game resumed after a power cut goes on from the moment the box went
  off, not from its last event: a running 7 s window keeps the time it had left.

A command's events are appended in one transaction: all of them or none. The file is opened
with WAL and ``synchronous=FULL``, so once `append` returns the events survive a power cut;
the loop acknowledges a command to a screen only after that. The one exception is a
deadline's decision (``append(..., durable=False)``): it is committed without an fsync of its
own, the screens are told, and then the loop writes it out (`sync`) before it waits for
anything else. It follows from the log already on disk and the deadline alone, so a power
cut in that gap loses nothing a resumed game cannot decide again: a settle window's answerer
is decided again identically; a window that had run out runs again for the time it had
left, as after a cut just before it closed. In WAL every fsync writes out the whole log
before it, so a later durable commit covers it too, and a cut can only drop the newest
such decisions, never one a surviving command followed (the file stays consistent either
way: the WAL's frames carry checksums and recovery stops at the first bad one).

A corrupt or truncated file raises `StoreCorrupt` naming the path; it is never recreated,
because an empty log would silently lose the games in it. Other areas (the package library,
tournaments) add their own tables to the same file through their own modules: `Store.path`
is public, and every connection waits on a lock (``busy_timeout``) instead of failing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from appliance import storage
from appliance.rules.protocol import Event

# Where the log lives, from the storage module (imported from here by much of the box).
from appliance.storage import DB_NAME as DB_NAME
from appliance.storage import data_dir as data_dir
from appliance.storage import db_path as db_path

CACHE_KIB = 512  # the event log connection's SQLite page cache
RUNNING = "running"
FINISHED = "finished"
# SQLite's synchronous settings: an fsync at every commit, or none of its own (see `append`)
SYNC_FULL = "FULL"
SYNC_NORMAL = "NORMAL"
_MAGIC = b"SQLite format 3\x00"


# Another area's rows written in the transaction that creates a game: (connection, game).
Also = Callable[[sqlite3.Connection, int], None]


class StoreError(Exception):
    """The event log cannot be used; the message names the file."""


class StoreCorrupt(StoreError):
    """The file is not a readable SQLite database (garbage, truncated, damaged)."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    id: int
    rules: str
    setup: Mapping[str, Any]
    created: float  # wall time, seconds since the epoch
    status: str
    finished: float | None = None
    summary: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"game": self.id, "rules": self.rules, "setup": self.setup,
                "created": iso(self.created), "status": self.status,
                "finished": None if self.finished is None else iso(self.finished),
                "summary": self.summary}


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """An event as stored: with its game, sequence number and wall time."""

    game: int
    seq: int
    wall: float
    event: Event

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "t_ns": self.event.t_ns, "wall": iso(self.wall),
                "type": self.event.type, "payload": dict(self.event.data)}


def iso(wall: float) -> str:
    """Wall time as ISO 8601 UTC with milliseconds, for protocols people read."""
    return datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds")


def encode(data: Mapping[str, Any]) -> str:
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as e:
        raise StoreError(f"event payload is not plain JSON: {e}") from e


def normalize(events: Sequence[Event]) -> list[Event]:
    """The events exactly as they will read back from the log (tuples become lists, keys
    strings), so the live state and a replayed state are folded from equal values."""
    return [Event(e.type, int(e.t_ns), json.loads(encode(e.data))) for e in events]


class Store:
    """The event log in one SQLite file. Safe to share between threads (calls serialize on a
    lock); the game loop is its only writer of games and events."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True,
                 wall: Callable[[], float] = time.time):
        self.path = Path(path)
        self._wall = wall
        self._lock = threading.RLock()
        self._level = SYNC_FULL  # the connection's synchronous setting
        self._unsynced = False  # see `sync`
        if not self.path.exists() and not create:
            raise StoreError(f"no event log at {self.path}")
        _check_header(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = storage.connect(self.path, shared=True)
            try:
                conn.execute("PRAGMA foreign_keys = ON")
                # The log is appended to and read back once per game: a page cache at
                # SQLite's default (2 MB) only fills with pages written once, which over an
                # evening looks like memory growing (bench/soak.py). A small one holds the
                # pages being written.
                conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
                check = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
                if check != ["ok"]:
                    raise StoreCorrupt(f"the event log {self.path} is damaged: "
                                       f"{check[0][:300]}")
                self.db = sqlite_utils.Database(conn)
                self._create_schema()
            except BaseException:
                conn.close()
                raise
        except storage.CannotOpen as e:
            raise StoreError(f"cannot open the event log {self.path}: {e}") from e
        except storage.NotWal as e:
            raise StoreError(f"{self.path}: cannot switch the event log to WAL ({e.mode})") from e
        except sqlite3.DatabaseError as e:
            raise StoreCorrupt(f"the event log {self.path} is not a readable SQLite "
                               f"database ({e}); it was left as it is") from e

    # -- life cycle ------------------------------------------------------------------------
    def _create_schema(self) -> None:
        with self._write():
            self.db.table("games").create(
                {"id": int, "rules": str, "setup": str, "created": float, "status": str,
                 "finished": float, "summary": str},
                pk="id", not_null={"rules", "setup", "created", "status"}, if_not_exists=True,
            )
            self.db.table("events").create(
                {"game": int, "seq": int, "t_ns": int, "wall": float, "type": str,
                 "payload": str},
                pk=("game", "seq"), not_null={"t_ns", "wall", "type", "payload"},
                foreign_keys=[("game", "games", "id")], if_not_exists=True,
            )
            self.db.table("games").create_index(["status"], if_not_exists=True)
            self.db.table("clocks").create(
                {"game": int, "t_ns": int}, pk="game", not_null={"t_ns"},
                foreign_keys=[("game", "games", "id")], if_not_exists=True,
            )

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front so a reader never has to upgrade.
        `durable` False: committed without its own fsync (see the module docstring). The
        setting can change only between transactions, so each transaction sets the one it
        needs before it begins: a transaction that could not be closed never leaves the next
        durable one without its fsync."""
        with self._lock:
            conn = self.db.conn
            level = SYNC_FULL if durable else SYNC_NORMAL
            if self._level != level:
                conn.execute(f"PRAGMA synchronous = {level}")
                self._level = level
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # SQLite rolls back a failed COMMIT itself
                    conn.execute("ROLLBACK")
                raise
            self._unsynced = not durable  # a durable commit writes out the WAL before it

    @property
    def unsynced(self) -> bool:
        """Whether a deadline's decision was committed and is not yet on disk."""
        return self._unsynced

    def sync(self) -> None:
        """Write out what was committed without an fsync (a deadline's decision): the loop
        calls this as soon as it has told the screens, and whatever sends the log off the
        box calls it first, so nothing leaves the box that a power cut could take back. A
        durable commit does the same. One fdatasync of the WAL, the very call SQLite makes
        at a durable commit (Linux writes out a file's pages whichever descriptor is used)."""
        with self._lock:
            if not self._unsynced:
                return
            try:
                fd = os.open(f"{self.path}-wal", os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:  # checkpointed and removed: already in the database
                self._unsynced = False
                return
            try:
                os.fdatasync(fd)
            finally:
                os.close(fd)
            self._unsynced = False

    # -- writes ----------------------------------------------------------------------------
    def create_game(self, rules: str, setup: Mapping[str, Any], *,
                    linked: Callable[[int], tuple[int, Sequence[Event]]] | None = None,
                    also: Also | None = None) -> int:
        """A new running game. `linked`, if given, is called inside the same transaction
        with the new game's number and returns (another game, its events): those events are
        appended in that transaction, so a power cut leaves both or neither (a bracket
        battle's game and the tournament's ``battle_started``). `also(conn, game)` writes
        another area's own rows in that transaction (a room box's outbox row for the battle
        it starts). If either raises, nothing is written."""
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO games (rules, setup, created, status) VALUES (?, ?, ?, ?)",
                (rules, encode(setup), self._wall(), RUNNING))
            game = int(cur.lastrowid or 0)
            if linked is not None:
                other, events = linked(game)
                self._append_in(conn, other, events)
            if also is not None:
                also(conn, game)
            return game

    def append(self, game: int, events: Sequence[Event], *, durable: bool = True) -> list[int]:
        """Append one command's events in one transaction; returns their sequence numbers.
        When this returns, the events are on disk; with `durable` False (a deadline's
        decision, re-derivable from the log before it) they are in the log, and on disk
        after `sync` or the next durable commit (see the module docstring)."""
        if not events:
            return []
        with self._write(durable) as conn:
            return self._append_in(conn, game, events)

    def _append_in(self, conn: sqlite3.Connection, game: int,
                   events: Sequence[Event]) -> list[int]:
        """`append` inside a write transaction already open on `conn`."""
        rows = [(e.type, int(e.t_ns), encode(e.data)) for e in events]
        wall = self._wall()
        status = conn.execute("SELECT status FROM games WHERE id = ?", (game,)).fetchone()
        if status is None:
            raise StoreError(f"{self.path}: no game {game}")
        if status[0] != RUNNING:
            raise StoreError(f"{self.path}: game {game} is {status[0]}")
        last = conn.execute("SELECT coalesce(max(seq), 0) FROM events WHERE game = ?",
                            (game,)).fetchone()[0]
        seqs = list(range(last + 1, last + 1 + len(rows)))
        conn.executemany(
            "INSERT INTO events (game, seq, t_ns, wall, type, payload) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(game, s, t, wall, ty, p) for s, (ty, t, p) in zip(seqs, rows, strict=True)])
        return seqs

    def mark_clock(self, game: int, t_ns: int) -> None:
        """Note that the box was on at game time `t_ns` (the loop does while a deadline is
        pending). Committed without an fsync of its own, like a deadline's decision: the loop
        writes it out (`sync`) before it waits again, so a power cut loses at most the
        newest mark, and the resumed game's clock goes on from the one before."""
        with self._write(durable=False) as conn:
            conn.execute("INSERT INTO clocks (game, t_ns) VALUES (?, ?) ON CONFLICT (game) "
                         "DO UPDATE SET t_ns = max(t_ns, excluded.t_ns)", (game, int(t_ns)))

    def clock_mark(self, game: int) -> int | None:
        """The last game time `mark_clock` noted for `game`, or None."""
        with self._lock:
            row = self.db.conn.execute("SELECT t_ns FROM clocks WHERE game = ?",
                                       (game,)).fetchone()
        return None if row is None else int(row[0])

    def finish(self, game: int, summary: Mapping[str, Any] | None = None) -> None:
        """Close a game: it is no longer resumed at start and takes no more events."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE games SET status = ?, finished = ?, summary = ? "
                "WHERE id = ? AND status = ?",
                (FINISHED, self._wall(), None if summary is None else encode(summary),
                 game, RUNNING))
            if cur.rowcount != 1:
                raise StoreError(f"{self.path}: no running game {game}")

    # -- reads -----------------------------------------------------------------------------
    def game(self, game: int) -> GameRecord | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM games WHERE id = ?", [game]))
        return _game(rows[0]) if rows else None

    def games(self, status: str | None = None) -> list[GameRecord]:
        sql, params = "SELECT * FROM games", []
        if status is not None:
            sql, params = sql + " WHERE status = ?", [status]
        with self._lock:
            return [_game(r) for r in self.db.query(sql + " ORDER BY id", params)]

    def unfinished(self) -> list[GameRecord]:
        """Games the box must resume, oldest first."""
        return self.games(RUNNING)

    def events(self, game: int, after: int = 0) -> list[Event]:
        """A game's events in order, ready to fold."""
        loads = json.loads
        with self._lock:
            rows = self.db.conn.execute(
                "SELECT type, t_ns, payload FROM events WHERE game = ? AND seq > ? ORDER BY seq",
                (game, after)).fetchall()
        return [Event(ty, t, loads(p)) for ty, t, p in rows]

    def log(self, game: int) -> list[LoggedEvent]:
        """A game's protocol: every event with its sequence number and wall time."""
        with self._lock:
            rows = self.db.conn.execute(
                "SELECT seq, wall, type, t_ns, payload FROM events WHERE game = ? ORDER BY seq",
                (game,)).fetchall()
        return [LoggedEvent(game, s, w, Event(ty, t, json.loads(p))) for s, w, ty, t, p in rows]

    def count(self, game: int) -> int:
        with self._lock:
            return int(self.db.conn.execute(
                "SELECT count(*) FROM events WHERE game = ?", (game,)).fetchone()[0])

    def integrity(self) -> list[str]:
        """``PRAGMA integrity_check``: ``["ok"]`` for a sound file."""
        with self._lock:
            return [r[0] for r in self.db.conn.execute("PRAGMA integrity_check").fetchall()]


def _game(row: Mapping[str, Any]) -> GameRecord:
    return GameRecord(
        id=row["id"], rules=row["rules"], setup=json.loads(row["setup"]),
        created=row["created"], status=row["status"], finished=row["finished"],
        summary=None if row["summary"] is None else json.loads(row["summary"]),
    )


def _check_header(path: Path) -> None:
    """Refuse a file that is plainly not SQLite before SQLite gets to touch it. An empty file
    is a log that was never written (SQLite creates it empty on first open)."""
    try:
        with path.open("rb") as f:
            head = f.read(len(_MAGIC))
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreError(f"cannot read the event log {path}: {e}") from e
    if head and head != _MAGIC:
        raise StoreCorrupt(f"the event log {path} is not an SQLite database "
                           f"(it starts with {head[:16]!r}); it was left as it is")
