"""gunicorn's worker heartbeat, a file it touches every second or so, lives in RAM: the
unit's RuntimeDirectory (RUNTIME_DIRECTORY), never the temporary directory, which on the
box is the data partition on the card. A real server on loopback; the file is unlinked
as soon as it is made, so it is found among the server's open files."""

from __future__ import annotations

import os
from pathlib import Path

from webui_kit import Server


def heartbeat_files(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if "wgunicorn-" in target:
            found.append(target)
    return found


def test_heartbeat_is_in_the_runtime_directory_not_on_the_card(tmp_path: Path,
                                                               monkeypatch) -> None:
    card, run = tmp_path / "card-tmp", tmp_path / "run"
    card.mkdir()
    run.mkdir()
    monkeypatch.setenv("TMPDIR", str(card))  # the unit's TMPDIR: the data partition
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(run))
    data = tmp_path / "data"
    data.mkdir()
    server = Server(data).start()
    try:
        assert server.proc is not None
        files = heartbeat_files(server.proc.pid)
        assert files and all(f.startswith(f"{run}/") for f in files), files
    finally:
        server.stop()
    # Outside systemd: /dev/shm, still RAM.
    monkeypatch.delenv("RUNTIME_DIRECTORY")
    server = Server(data).start()
    try:
        assert server.proc is not None
        files = heartbeat_files(server.proc.pid)
        assert files and all(f.startswith("/dev/shm/") for f in files), files
    finally:
        server.stop()
