"""The media store: package media files on disk, named by the SHA-256 of their content.

Files are streamed (a chunk at a time) into a staging directory while hashing, and only
moved into place when the import commits, so the same picture used by ten packages is
stored once and a failed import leaves no file behind. Layout: `ROOT/ab/abcdef…` (the first
two hex digits fan the files out over directories).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from appliance.packages.archive import PackageError

HASH_LENGTH = 64


def is_hash(value: str) -> bool:
    return len(value) == HASH_LENGTH and all(c in "0123456789abcdef" for c in value)


@dataclass
class Staged:
    """Media written to a staging directory, not yet visible in the store."""

    directory: Path
    files: dict[str, Path] = field(default_factory=dict)  # hash -> staged file
    sizes: dict[str, int] = field(default_factory=dict)


class MediaStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, digest: str) -> Path:
        """Where the file of this content hash lives (it may not exist)."""
        if not is_hash(digest):
            shown = "".join(c if c.isprintable() else "?" for c in digest[:80])
            raise PackageError(f"«{shown}» — не хеш медиафайла", f"«{shown}» is not a media hash",
                               "bad_media_hash")
        return self.root / digest[:2] / digest

    def exists(self, digest: str) -> bool:
        return is_hash(digest) and self.path(digest).is_file()

    # -- staging -------------------------------------------------------------------------

    def stage(self) -> Staged:
        """A fresh staging directory inside the store (same file system: moves are renames)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return Staged(Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root)))

    def write(self, staged: Staged, chunks: Iterable[bytes]) -> tuple[str, int]:
        """Stream chunks into the staging area; returns (sha256 hex, size)."""
        h = hashlib.sha256()
        size = 0
        fd, tmp = tempfile.mkstemp(dir=staged.directory)
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    h.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        digest = h.hexdigest()
        if digest in staged.files:
            Path(tmp).unlink()
        else:
            staged.files[digest] = Path(tmp)
            staged.sizes[digest] = size
        return digest, size

    def publish(self, staged: Staged) -> list[Path]:
        """Move staged files into place; returns the files created (not already stored),
        so a caller whose commit then fails can take them back with `remove`."""
        created: list[Path] = []
        try:
            for digest, tmp in staged.files.items():
                target = self.path(digest)
                if target.exists():
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
                created.append(target)
        except BaseException:
            self.remove(created)
            raise
        return created

    def discard(self, staged: Staged) -> None:
        shutil.rmtree(staged.directory, ignore_errors=True)

    def remove(self, paths: Iterable[Path]) -> None:
        for p in paths:
            p.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                p.parent.rmdir()  # only when empty

    def delete(self, digests: Iterable[str]) -> None:
        self.remove(self.path(d) for d in digests if is_hash(d))

    def sweep_staging(self) -> None:
        """Remove staging directories left by an import killed mid-way (power cut)."""
        if self.root.is_dir():
            for d in self.root.glob(".staging-*"):
                shutil.rmtree(d, ignore_errors=True)
