"""The TV of the booted box: what its virtual GPU (virtio-gpu) scans out, taken by QEMU
(`screendump`), and how to tell the board's idle screen in it: the Wi-Fi QR code."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

QR_ROWS = 30


def pixels(ppm: Path) -> tuple[int, int, bytes]:
    """A binary PPM (QEMU's own screendump format): width, height, RGB bytes."""
    data = ppm.read_bytes()
    magic, size, depth, rest = data.split(b"\n", 3)
    assert magic == b"P6" and depth == b"255", data[:20]
    w, h = map(int, size.split())
    return w, h, rest[: w * h * 3]


def qr_rows(ppm: Path) -> int:
    """Rows crossing a QR code: many runs of pure black and pure white modules in one row
    (text and the board's colours never give 20 such flips in a row)."""
    w, h, rgb = pixels(ppm)
    rows = 0
    for y in range(0, h, 2):
        row = rgb[y * w * 3:(y + 1) * w * 3]
        flips, last = 0, None
        for x in range(0, w * 3, 3):
            r, g, b = row[x], row[x + 1], row[x + 2]
            v = 0 if r + g + b < 90 else 1 if r + g + b > 690 else None
            if v is not None:
                if last is not None and v != last:
                    flips += 1
                last = v
        rows += flips >= 20
    return rows


class Watcher:
    """Takes the TV's picture every few seconds from QEMU's start until a QR code shows;
    `first_qr_s` is then the time from QEMU start to that frame."""

    def __init__(self, box: Any, every_s: float = 3.0) -> None:
        self.box, self.every_s = box, every_s
        self.first_qr_s: float | None = None
        self.rows = 0
        self.errors: list[str] = []
        self.done = threading.Event()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        shot = self.box.workdir / "tv-watch.ppm"
        while not self._stop.is_set():
            try:
                self.box.screendump(shot, "ppm")
                self.rows = qr_rows(shot)
                if self.rows >= QR_ROWS:
                    self.first_qr_s = self.box.since_start()
                    break
            except Exception as e:  # QEMU not yet listening, or gone
                self.errors = [*self.errors[-4:], repr(e)]
            self._stop.wait(self.every_s)
        self.done.set()

    def wait(self, timeout: float) -> float | None:
        self.done.wait(timeout)
        return self.first_qr_s

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(10)
