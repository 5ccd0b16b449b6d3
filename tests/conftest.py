"""Fixtures more than one test module needs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real, small data directory (a 6 MB tmpfs) to fill to the last byte: a full memory
    card."""
    if os.geteuid() != 0:
        pytest.fail("the disk-full tests mount a tmpfs and need root (CI runs as root)")
    data = tmp_path / "data"
    data.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", str(data)],
                   check=True)
    try:
        yield data
    finally:
        subprocess.run(["umount", "-l", str(data)], check=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium through Playwright, one per test module, launched the way the box's
    browser tests run it (`webui_kit.CHROMIUM_FLAGS`). The screen tests launch their own
    with the screenshot script's flags (`webui.screenshots.FLAGS`)."""
    from webui_kit import CHROMIUM, CHROMIUM_FLAGS

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    """A real `svoyak serve --simulate --no-demo` on loopback with a fresh data directory
    (the host console's and the club evening's browser tests); modules that need another
    server define their own `server`."""
    from webui_kit import Server

    s = Server(tmp_path / "data", None, "--no-demo").start()
    yield s
    s.stop()
