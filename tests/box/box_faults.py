"""Faults a club's box meets, on a box of the test's own: the plug pulled in the middle of a
game (QEMU killed: nothing the guest had not flushed survives) and the box booted again; the
second boot of a card; the data partition full to the last block."""

from __future__ import annotations

import json
import time
from typing import Any

from club import Host, phase
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


def test_a_full_data_partition_still_boots_to_a_box_that_says_so(own_box: Box) -> None:
    box = own_box
    boot(box, "before_full")
    pin = box.pin()
    # Fill the data partition to its last block, as years of media and logs would.
    box.sh("fallocate -l $(( $(df --output=avail -B1 /var/lib/svoyak | tail -1) )) "
           "/var/lib/svoyak/filler || true; dd if=/dev/zero of=/var/lib/svoyak/filler2 bs=4k "
           "status=none 2>/dev/null || true; sync", timeout=300)
    avail = int(box.sh("df --output=avail -B1 /var/lib/svoyak | tail -1").strip())
    assert avail < 64 * 1024, avail
    box.poweroff()
    boot(box, "full")
    # The server starts once and stays up (no restart loop), and the host can log in.
    time.sleep(20)
    assert box.sh("systemctl is-active svoyak.service").strip() == "active"
    restarts = int(box.sh("systemctl show -p NRestarts --value svoyak.service").strip())
    assert restarts == 0, box.sh("journalctl -b --no-pager -n 60 -u svoyak.service")
    # The board says so (the host's pages too), and the host can still log in.
    _, board = box.wait_board(60)
    assert 'id="disk-full"' in board, "the board does not say the card is full"
    host = Host(box.base_url(), pin)
    host.close()
