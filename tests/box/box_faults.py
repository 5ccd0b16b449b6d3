"""Faults a club's box meets, on a box of the test's own: the plug pulled in the middle of a
game (QEMU killed: nothing the guest had not flushed survives) and the box booted again; the
second boot of a card; the data partition full to the last block."""

from __future__ import annotations

import io
import json
import os
import re
import time
import zipfile
from typing import Any

from club import Host, Screen, phase
from report import record
from vm import Box

BOOT_TIMEOUT = 900
IDENTITY = ("cat /var/lib/svoyak/box.json; echo; "
            "cat /etc/NetworkManager/system-connections/svoyak-hotspot.nmconnection; "
            "cat /etc/machine-id")


def boot(box: Box, label: str) -> None:
    box.start()
    seconds, _ = box.wait_board(BOOT_TIMEOUT)
    record(f"box_faults.{label}_board_http_s", round(seconds, 1))


def settings(box: Box) -> dict[str, Any]:
    return dict(json.loads(box.sh("cat /var/lib/svoyak/settings.json")))


def test_pulled_plug_mid_game_then_the_second_boot_resumes_and_keeps_the_box(
        own_box: Box) -> None:
    box = own_box
    boot(box, "first")
    identity = box.sh(IDENTITY)
    pin = box.pin()
    host = Host(box.base_url(), pin)
    try:
        host.send("new_game", {"rules": "tv", "players": ["Анна", "Борис", "Вера"],
                               "package": "demo:tv"})
        host.act("pick_chooser", player=1)
        host.act("choose")
        before = host.wait(lambda v: phase(v) == "reading", 30, "the question")["view"]
        host.act("set_score", player=2, score=700)
        host.wait(lambda v: v["view"]["players"][2]["score"] == 700, 30, "the score")
    finally:
        host.close()
    # An acknowledged command is on the card: the plug goes now, with no shutdown at all.
    box.kill()
    boot(box, "after_power_cut")
    assert box.sh(IDENTITY) == identity  # the same Wi-Fi, password and machine identity
    assert box.pin() == pin
    host = Host(box.base_url(), pin)
    try:
        v = host.wait(lambda v: v.get("game") is not None, 60, "the game back")["view"]
        assert v["phase"] == "reading", v["phase"]
        assert v["question"]["theme"] == before["question"]["theme"]
        assert v["question"]["value"] == before["question"]["value"]
        assert [p["score"] for p in v["players"]] == [0, 0, 700]
        assert v["chooser"] == 1
    finally:
        host.close()
    journal = box.sh("journalctl --list-boots --no-pager | wc -l").strip()
    record("box_faults.journal_boots_kept", int(journal))  # volatile: only this boot


def big_package(size_mib: int = 24) -> bytes:
    """A SIGame package (.siq) whose video is size_mib of incompressible bytes: what the
    host deletes on the admin page to free the card (more than the space reserve's twice,
    so the reserve can be made again)."""
    xml = ('<?xml version="1.0" encoding="utf-8"?>\n<package name="Большой пакет" '
           'version="5"><rounds><round name="Р"><themes><theme name="Т"><questions>'
           '<question price="100"><params><param name="question" type="content">'
           '<item type="video" isRef="True">big.mp4</item></param></params><right>'
           '<answer>а</answer></right></question></questions></theme></themes></round>'
           '</rounds></package>\n')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("content.xml", xml, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("Video/big.mp4", os.urandom(size_mib << 20), compress_type=zipfile.ZIP_STORED)
    return out.getvalue()


def notice_shown(html: str) -> bool:
    """The board page's full-card notice, shown (it is always in the page, hidden when the
    card has room)."""
    found = re.search(r'<div[^>]*id="disk-full"[^>]*>', html)
    assert found, "the board page has no full-card notice at all"
    return " hidden" not in found.group(0)


def fill(box: Box) -> int:
    """Fill the data partition to its last block as root; the bytes left."""
    box.sh("n=$(ls /var/lib/svoyak/filler* 2>/dev/null | wc -l); "
           "fallocate -l $(df --output=avail -B1 /var/lib/svoyak | tail -1) "
           "/var/lib/svoyak/filler$n 2>/dev/null || true; "
           "dd if=/dev/zero of=/var/lib/svoyak/filler$n.tail bs=4k status=none 2>/dev/null "
           "|| true; sync", timeout=300)
    return int(box.sh("df --output=avail -B1 /var/lib/svoyak | tail -1").strip())


def test_a_full_data_partition_still_boots_to_a_box_that_says_so(own_box: Box) -> None:
    """Years of media and logs fill the card to its last block while the box runs; it is
    switched off and on. The server starts once and stays up, the game resumes with every
    acknowledged move, the board and the host's pages say the card is full, and the host
    frees space by deleting a package on the admin page, after which the notices go."""
    box = own_box
    boot(box, "before_full")
    pin = box.pin()
    host = Host(box.base_url(), pin)
    try:
        r = host.http.post(box.base_url() + "/admin/packages", timeout=600,
                           files={"file": ("big.siq", big_package())},
                           headers={"Origin": box.base_url()})
        assert r.status_code == 200 and r.json()["ok"], (r.status_code, r.text[:1000])
        package = r.json()["package"]["id"]
        host.send("new_game", {"rules": "tv", "players": ["Анна", "Борис", "Вера"],
                               "package": "demo:tv"})
        host.act("pick_chooser", player=0)
        host.act("choose")
        host.act("set_score", player=1, score=400)
        host.wait(lambda v: v["view"]["players"][1]["score"] == 400, 30, "the score")
    finally:
        host.close()
    assert box.sh("test -f /var/lib/svoyak/space-reserve && echo yes").strip() == "yes"
    fill(box)
    # The running server gives its space reserve back when the card fills (within its
    # watch's 10 s); then the rest of the card fills too.
    box.wait_for("! test -e /var/lib/svoyak/space-reserve", 60, "the reserve given back")
    avail = fill(box)
    assert avail < 64 * 1024, avail
    box.poweroff()
    boot(box, "full")
    # The server starts once and stays up (no restart loop), and the host can log in.
    time.sleep(20)
    assert box.sh("systemctl is-active svoyak.service").strip() == "active"
    restarts = int(box.sh("systemctl show -p NRestarts --value svoyak.service").strip())
    assert restarts == 0, box.sh("journalctl -b --no-pager -n 60 -u svoyak.service")
    _, board = box.wait_board(60)
    assert notice_shown(board), "the board does not say the card is full"
    host = Host(box.base_url(), pin)
    tv = Screen(box.base_url(), {"role": "board"})
    try:
        v = host.wait(lambda v: v.get("game") is not None, 60, "the game back")["view"]
        assert [p["score"] for p in v["players"]] == [0, 400, 0]  # nothing acknowledged lost
        assert tv.wait(lambda v: v["box"]["disk_full"] is True, 30, "the TV's notice")
        for lang, words in (("ru", "Карта памяти коробки заполнена"),
                            ("en", "memory card is full")):
            host.http.get(f"{box.base_url()}/lang/{lang}", timeout=60)
            page = host.http.get(f"{box.base_url()}/admin/", timeout=60).text
            notices = re.findall(r'class="offline problem" role="alert">([^<]*)<', page)
            assert any(words in n for n in notices), (lang, notices)
        # The host frees space on the admin page: the big package goes, the notices with it.
        r = host.http.post(f"{box.base_url()}/admin/packages/{package}/delete", timeout=120,
                           headers={"Origin": box.base_url()})
        assert r.status_code == 200 and r.json()["ok"], (r.status_code, r.text[:1000])
        assert tv.wait(lambda v: v["box"]["disk_full"] is False, 60, "the notice gone")
        _, board = box.wait_board(60)
        assert not notice_shown(board)
        assert box.sh("test -f /var/lib/svoyak/space-reserve && echo yes").strip() == "yes"
    finally:
        host.close()
        tv.close()
