"""The TV: the kiosk's Chromium under cage on the VM's virtual GPU, and the board's idle
screen with the Wi-Fi QR code on what the GPU scans out (tv.py). The time from QEMU start to
the first such frame is the boot's figure for the TV."""

from __future__ import annotations

from report import REPORT_DIR, record
from vm import Box

BOOT_TIMEOUT = 900


def test_the_tv_shows_the_board_with_the_wifi_qr(box: Box) -> None:
    first = box.tv.wait(max(0.0, BOOT_TIMEOUT - box.since_start()))
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    box.screendump(REPORT_DIR / "tv.png", "png")
    if first is not None:
        record("box_kiosk.first_board_frame_s", round(first, 1))
    assert first is not None, (
        f"no QR code on the TV (best {box.tv.rows} rows; {box.tv.errors}); see "
        f"{REPORT_DIR / 'tv.png'}\n" + box.sh(
            "systemctl status --no-pager svoyak-kiosk.service; "
            "journalctl -b --no-pager -n 40 -u svoyak-kiosk", check=False))
    assert box.sh("systemctl is-active svoyak-kiosk.service").strip() == "active"
    # how often the kiosk watch had to start a stuck browser again before the board came
    record("box_kiosk.watch_restarts_at_boot", int(box.sh(
        "journalctl -b --no-pager -u svoyak-kiosk-watch | grep -c 'starting it again'",
        check=False).strip() or 0))


def test_a_kiosk_stuck_without_the_board_is_started_again(box: Box) -> None:
    """The kiosk watch (svoyak-kiosk-watch.timer): a browser that holds no connection to
    the game server — as Chromium's window stayed white once its network service crashed at
    its first start after boot — is started again, and the TV gets the board back. The test
    freezes the browser's pages and cuts their connections (the browser could not reconnect
    by itself then)."""
    box.wait_for("systemctl is-active svoyak-kiosk-watch.timer", 120, "the kiosk watch")
    uid = box.sh("id -u svoyak-kiosk").strip()
    linked = f"ss -Htne state established '( dport = :80 )' | grep -q ' uid:{uid} '"
    box.wait_for(linked, 300, "the board's connection")
    before = box.sh("systemctl show -p MainPID --value svoyak-kiosk").strip()
    frozen = box.sh(f"pgrep -u {uid} -f -- --type=renderer | tr '\\n' ' '").split()
    assert frozen
    box.sh(f"kill -STOP {' '.join(frozen)}; ss -K state established '( dport = :80 )' >/dev/null")
    t0 = box.since_start()
    try:
        box.wait_for(f"test \"$(systemctl show -p MainPID --value svoyak-kiosk)\" != {before}",
                     600, "the kiosk started again")
        record("box_kiosk.watch_restart_s", round(box.since_start() - t0, 1))
        box.wait_for(linked, 600, "the board reached again")
    finally:
        box.sh(f"kill -KILL {' '.join(frozen)}", check=False)
    assert "starting it again" in box.sh("journalctl -b --no-pager -u svoyak-kiosk-watch")
