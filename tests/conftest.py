"""Fixtures more than one test module needs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The test files that take longest, longest first (docs/performance.md, "The test suite").
# `make test` runs the suite on several workers with `--dist loadfile` (a whole file on one
# worker, so a file's module fixtures, the provisioned tree above all, are made once), and
# hands the files out in collection order: these come first, so that the longest does not
# start last while the other workers have nothing left to do.
LONGEST_FIRST = (
    "test_provisioning.py", "test_arm64.py", "test_host_console.py", "test_board_phone.py",
    "test_tournament_battles.py", "test_rooms_tournament.py", "test_screens.py",
    "test_power_cut.py", "test_battle_cut.py", "test_tournament_power_cut.py",
    "test_long_evening.py", "test_benches.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: in-file order


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


@pytest.fixture(scope="session")
def playwright() -> Iterator[Any]:
    """Playwright's driver, once per test process: the browsers below share it (one sync
    Playwright per thread is all Playwright allows, so no test starts its own)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        yield p


def launched(playwright: Any, flags: list[str]) -> Iterator[Any]:
    from webui_kit import CHROMIUM

    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is missing: scripts/webui-deps.sh --browser")
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=flags)
    yield b
    b.close()


@pytest.fixture(scope="session")
def chromium(playwright: Any) -> Iterator[Any]:
    """Debian's Chromium, launched once per test process the way the box's browser tests
    run it (`webui_kit.CHROMIUM_FLAGS`): a launch costs seconds on a loaded machine, and
    every test gets pages of its own (a page is a fresh browser context: no cookies,
    storage or cache of another test's)."""
    from webui_kit import CHROMIUM_FLAGS

    yield from launched(playwright, CHROMIUM_FLAGS)


@pytest.fixture(scope="session")
def screens_chromium(playwright: Any) -> Iterator[Any]:
    """The same, with the screenshot script's flags (`webui.screenshots.FLAGS`), for the
    tests that check what the screenshots show."""
    from webui import screenshots

    yield from launched(playwright, screenshots.FLAGS)


def own_contexts(b: Any) -> Iterator[Any]:
    """The browser, and afterwards whatever contexts (pages) were opened meanwhile and left
    open closed, so one module's pages never run on into the next's."""
    before = set(b.contexts)
    yield b
    for ctx in b.contexts:
        if ctx not in before:
            ctx.close()


@pytest.fixture(scope="module")
def browser(chromium: Any) -> Iterator[Any]:
    """The session's Chromium for one test module (see `chromium`)."""
    yield from own_contexts(chromium)


@pytest.fixture(scope="module")
def screens_browser(screens_chromium: Any) -> Iterator[Any]:
    """The session's screenshot-flags Chromium for one test module."""
    yield from own_contexts(screens_chromium)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    """A real `svoyak serve --simulate --no-demo` on loopback with a fresh data directory
    (the host console's and the club evening's browser tests); modules that need another
    server define their own `server`."""
    from webui_kit import Server

    s = Server(tmp_path / "data", None, "--no-demo").start()
    yield s
    s.stop()
