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
