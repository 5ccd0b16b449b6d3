"""The server's processes as /proc shows them, for the benches that measure its memory."""

from __future__ import annotations

from pathlib import Path


def children(root: int) -> list[int]:
    """The direct children of `root` (gunicorn's worker under its arbiter), by their
    parent field in /proc/PID/stat; a process gone while it is read is skipped."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == root:
                found.append(int(entry.name))
    return found
