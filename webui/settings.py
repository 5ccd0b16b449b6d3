"""The box's own settings (not a game's): host PIN, Wi-Fi details for the idle screen,
sound, language, buzzer mode. One small JSON file in the data directory, written
atomically and fsynced with its directory (`appliance.storage`), readable only by the service
user (it holds the PIN in clear so that `svoyak serve` can print it on the console the
club's technician looks at, and the TV can show a first PIN: `first_pin`).

A settings file that cannot be read (a damaged card, a hand edit gone wrong) does not stop
the box: it is moved aside as `settings.json.damaged-N`, the defaults take its place with a
new PIN, and the report is kept in the new file's `problems` (so the server's worker
process, which reads the file after the console did, still shows it) until the host next
saves the settings. Games live in the event log, not here, so
nothing of the evening is lost."""

from __future__ import annotations

import json
import logging
import math
import os
import secrets
import threading
from copy import deepcopy
from pathlib import Path
from typing import Any

from appliance import storage

log = logging.getLogger("svoyak.webui")

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
    # Phones buzz even outside the simulator (wired buttons stay fair): on unless the admin
    # turns it off, so a club without wired buttons plays from the first minute.
    "casual_buzzer": True,
    # The chooser's pick from a phone goes straight through (else the host confirms it).
    "phone_pick_direct": False,
    "host_url": "",
    # The box's address on its own Wi-Fi (NetworkManager's shared mode): the captive
    # portal's redirects point there.
    "portal_address": "10.42.0.1",
    # A PIN the box made itself and nobody has seen yet: the TV shows it (`first_pin`)
    # until the host first logs in or sets another.
    "pin_on_board": False,
}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = deepcopy(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


PIN_DIGITS = 6


def new_pin() -> str:
    """Six digits: typed on a tablet by a volunteer; with the guard's rate limit a stranger
    needs weeks to guess them (docs/webui.md has the arithmetic)."""
    return f"{secrets.randbelow(10 ** PIN_DIGITS):0{PIN_DIGITS}d}"


def _valid(data: dict[str, Any]) -> dict[str, Any]:
    """The settings with every value of the wrong type or out of range put back to its
    default, so a hand-edited file cannot break a screen (a NaN volume, a list as a name)."""
    out = deepcopy(data)
    for key, default in DEFAULTS.items():
        value = out.get(key)
        if isinstance(default, dict):
            if not isinstance(value, dict):
                out[key] = deepcopy(default)
                continue
            for k, d in default.items():
                v = value.get(k, d)
                if isinstance(d, float) and isinstance(v, int) and not isinstance(v, bool):
                    value[k] = float(v)
                elif type(v) is not type(d):
                    value[k] = d
        elif type(value) is not type(default):
            out[key] = deepcopy(default)
    volume = out["sound"]["volume"]
    if not math.isfinite(volume):
        volume = DEFAULTS["sound"]["volume"]
    out["sound"]["volume"] = min(max(volume, 0.0), 1.0)
    pin = out.get("pin")
    if not (isinstance(pin, str) and pin.isascii() and pin.isdigit() and 4 <= len(pin) <= 12):
        out["pin"] = ""  # a new one is made
    return out


class Settings:
    """Thread-safe access to the settings file; `get()` returns a copy."""

    def __init__(self, data_dir: str | os.PathLike[str]):
        self.path = Path(data_dir) / FILENAME
        self._lock = threading.Lock()
        self._mtime: int | None = None
        self._data = self._load()
        if not self._data.get("pin"):
            self._data["pin"] = new_pin()  # set on first start
            self._data["pin_on_board"] = True
            self._write()

    def _load(self) -> dict[str, Any]:
        if not self.path.exists():
            return deepcopy(DEFAULTS)
        self._mtime = self.path.stat().st_mtime_ns
        try:
            stored = json.loads(self.path.read_text("utf-8"))
            if not isinstance(stored, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            aside = storage.keep_damaged(self.path)
            log.error("%s is unreadable (%s): moved to %s, defaults and a new PIN used",
                      self.path, e, aside.name)
            problem = {
                "code": "settings",
                "ru": f"Файл настроек был повреждён и заменён настройками по умолчанию "
                      f"(старый сохранён как {aside.name}); PIN новый — он показан на телевизоре "
                      f"коробки до первого входа. Игры не затронуты.",
                "en": f"The settings file was damaged and replaced with the defaults (the "
                      f"old one is kept as {aside.name}); the PIN is new and shown on the "
                      f"box's TV until the host logs in. No game was affected."}
            self._mtime = None
            return {**deepcopy(DEFAULTS), "problems": [problem]}
        return _valid(_merge(DEFAULTS, stored))

    def _write(self) -> None:
        # allow_nan=False: a NaN would make the file invalid JSON; _valid keeps them out.
        text = json.dumps(self._data, ensure_ascii=False, indent=1, allow_nan=False)
        storage.write_bytes(self.path, text.encode("utf-8"))
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
            self._data = _valid(_merge(self._data, changes))
            self._write()
            return deepcopy(self._data)

    @property
    def problems(self) -> list[dict[str, str]]:
        """What went wrong with the file, and a Wi-Fi radio the box's set-up tool could not
        switch on, for the host screen ({"code", "ru", "en"})."""
        with self._lock:
            self._fresh()
            found = self._data.get("problems")
            radio_off = self._data.get("wifi_error_code") == "radio"
        out = [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []
        if radio_off:
            from webui import i18n

            out.append({"code": "wifi_radio",
                        **{code: i18n.translate("board.wifi_radio_off", code)
                           for code in ("ru", "en")}})
        return out

    @property
    def pin(self) -> str:
        with self._lock:
            self._fresh()
            return str(self._data["pin"])

    def first_pin(self) -> str | None:
        """The PIN while the box shows it on its own TV: one it made itself, until the host
        first logs in (`host_logged_in`) or sets another. Only the kiosk on the box itself
        is given it (pages.board); a phone on the Wi-Fi never is."""
        with self._lock:
            self._fresh()
            return str(self._data["pin"]) if self._data.get("pin_on_board") else None

    def host_logged_in(self) -> bool:
        """A host logged in: the TV stops showing the first PIN. True when that changed."""
        with self._lock:
            self._fresh()
            if not self._data.get("pin_on_board"):
                return False
            self._data["pin_on_board"] = False
            try:
                self._write()
            except OSError as e:  # a full card must not stop the host logging in
                if not storage.disk_full(e):
                    raise
                log.warning("the card is full: the first PIN leaves the TV until a restart")
            return True

    def request_wifi(self, ssid: str, password: str, network: str | None = None) -> None:
        """Ask for a new Wi-Fi name and password (see WIFI_REQUEST), or with `network` for
        a network mode: "hotspot", "venue-wifi" (ssid/password are the venue's) or
        "venue-ethernet"."""
        body: dict[str, str] = {"ssid": ssid, "password": password}
        if network is not None:
            body = {"network": network, **(body if network == "venue-wifi" else {})}
        text = json.dumps(body, ensure_ascii=False)
        storage.write_bytes(self.path.parent / WIFI_REQUEST, text.encode("utf-8"))

    def public(self) -> dict[str, Any]:
        """What any screen may know: never the PIN."""
        d = self.get()
        d.pop("pin", None)
        d.pop("problems", None)
        return d
