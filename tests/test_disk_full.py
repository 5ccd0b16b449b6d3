"""A full memory card during a game and during a package upload: the box says so (in
Russian and English), refuses the action, and loses nothing already committed. The data
directory is a real, small tmpfs filled to the last byte (`small_disk` in conftest.py;
needs root)."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

from webui_kit import Kit, make_kit

from appliance.packages.library import Library
from appliance.runtime.store import Store, db_path

DEMO = Path(__file__).resolve().parent.parent / "appliance/data/demo-sport.json"


def fill(disk: Path) -> Path:
    """Write until the file system refuses: the next byte anyone writes finds no space."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as e:
                assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def host(kit: Kit):  # type: ignore[no-untyped-def]
    fc = kit.app.test_client()
    fc.post("/login", data={"pin": kit.services.settings.pin})
    return fc, kit.socketio.test_client(kit.app, flask_test_client=fc, auth={"role": "host"})


def test_disk_full_in_a_game_and_an_upload_is_reported_and_loses_nothing(small_disk):
    kit = make_kit(small_disk, library=Library(small_disk))
    try:
        game = kit.games.start("battle", ["Анна", "Борис", "Вера"], "demo:battle")
        fc, sock = host(kit)
        assert sock.emit("command", {"type": "announce"}, callback=True)["ok"]
        before_full = [e.to_json() for e in kit.store.log(game)]
        state = kit.loop.snapshot()[1]
        filler = fill(small_disk)

        # Game actions find no space: refused with the reason; nothing half-done.
        board = kit.socketio.test_client(kit.app, auth={"role": "board"})
        res: dict = {"ok": True}
        for seat in [0, 1, 2] * 5:  # SQLite may still fit a page or two: keep playing
            res = board.emit("press", {"player": seat}, callback=True)
            if res.get("ok"):
                res = sock.emit("command", {"type": "judge", "verdict": "wrong"},
                                callback=True)
            if not res.get("ok") and res["refused"]["code"] == "disk_full":
                break
        assert res["ok"] is False and res["refused"]["code"] == "disk_full", res
        assert "заполнена" in res["refused"]["ru"] and "full" in res["refused"]["en"]
        kept = kit.loop.snapshot()[1]

        # An upload finds no space: 507, the message, no package added.
        before = kit.services.library.list()
        r = fc.post("/admin/packages", data={"file": (io.BytesIO(DEMO.read_bytes() * 40),
                                                      "big.json")},
                    content_type="multipart/form-data")
        assert r.status_code == 507, r.get_data(as_text=True)
        assert "full" in r.get_json()["error"] or "заполнена" in r.get_json()["error"]
        assert kit.services.library.list() == before
        assert not any((small_disk / "tmp").iterdir())  # the staged copy is gone

        # Space again: the game goes on from the state it had.
        assert kit.loop.snapshot()[1] == kept
        filler.unlink()
        assert sock.emit("command", {"type": "announce"}, callback=True) is not None
        assert board.emit("press", {"player": 0}, callback=True)["ok"]
        committed = [e.to_json() for e in kit.store.log(game)]
        assert committed[:len(before_full)] == before_full
        del state
    finally:
        kit.close()
    again = Store(db_path(small_disk))
    try:
        log = [e.to_json() for e in again.log(game)]
        assert log[:len(committed)] == committed  # nothing committed was lost
    finally:
        again.close()
