"""Fixtures of the booted-box tests (`make test-box`): the base disk, a booted VM per module,
and the report of what was measured (build/test-box/report.json).

The test modules here are named box_*.py, not test_*.py, so `pytest` alone (`make test`)
does not collect them; `make test-box` names them."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import image  # noqa: E402
import tv  # noqa: E402
import vm  # noqa: E402
from report import REPORT_DIR, record  # noqa: E402


@pytest.fixture(scope="session")
def base_disk() -> Path:
    if os.geteuid() != 0:
        pytest.fail("the booted-box tests need root (debootstrap, chroot; CI runs as root)")
    image.deps()
    return image.base_disk()


def keep_logs(box: vm.Box, name: str) -> None:
    dest = REPORT_DIR / name
    dest.mkdir(parents=True, exist_ok=True)
    for f in box.workdir.glob("*.log"):
        shutil.copy2(f, dest / f.name)


RUNNING: list[vm.Box] = []  # the session's box, powered off before a test boots its own


@pytest.fixture(scope="session")
def box(base_disk: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[vm.Box]:
    """One box, booted once from a fresh card for the boot, TV, buttons and Wi-Fi tests
    (in the Makefile's order: box_boot.py first). A watcher takes the TV's picture every few
    seconds from the start, until the board's QR code shows (box_kiosk.py)."""
    b = vm.Box(tmp_path_factory.mktemp("box"), base_disk)
    record("accel", b.accel)
    b.start()
    RUNNING.append(b)
    b.tv = tv.Watcher(b)
    try:
        yield b
    finally:
        b.tv.stop()
        b.poweroff()
        RUNNING.remove(b)
        keep_logs(b, "box")


@pytest.fixture
def own_box(request: pytest.FixtureRequest, base_disk: Path,
            tmp_path: Path) -> Iterator[vm.Box]:
    """A box of the test's own, not started (the fault tests boot, kill and boot again)."""
    yield from _own(request, base_disk, tmp_path)


@pytest.fixture
def director_box(request: pytest.FixtureRequest, base_disk: Path,
                 tmp_path: Path) -> Iterator[vm.Box]:
    """A tournament director's box (site.yml with `svoyak_director`: its broker), a disk
    of its own, not started (`base_disk` first: the tools and the shared caches)."""
    yield from _own(request, image.base_disk(director=True), tmp_path)


def _own(request: pytest.FixtureRequest, disk: Path, tmp_path: Path) -> Iterator[vm.Box]:
    for running in RUNNING:  # two emulated boxes at once would starve each other
        running.poweroff()
    b = vm.Box(tmp_path / "box", disk)
    try:
        yield b
    finally:
        b.poweroff()
        keep_logs(b, request.node.name)
