"""Small files that must survive a power cut whole: written to a temporary file beside the
target, fsynced, renamed over it, and the directory fsynced so the rename itself is on
disk. A reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_bytes(path: Path, data: bytes, mode: int = 0o600) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def keep_damaged(path: Path) -> Path:
    """Move a damaged file aside (`NAME.damaged-N`) so a fresh one can take its place and
    the old bytes stay for whoever wants to look at them."""
    n = 1
    while (target := path.with_name(f"{path.name}.damaged-{n}")).exists():
        n += 1
    os.replace(path, target)
    fsync_dir(path.parent)
    return target
