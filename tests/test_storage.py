"""The storage module every writer of the card stands on (`appliance.storage`): one way to open
the box's SQLite file, one disk-full test, one durable file write. On real files: a real
SQLite file, a real full database (a page limit), a real rename."""

from __future__ import annotations

import errno
import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from appliance import storage


def test_a_writer_gets_wal_full_sync_and_the_busy_timeout(tmp_path: Path) -> None:
    conn = storage.connect(tmp_path / "box.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == storage.BUSY_TIMEOUT_MS
        assert conn.isolation_level is None  # the caller's BEGIN, not Python's
    finally:
        conn.close()


def test_a_reader_only_waits_and_a_shared_connection_crosses_threads(tmp_path: Path) -> None:
    path = tmp_path / "box.db"
    sqlite3.connect(path).close()  # an empty file, journal mode "delete"
    reader = storage.connect(path, write=False)
    try:
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert reader.execute("PRAGMA busy_timeout").fetchone()[0] == storage.BUSY_TIMEOUT_MS
        errors: list[BaseException] = []

        def use() -> None:
            try:
                reader.execute("SELECT 1")
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
        t = threading.Thread(target=use)
        t.start()
        t.join()
        assert errors and isinstance(errors[0], sqlite3.ProgrammingError)  # not shared
    finally:
        reader.close()
    shared = storage.connect(path, shared=True)
    try:
        t = threading.Thread(target=lambda: shared.execute("SELECT 1"))
        t.start()
        t.join()
    finally:
        shared.close()


def test_an_unopenable_file_and_a_damaged_one_raise_apart(tmp_path: Path) -> None:
    folder = tmp_path / "box.db"
    folder.mkdir()  # a folder where the file should be
    with pytest.raises(storage.CannotOpen):
        storage.connect(folder)
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"this is not a database" * 100)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        storage.connect(damaged)
    assert not isinstance(caught.value, storage.CannotOpen)


def test_a_full_database_and_a_full_file_system_are_disk_full(tmp_path: Path) -> None:
    conn = storage.connect(tmp_path / "box.db")
    conn.execute("CREATE TABLE t (x BLOB)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # SQLite's own "disk is full"
    with pytest.raises(sqlite3.Error) as caught:
        conn.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    conn.close()
    assert caught.value.sqlite_errorcode == sqlite3.SQLITE_FULL
    assert storage.disk_full(caught.value)
    assert storage.disk_full(OSError(errno.ENOSPC, "No space left on device"))
    # A trigger's (or a wrapper's) error that says so without SQLite's code.
    assert storage.disk_full(sqlite3.IntegrityError("database or disk is full"))
    assert not storage.disk_full(sqlite3.OperationalError("database is locked"))
    assert not storage.disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not storage.disk_full(ValueError("disk is full"))  # not a write at all


def test_a_durable_write_replaces_the_file_whole_and_only_for_the_service(
        tmp_path: Path) -> None:
    path = tmp_path / "sub" / "settings.json"
    storage.write_bytes(path, b"first")
    assert path.read_bytes() == b"first"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    storage.write_bytes(path, b"second")
    assert path.read_bytes() == b"second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    storage.write_bytes(path, b"old")
    with pytest.raises(TypeError):
        storage.write_bytes(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_damaged_file_is_kept_aside_under_the_next_free_name(tmp_path: Path) -> None:
    path = tmp_path / "secret_key"
    for n in (1, 2):
        path.write_bytes(f"bad {n}".encode())
        assert storage.keep_damaged(path) == tmp_path / f"secret_key.damaged-{n}"
        assert not path.exists()
    assert (tmp_path / "secret_key.damaged-1").read_bytes() == b"bad 1"
    assert (tmp_path / "secret_key.damaged-2").read_bytes() == b"bad 2"
