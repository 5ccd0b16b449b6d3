"""A package read from a file but not yet in the library: the model plus its media source.

Importers (SIQ, text, our own zip) return a `Loaded`; the library streams the media from it
into the media store. Until then a media item's value is its logical name in the file
(`Images/boat.png`), which is also what `svoyak package inspect` prints.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from appliance.packages.archive import SafeZip
from appliance.packages.model import ItemType, Package

_FALLBACK_MIME = {
    ItemType.IMAGE: "image/octet-stream",
    ItemType.AUDIO: "audio/octet-stream",
    ItemType.VIDEO: "video/octet-stream",
    ItemType.HTML: "text/html",
}


def guess_mime(name: str, item_type: ItemType) -> str:
    """The content type a screen needs to show a media file, from its name and role."""
    if item_type == ItemType.HTML:
        return "text/html"
    mime, _ = mimetypes.guess_type(name, strict=False)
    return mime or _FALLBACK_MIME.get(item_type, "application/octet-stream")


@dataclass
class Loaded:
    package: Package
    format: str  # "siq5", "siq4", "siq3", "text", "svoyak"
    source: Path
    archive: SafeZip | None = None
    media: dict[str, str] = field(default_factory=dict)  # logical name -> archive entry
    mime: dict[str, str] = field(default_factory=dict)  # logical name -> content type

    def chunks(self, name: str) -> Iterator[bytes]:
        assert self.archive is not None
        return self.archive.chunks(self.media[name])

    def media_bytes(self) -> int:
        """Unpacked size of all referenced media (declared in the archive)."""
        if self.archive is None:
            return 0
        return sum(self.archive.size(entry) for entry in self.media.values())

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()

    def __enter__(self) -> Loaded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
