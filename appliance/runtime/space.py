"""Room on the data partition: a space reserve the box gives back when its card is full.

A card filled to the last byte (a large package, years of game logs) used to brick the box:
SQLite cannot even open the event log without a few pages for its WAL index, the server
exited at start and systemd restarted it for ever, and nothing could free space, since
deleting a package is itself a write. So the box keeps a reserve, one file of
`reserve_size()` bytes (`DATA/space-reserve`) made while there is room. When the card is
full at start (less free than the reserve), the reserve is released: the event log opens,
the unfinished game resumes, the admin page can delete packages and old games, and the
board and the host say the card is full until there is room for the reserve again.

While the reserve is spent and cannot be made again the box counts as full (`full()`);
`keep()` makes it again once the host has freed space (the admin page calls it after every
deletion, the server at every start). While the server runs, `Watch` gives the reserve back
when the card fills up mid-evening and tells the screens when the card turns full or not.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

RESERVE = "space-reserve"
MAX_RESERVE_BYTES = 8 << 20
MIN_RESERVE_BYTES = 64 << 10

log = logging.getLogger("svoyak.space")


def free_bytes(data: str | os.PathLike[str]) -> int:
    st = os.statvfs(data)
    return st.f_bavail * st.f_frsize


def reserve_size(data: str | os.PathLike[str]) -> int:
    """A tenth of the file system, between 64 KiB and 8 MiB (a whole page multiple): on a
    card, room for hours of game events and the deletions that free space."""
    st = os.statvfs(data)
    size = min(MAX_RESERVE_BYTES, max(MIN_RESERVE_BYTES, st.f_blocks * st.f_frsize // 10))
    return size - size % 4096


def reserved(data: str | os.PathLike[str]) -> bool:
    return (Path(data) / RESERVE).is_file()


def full(data: str | os.PathLike[str]) -> bool:
    """The card counts as full: its reserve is spent and there is no room to make it
    again, or nothing is left at all. (A data directory that never had a reserve, a
    developer's, is full only when its disk is.)"""
    free = free_bytes(data)
    return free < MIN_RESERVE_BYTES or not reserved(data) and free < 2 * reserve_size(data)


def release(data: str | os.PathLike[str]) -> bool:
    """Give the reserve back to the file system. True when there was one."""
    try:
        (Path(data) / RESERVE).unlink()
    except FileNotFoundError:
        return False
    log.warning("the data partition is full: its space reserve was released")
    return True


def keep(data: str | os.PathLike[str]) -> bool:
    """Make the reserve if it is missing and the card has room for it and as much again.
    True when the reserve is there afterwards. Never raises: a card that refuses is full."""
    path = Path(data) / RESERVE
    if path.is_file():
        return True
    size = reserve_size(data)
    try:
        if free_bytes(data) < 2 * size:
            return False
        tmp = path.with_name(f".{RESERVE}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            # Blocks really taken (a sparse file would reserve nothing).
            os.posix_fallocate(fd, 0, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            path.with_name(f".{RESERVE}.tmp").unlink()
        log.warning("no space reserve on the data partition: %s", e)
        return False
    return True


def at_start(data: str | os.PathLike[str]) -> bool:
    """Before anything opens the event log: release the reserve if the card is full, else
    make it if missing. True when the box starts with its card full."""
    if free_bytes(data) < reserve_size(data):
        release(data)
    else:
        keep(data)
    return full(data)


class Watch:
    """Every `interval_s` while the server runs: a card that has filled up gives back its
    reserve (the game's next moves find room), a card with room again gets its reserve
    back, and `changed()` is called whenever the card turns full or not (the screens'
    notices). A daemon thread; `stop()` ends it."""

    def __init__(self, data: str | os.PathLike[str], changed: Callable[[], None],
                 interval_s: float = 10.0):
        self.data, self.changed, self.interval_s = Path(data), changed, interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._full: bool | None = None

    def check(self) -> bool:
        """One look; True when the card is full now."""
        try:
            if reserved(self.data) and free_bytes(self.data) < MIN_RESERVE_BYTES:
                release(self.data)
            elif not reserved(self.data):
                keep(self.data)
            now = full(self.data)
        except OSError:
            return bool(self._full)
        if self._full is not None and now != self._full:
            try:
                self.changed()
            except Exception:  # the screens' problem, not the card's
                log.exception("space watch: telling the screens failed")
        self._full = now
        return now

    def start(self) -> Watch:
        self.check()
        self._thread = threading.Thread(target=self._run, name="space-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.check()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
