"""Open any package file: recognise its format by content, not only by its name."""

from __future__ import annotations

import os
from pathlib import Path

from appliance.packages import exchange, siq, text
from appliance.packages.archive import Limits, SafeZip, unreadable
from appliance.packages.loaded import Loaded

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


def load(path: str | os.PathLike[str], limits: Limits | None = None) -> Loaded:
    """Read a package file (.siq, our export .zip, .json, plain text) without importing it.

    Raises PackageError naming the file and the place. The caller closes the result."""
    path = Path(path)
    limits = limits or Limits.from_env()
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as e:
        raise unreadable(path, e) from e
    suffix = path.suffix.lower()
    if head in ZIP_MAGIC or suffix in (".siq", ".zip"):
        with SafeZip(path, limits) as z:
            ours = z.has(exchange.PACKAGE_JSON) and not any(
                n.lower() == "content.xml" for n in z.names
            )
        return exchange.load(path, limits) if ours else siq.load(path, limits)
    if suffix == ".json" or head.lstrip()[:1] == b"{":
        return exchange.load_json(path, limits)
    return text.load(path, limits)
