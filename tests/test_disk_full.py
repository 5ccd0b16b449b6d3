"""A full memory card during a game and during a package upload: the box says so (in
Russian and English), refuses the action, and loses nothing already committed. The data
directory is a real, small tmpfs filled to the last byte (`small_disk` in conftest.py;
needs root)."""

from __future__ import annotations

import errno
import io
import os
import re
from pathlib import Path

from webui_kit import Kit, make_kit, views

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


# A real SIGame package with media files (shared/ sits beside the repository).
MEDIA_PACKAGE = Path(__file__).resolve().parents[2] / "shared/fixtures/siq/v4-media.siq"


def test_a_full_card_at_start_never_stops_the_box(small_disk, tmp_path):
    """The card filled to the last byte with a game under way, then a restart: the server
    comes up (it used to exit on SQLite's "disk I/O error" for ever), resumes the game with
    every committed event, says the card is full on the board and on the host's pages (in
    Russian and English), and the host frees space by deleting a package on the admin page,
    after which the notices go and the box has its space reserve again."""
    from webui_kit import Server

    from appliance.runtime import space
    from svoyak.serve import build

    pid = Library(small_disk).import_file(MEDIA_PACKAGE)
    box = build(small_disk, simulate=True, pins=None, demo=True)
    try:
        assert space.reserved(small_disk) and not space.full(small_disk)
        game = box.loop.current
        fc = box.app.test_client()
        fc.post("/login", data={"pin": box.services.settings.pin})
        sock = box.socketio.test_client(box.app, flask_test_client=fc, auth={"role": "host"})
        assert sock.emit("command", {"type": "announce"}, callback=True)["ok"]
        assert re.search(r'id="disk-full" role="alert" hidden>', fc.get("/board").get_data(
            as_text=True))
    finally:
        box.close()
    with Store(db_path(small_disk)) as store:
        committed = [e.to_json() for e in store.log(game)]
    assert not (small_disk / "svoyak.db-shm").exists()  # closed: the next open makes it
    filler = fill(small_disk)
    assert space.free_bytes(small_disk) == 0

    # The real server, as the unit starts it, on the full card: it answers (having given
    # back its reserve), and the same start in-process shows the rest.
    server = Server(small_disk).start()
    try:
        assert "The data partition is full" in server.output()
        assert not space.reserved(small_disk) and space.free_bytes(small_disk) > 0
    finally:
        server.stop()
    box = build(small_disk, simulate=True, pins=None, demo=True)
    try:
        assert box.loop.current == game  # resumed, not a new demo game
        log = [e.to_json() for e in box.store.log(game)]
        assert log[:len(committed)] == committed  # nothing acknowledged is lost
        assert space.full(small_disk)
        board = box.app.test_client().get("/board").get_data(as_text=True)
        assert re.search(r'id="disk-full" role="alert">', board)  # shown, not hidden
        tv = box.socketio.test_client(box.app, auth={"role": "board"})
        assert views(tv)[-1]["box"]["disk_full"] is True
        fc = box.app.test_client()
        assert fc.post("/login", data={"pin": box.services.settings.pin}).status_code == 302
        for lang, words in (("ru", "Карта памяти коробки заполнена"),
                            ("en", "memory card is full")):
            fc.get(f"/lang/{lang}")
            notices = re.findall(r'class="offline problem" role="alert">([^<]*)<',
                                 fc.get("/admin/").get_data(as_text=True))
            assert any(words in n for n in notices), (lang, notices)
        # The host frees space: the package goes, its media with it, the reserve is back.
        r = fc.post(f"/admin/packages/{pid}/delete")
        assert r.status_code == 200 and r.get_json()["ok"], r.get_data(as_text=True)[-2000:]
        assert space.reserved(small_disk) and not space.full(small_disk)
        assert re.search(r'id="disk-full" role="alert" hidden>', box.app.test_client().get(
            "/board").get_data(as_text=True))
        # The TV already showing the notice drops it (its frames say the card has room).
        assert views(tv)[-1]["box"]["disk_full"] is False
        assert not re.findall(r'class="offline problem" role="alert">([^<]*full[^<]*)<',
                              fc.get("/admin/").get_data(as_text=True))
    finally:
        box.close()
        filler.unlink()


def test_a_card_filling_up_while_the_server_runs_gives_back_its_reserve(small_disk):
    """Mid-evening the card fills up (uploads to the last byte, say): the space watch gives
    the reserve back so the game's next moves find room, and tells the screens; when the
    host has freed space, the reserve is made again and the screens are told again."""
    from appliance.runtime import space

    told: list[bool] = []
    assert space.keep(small_disk)
    watch = space.Watch(small_disk, lambda: told.append(space.full(small_disk)))
    assert watch.check() is False
    filler = fill(small_disk)
    watch.check()  # the reserve given back: room for the game, the card counts as full
    assert not space.reserved(small_disk) and space.free_bytes(small_disk) > 0
    assert space.full(small_disk) and told == [True]
    filler.unlink()
    assert watch.check() is False and space.reserved(small_disk) and told == [True, False]


def test_a_package_is_deleted_on_a_card_full_to_the_last_block(small_disk):
    """The card went on filling after the box gave back its space reserve (the booted box's
    test found it): SQLite cannot write even a deletion then, and the admin page's delete
    failed, though freeing space is what the host deletes a package for. Its own media
    go first, then its rows, in the room they left; a package sharing none keeps its own."""
    from appliance.runtime import space

    lib = Library(small_disk)
    pid = lib.import_file(MEDIA_PACKAGE)
    other = lib.import_file(DEMO)
    media = small_disk / "media"
    before = {p for p in media.rglob("*") if p.is_file()}
    assert before
    kit = make_kit(small_disk, library=lib)
    filler = fill(small_disk)
    try:
        assert space.free_bytes(small_disk) == 0
        fc, _ = host(kit)
        r = fc.post(f"/admin/packages/{pid}/delete")
        assert r.status_code == 200 and r.get_json()["ok"], r.get_data(as_text=True)[-2000:]
        assert [p.id for p in lib.list()] == [other]
        assert not [p for p in media.rglob("*") if p.is_file()]
        assert space.free_bytes(small_disk) > 0
        missing = fc.post(f"/admin/packages/{pid}/delete")
        assert missing.status_code == 404
    finally:
        kit.close()
        filler.unlink()
