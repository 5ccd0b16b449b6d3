"""The link's own tables in the box's SQLite file (beside the event log: `Store.path`),
through a connection of its own that waits on the log's lock instead of failing."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from appliance import storage


class Tables:
    def __init__(self, path: Path, schema: str):
        self.path = path
        self.lock = threading.RLock()
        self.conn = storage.connect(path, shared=True)
        with self.write() as c:
            for statement in schema.split(";"):
                if statement.strip():
                    c.execute(statement)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction: all of it is on disk when the block ends, or none of it."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self.lock:
            self.conn.close()
