"""The box, booted from its disk as a fresh card: up to multi-user, the game server running
under its real unit, the board page answering from outside, and the boot's critical chain
and times recorded (docs/appliance.md, "Booted in QEMU")."""

from __future__ import annotations

import re

from report import record
from vm import Box

BOOT_TIMEOUT = 900  # TCG on two shared cores; the measured times are in the report
# systemd-analyze reads every unit: under TCG on a loaded host one call took 175 s.
ANALYZE_TIMEOUT = 600


def test_boots_to_multi_user_and_the_host_gets_the_board(box: Box) -> None:
    record("box_boot.agent_s", round(box.wait_agent(BOOT_TIMEOUT), 1))
    # The board page from the host, through QEMU's forward to the box's port 80.
    seconds, board = box.wait_board(BOOT_TIMEOUT)
    record("box_boot.board_http_s", round(seconds, 1))
    assert 'id="board"' in board and "page-board" in board
    assert box.sh("systemctl is-active svoyak.service").strip() == "active"
    assert box.sh("systemctl show -p User --value svoyak.service").strip() == "svoyak"
    main_pid = box.sh("systemctl show -p MainPID --value svoyak.service").strip()
    assert box.sh(f"ps -o user= -p {main_pid}").strip() == "svoyak"
    box.wait_for("systemctl is-active multi-user.target", BOOT_TIMEOUT, "multi-user.target")


def test_boot_times_and_critical_chain_are_recorded(box: Box) -> None:
    box.wait_for("systemctl is-system-running --wait >/dev/null; "
                 "systemd-analyze time >/dev/null", BOOT_TIMEOUT, "the boot to finish")
    timing = box.sh("systemd-analyze time --no-pager", timeout=ANALYZE_TIMEOUT)
    record("box_boot.systemd_analyze_time", timing.strip())
    m = re.search(r"multi-user\.target reached after ([\d.]+)(ms|s|min)", timing)
    chain = box.sh("systemd-analyze critical-chain --no-pager svoyak.service multi-user.target "
                   "graphical.target", timeout=ANALYZE_TIMEOUT)
    record("box_boot.critical_chain", chain.strip())
    blame = box.sh("systemd-analyze blame --no-pager | head -15", timeout=ANALYZE_TIMEOUT)
    record("box_boot.blame", blame.strip())
    assert "svoyak.service" in chain
    failed = box.sh("systemctl list-units --failed --no-legend --plain --no-pager",
                    timeout=ANALYZE_TIMEOUT)
    record("box_boot.failed_units", failed.strip())
    assert m or "graphical.target reached" in timing, timing
