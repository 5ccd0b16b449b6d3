"""The box's own settings (not a game's): host PIN, Wi-Fi details for the idle screen,
sound, language, buzzer mode. One small JSON file in the data directory, written
atomically, readable only by the service user (it holds the PIN in clear so that
`svoyak serve` can print it on the console the club's technician looks at)."""

from __future__ import annotations

import json
import os
import secrets
import threading
from copy import deepcopy
from pathlib import Path
from typing import Any

FILENAME = "settings.json"
# The admin page asks the box's set-up tool (root, provisioning/roles/hotspot) to change the
# access point through this file; the tool applies it and writes the result back here.
WIFI_REQUEST = "wifi-request.json"

DEFAULTS: dict[str, Any] = {
    "box_name": "Svoyak",
    "pin": "",
    "wifi": {"ssid": "", "password": "", "security": "WPA"},
    "language": "ru",
    "sound": {"volume": 0.7, "mute": False},
    # Casual mode lets phones buzz even outside the simulator (wired buttons stay fair).
    "casual_buzzer": False,
    "host_url": "",
    # The box's address on its own Wi-Fi (NetworkManager's shared mode): the captive
    # portal's redirects point there.
    "portal_address": "10.42.0.1",
}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = deepcopy(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def new_pin() -> str:
    """Four digits: typed on a tablet by a volunteer; the rate limit makes guessing slow."""
    return f"{secrets.randbelow(10_000):04d}"


class Settings:
    """Thread-safe access to the settings file; `get()` returns a copy."""

    def __init__(self, data_dir: str | os.PathLike[str]):
        self.path = Path(data_dir) / FILENAME
        self._lock = threading.Lock()
        self._mtime: int | None = None
        self._data = self._load()
        if not self._data.get("pin"):
            self._data["pin"] = new_pin()  # set on first start
            self._write()

    def _load(self) -> dict[str, Any]:
        if not self.path.exists():
            return deepcopy(DEFAULTS)
        self._mtime = self.path.stat().st_mtime_ns
        try:
            stored = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError) as e:
            raise SystemExit(f"{self.path}: settings file is unreadable: {e}") from e
        if not isinstance(stored, dict):
            raise SystemExit(f"{self.path}: settings file is not a JSON object")
        return _merge(DEFAULTS, stored)

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self._data, f, ensure_ascii=False, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self._mtime = self.path.stat().st_mtime_ns

    def _fresh(self) -> None:
        """Re-read the file if another program changed it (the box's set-up tool writes the
        Wi-Fi details it applied); call with the lock held."""
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if mtime != self._mtime:
            self._data = self._load()

    def get(self) -> dict[str, Any]:
        with self._lock:
            self._fresh()
            return deepcopy(self._data)

    def update(self, changes: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._fresh()
            self._data = _merge(self._data, changes)
            self._write()
            return deepcopy(self._data)

    @property
    def pin(self) -> str:
        with self._lock:
            self._fresh()
            return str(self._data["pin"])

    def request_wifi(self, ssid: str, password: str) -> None:
        """Ask for a new Wi-Fi name and password (see WIFI_REQUEST)."""
        path = self.path.parent / WIFI_REQUEST
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"ssid": ssid, "password": password}, f, ensure_ascii=False)
        os.replace(tmp, path)

    def public(self) -> dict[str, Any]:
        """What any screen may know: never the PIN."""
        d = self.get()
        d.pop("pin", None)
        return d
