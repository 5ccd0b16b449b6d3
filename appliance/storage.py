"""How the box keeps things on its memory card, in one place at the bottom of `appliance/`
(it imports nothing of ours, so the rules' neighbours, the runtime, the adapters and the
package library can all stand on it).

- **Where**: `data_dir` and `db_path`: the data directory and the one SQLite file of the box
  (`svoyak.db`), shared by the event log, the package library and the rooms link.
- **SQLite**: `connect` opens that file the way every writer must: autocommit (each writer
  opens its own transactions), waiting up to `BUSY_TIMEOUT_MS` for the other writer's lock
  instead of failing, and for a writer WAL with ``synchronous=FULL``, so a commit that
  returned survives a power cut.
- **A full card**: `disk_full` says whether an error means there was no room to write, for
  SQLite and the file system alike, so every writer words it the same way.
- **Small files that must survive a power cut whole** (settings, secrets, the rooms role):
  `write_bytes` writes a temporary file beside the target, fsyncs it, renames it over the
  target and fsyncs the directory so the rename itself is on disk. A reader sees the old
  file or the new one, never half of one. `keep_damaged` moves a damaged file aside.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from pathlib import Path

DB_NAME = "svoyak.db"
DATA_ENV = "SVOYAK_DATA"
BUSY_TIMEOUT_MS = 5000  # how long a writer waits for another writer's lock on the file


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The box's data directory: `explicit`, else $SVOYAK_DATA, else ./data."""
    return Path(explicit or os.environ.get(DATA_ENV) or "data")


def db_path(data: str | os.PathLike[str] | None = None) -> Path:
    """Where the box's SQLite file lives inside a data directory."""
    return data_dir(data) / DB_NAME


# -- SQLite ---------------------------------------------------------------------------------
class CannotOpen(sqlite3.OperationalError):
    """SQLite could not open the file at all (a folder in its place, no permission); an
    `sqlite3.OperationalError`, so code that catches SQLite's errors still catches it."""


class NotWal(sqlite3.OperationalError):
    """The file would not switch to WAL (`mode` is the journal mode SQLite kept)."""

    def __init__(self, path: str | os.PathLike[str], mode: object):
        super().__init__(f"{path}: cannot switch to WAL ({mode})")
        self.mode = mode


def connect(path: str | os.PathLike[str], *, shared: bool = False,
            write: bool = True) -> sqlite3.Connection:
    """A connection to the SQLite file at `path` with the box's settings: autocommit
    (``isolation_level=None``: transactions are the caller's ``BEGIN``), a busy timeout of
    `BUSY_TIMEOUT_MS`, and, to `write`, WAL with ``synchronous=FULL``. `shared`: used from
    more than one thread (the caller serializes the calls on a lock of its own).

    Raises `CannotOpen` if the file cannot be opened, `NotWal` if it will not switch to
    WAL, and SQLite's own error (``file is not a database``…) for a damaged file; the
    connection is closed on any failure."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=not shared,
                               timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as e:
        raise CannotOpen(str(e)) from e
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if write:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise NotWal(path, mode)
            conn.execute("PRAGMA synchronous = FULL")
    except BaseException:
        conn.close()
        raise
    return conn


def disk_full(e: BaseException) -> bool:
    """True when `e` says there was no room to write: SQLite's "database or disk is full"
    (by its code, or by its words where a trigger or a wrapper raised it without the code)
    or a file write that found no space (``ENOSPC``)."""
    if isinstance(e, sqlite3.Error):
        words = str(e).lower()
        return (getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
                or "disk full" in words or "disk is full" in words)
    return isinstance(e, OSError) and e.errno == errno.ENOSPC


# -- durable small files ---------------------------------------------------------------------
def write_bytes(path: str | os.PathLike[str], data: bytes, mode: int = 0o600) -> None:
    """Replace the file at `path` with `data`, whole or not at all, even across a power cut
    (see the module docstring). A new file gets `mode` (readable by the service only, by
    default: settings and secrets)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Put a directory's entries (a rename, a new file) on disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def keep_damaged(path: str | os.PathLike[str]) -> Path:
    """Move a damaged file aside (`NAME.damaged-N`) so a fresh one can take its place and
    the old bytes stay for whoever wants to look at them."""
    path = Path(path)
    n = 1
    while (target := path.with_name(f"{path.name}.damaged-{n}")).exists():
        n += 1
    os.replace(path, target)
    fsync_dir(path.parent)
    return target
