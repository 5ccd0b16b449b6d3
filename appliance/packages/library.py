"""The package library: imported packages as rows in the box's SQLite file, media on disk.

Tables (beside the event log's, in the same `DATA/svoyak.db`):
- `packages`: id, name, author, format, source file name, import time, counts, the package
  in the JSON form (`body`), whose media items name content hashes;
- `media`: hash, size, content type; files live in `DATA/media/` (see `media.MediaStore`);
- `package_media`: which package uses which media (a file is deleted with its last user).

Import is atomic: the file is parsed and its media streamed to a staging directory first;
rows are inserted and files moved into place in one transaction; on any failure nothing
remains, neither rows nor files. The web UI's admin page calls the functions at the end of
this module (`import_file`, `list_packages`, `get_package`, `delete_package`, `media_path`).
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from appliance import storage
from appliance.packages import bounds, exchange, formats, jsonform
from appliance.packages.archive import Limits, PackageError
from appliance.packages.errors import BilingualError
from appliance.packages.loaded import Loaded
from appliance.packages.media import MediaStore, is_hash
from appliance.packages.model import Kind, Package

MEDIA_DIR = "media"


_INFO_COLUMNS = ("id, name, author, format, source, imported, rounds, themes, questions, "
                 "media_count, media_bytes, warnings")


class LibraryError(BilingualError):
    """A library operation failed (unknown package id, unreadable database); Russian and
    English messages and a code, like `PackageError`."""

    def __init__(self, message_ru: str, message_en: str, code: str = "library"):
        super().__init__(message_ru, message_en, code)


def no_package(package_id: int) -> LibraryError:
    return LibraryError(f"в библиотеке нет пакета {package_id}",
                        f"no package {package_id} in the library", "no_package")


@dataclass(frozen=True)
class PackageInfo:
    """One row of the library: what a list of packages shows."""

    id: int
    name: str
    author: str
    format: str
    source: str
    imported: str  # ISO 8601 UTC
    rounds: int
    themes: int
    questions: int
    media_count: int
    media_bytes: int
    warnings: int

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def counts(package: Package) -> dict[str, int]:
    themes = package.all_themes()
    return {
        "rounds": len(package.rounds),
        "themes": len(themes),
        "questions": sum(1 for t in themes for q in t.questions if q.kind != Kind.EMPTY),
    }


class Library:
    """Packages of one data directory. Cheap to create; opens a connection per call."""

    def __init__(self, data: str | os.PathLike[str] | None = None, *,
                 limits: Limits | None = None):
        self.data = storage.data_dir(data)
        self.db_path = storage.db_path(self.data)  # one file for the whole box
        self.media = MediaStore(self.data / MEDIA_DIR)
        self.limits = limits or Limits.from_env()

    # -- connection ----------------------------------------------------------------------

    @contextmanager
    def _connect(self, write: bool) -> Iterator[sqlite3.Connection]:
        if write:
            self.data.mkdir(parents=True, exist_ok=True)
        try:
            conn = storage.connect(self.db_path, write=write)
        except storage.CannotOpen as e:
            raise LibraryError(f"{self.db_path.name}: не удаётся открыть базу данных",
                               f"{self.db_path.name}: cannot open the database",
                               "database") from e
        except sqlite3.DatabaseError as e:
            raise self._failed(e) from e
        try:
            if write:
                self._schema(conn)
            yield conn
        except sqlite3.DatabaseError as e:
            raise self._failed(e) from e
        finally:
            conn.close()

    def _failed(self, e: sqlite3.DatabaseError) -> LibraryError:
        """The database failed: a full card says that nothing was changed."""
        full = storage.disk_full(e)
        return LibraryError(
            f"{self.db_path.name}: " + ("нет места на карте памяти: ничего не изменено"
                                        if full else "ошибка базы данных"),
            f"{self.db_path.name}: " + ("disk full: nothing was changed" if full
                                        else f"database error ({e})"),
            "disk_full" if full else "database")

    @staticmethod
    def _schema(conn: sqlite3.Connection) -> None:
        db = sqlite_utils.Database(conn)
        db.table("packages").create(
            {"id": int, "name": str, "author": str, "format": str, "source": str,
             "imported": str, "rounds": int, "themes": int, "questions": int,
             "media_count": int, "media_bytes": int, "warnings": int, "body": str},
            pk="id", not_null={"name", "body"}, if_not_exists=True,
        )
        db.table("media").create({"hash": str, "size": int, "mime": str}, pk="hash",
                           if_not_exists=True)
        db.table("package_media").create({"package": int, "hash": str}, pk=("package", "hash"),
                                   if_not_exists=True)
        db.table("package_media").create_index(["hash"], if_not_exists=True)

    def _exists(self) -> bool:
        if not self.db_path.is_file():
            return False
        with self._connect(write=False) as conn:
            row = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'packages'"
            ).fetchone()
        return row is not None

    # -- import --------------------------------------------------------------------------

    def import_file(self, path: str | os.PathLike[str]) -> int:
        """Import a package file (.siq, .txt, our .zip or .json); returns the new id.

        Raises PackageError (bad or hostile file; nothing written)."""
        with formats.load(path, self.limits) as loaded:
            return self.import_loaded(loaded)

    def import_loaded(self, loaded: Loaded) -> int:
        bounds.check(loaded.package, loaded.source.name)
        package = copy.deepcopy(loaded.package)
        hashes: dict[str, str] = {}
        staged = self.media.stage() if loaded.media else None
        try:
            mimes: dict[str, str] = {}
            sizes: dict[str, int] = {}
            for logical in loaded.media:
                assert staged is not None  # staged whenever there is media
                digest, size = self.media.write(staged, loaded.chunks(logical))
                if loaded.format == "svoyak" and digest != logical:
                    raise PackageError(f"{loaded.source.name}: медиафайл {logical[:12]}… не "
                                       "совпадает со своим содержимым (файл повреждён)",
                                       f"{loaded.source.name}: media {logical[:12]}… does not "
                                       "match its content (the file is damaged)", "damaged")
                hashes[logical] = digest
                mimes[digest] = loaded.mime.get(logical, "application/octet-stream")
                sizes[digest] = size
            for t in package.all_themes():
                for q in t.questions:
                    for item in q.content + q.answer_content:
                        if item.is_media:
                            item.value = hashes[item.value]
            return self._insert(package, loaded, staged, mimes, sizes)
        finally:
            if staged is not None:
                self.media.discard(staged)

    def _insert(self, package: Package, loaded: Loaded, staged: Any,
                mimes: dict[str, str], sizes: dict[str, int]) -> int:
        row = {
            "name": package.name,
            "author": package.author,
            "format": loaded.format,
            "source": loaded.source.name,
            "imported": datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="seconds"),
            **counts(package),
            "media_count": len(sizes),
            "media_bytes": sum(sizes.values()),
            "warnings": len(package.warnings),
            "body": json.dumps(jsonform.to_dict(package), ensure_ascii=False,
                               separators=(",", ":")),
        }
        with self._connect(write=True) as conn:
            conn.execute("BEGIN IMMEDIATE")
            created = []
            try:
                cols = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                cur = conn.execute(f"INSERT INTO packages ({cols}) VALUES ({marks})",
                                   list(row.values()))
                package_id = int(cur.lastrowid or 0)
                for digest, size in sizes.items():
                    conn.execute("INSERT OR IGNORE INTO media (hash, size, mime) VALUES (?, ?, ?)",
                                 (digest, size, mimes[digest]))
                    conn.execute("INSERT INTO package_media (package, hash) VALUES (?, ?)",
                                 (package_id, digest))
                if staged is not None:
                    created = self.media.publish(staged)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                self.media.remove(created)
                raise
        return package_id

    # -- queries -------------------------------------------------------------------------

    def list(self) -> list[PackageInfo]:
        if not self._exists():
            return []
        with self._connect(write=False) as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(f"SELECT {_INFO_COLUMNS} FROM packages ORDER BY id").fetchall()
        return [PackageInfo(**dict(r)) for r in rows]

    def info(self, package_id: int) -> PackageInfo:
        row = None
        if self._exists():
            with self._connect(write=False) as conn:
                conn.row_factory = sqlite3.Row
                row = conn.execute(f"SELECT {_INFO_COLUMNS} FROM packages WHERE id = ?",
                                   (package_id,)).fetchone()
        if row is None:
            raise no_package(package_id)
        return PackageInfo(**dict(row))

    def get(self, package_id: int) -> Package:
        """The package as imported; media item values are content hashes."""
        row = None
        if self._exists():
            with self._connect(write=False) as conn:
                row = conn.execute("SELECT body FROM packages WHERE id = ?",
                                   (package_id,)).fetchone()
        if row is None:
            raise no_package(package_id)
        return jsonform.loads(row[0])

    def delete(self, package_id: int) -> None:
        """Remove a package and every media file no other package uses.

        On a card full to the last block SQLite cannot write even a deletion (its journal
        needs room); the host deletes a package precisely to free space, so then the
        package's own media files go first (found by reading alone), and the rows after,
        in the room they left. Should that fail too, the package stays listed without its
        media, and deleting it again finishes the job."""
        if not self._exists():
            raise no_package(package_id)
        try:
            orphans = self._delete_rows(package_id)
        except LibraryError as e:
            if e.code != "disk_full":
                raise
            self.media.delete(self._own_media(package_id))
            orphans = self._delete_rows(package_id)
        self.media.delete(orphans)

    def _own_media(self, package_id: int) -> tuple[str, ...]:
        """The media hashes of a package that no other package uses."""
        with self._connect(write=False) as conn:
            return tuple(r[0] for r in conn.execute(
                "SELECT DISTINCT hash FROM package_media WHERE package = ? AND hash NOT IN "
                "(SELECT hash FROM package_media WHERE package != ?)",
                (package_id, package_id)))

    def _delete_rows(self, package_id: int) -> tuple[str, ...]:
        """Delete the package's rows in one transaction; the media hashes it left unused."""
        with self._connect(write=True) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT 1 FROM packages WHERE id = ?",
                                (package_id,)).fetchone() is None:
                    raise no_package(package_id)
                used = [r[0] for r in conn.execute(
                    "SELECT hash FROM package_media WHERE package = ?", (package_id,))]
                conn.execute("DELETE FROM package_media WHERE package = ?", (package_id,))
                conn.execute("DELETE FROM packages WHERE id = ?", (package_id,))
                orphans = [h for h in used if conn.execute(
                    "SELECT 1 FROM package_media WHERE hash = ? LIMIT 1", (h,)).fetchone() is None]
                conn.executemany("DELETE FROM media WHERE hash = ?", [(h,) for h in orphans])
                conn.execute("COMMIT")
            except BaseException:  # (a database error becomes the LibraryError it says)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return tuple(orphans)

    def media_path(self, digest: str) -> Path | None:
        """The file of a media hash (as found in a package's items), or None if unknown."""
        if not is_hash(digest):
            return None
        path = self.media.path(digest)
        return path if path.is_file() else None

    def media_type(self, digest: str) -> str | None:
        """The content type to serve a media hash with, or None if unknown."""
        if not is_hash(digest) or not self._exists():
            return None
        with self._connect(write=False) as conn:
            row = conn.execute("SELECT mime FROM media WHERE hash = ?", (digest,)).fetchone()
        return row[0] if row else None

    def export(self, package_id: int, out: str | os.PathLike[str]) -> Path:
        """Write a package and its media as our exchange zip (imports back equal)."""
        return exchange.export(self.get(package_id), Path(out), self.media_path,
                               self.media_type)

    def sweep(self) -> None:
        """Clean what a killed import left: staging directories and unreferenced files."""
        self.media.sweep_staging()
        if not self.media.root.is_dir():
            return
        known: set[str] = set()
        if self._exists():
            with self._connect(write=False) as conn:
                known = {r[0] for r in conn.execute("SELECT hash FROM media")}
        self.media.delete(p.name for p in self.media.root.glob("??/*") if p.name not in known)


# -- the small API for other areas (web UI admin page, game setup) ----------------------


def import_file(path: str | os.PathLike[str], data: str | os.PathLike[str] | None = None) -> int:
    """Import a package file into the library of `data`; returns the package id."""
    return Library(data).import_file(path)


def list_packages(data: str | os.PathLike[str] | None = None) -> list[PackageInfo]:
    return Library(data).list()


def get_package(package_id: int, data: str | os.PathLike[str] | None = None) -> Package:
    return Library(data).get(package_id)


def delete_package(package_id: int, data: str | os.PathLike[str] | None = None) -> None:
    Library(data).delete(package_id)


def media_path(digest: str, data: str | os.PathLike[str] | None = None) -> Path | None:
    return Library(data).media_path(digest)


def media_type(digest: str, data: str | os.PathLike[str] | None = None) -> str | None:
    return Library(data).media_type(digest)
