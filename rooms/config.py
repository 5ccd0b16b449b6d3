"""Which role this box plays in a tournament, in ``DATA/rooms.json``, and joining.

A director box creates its broker user and one user per room; each room's password is a
short join code (eight letters and digits, shown on the director's screen as text and as a
QR code), typed or scanned on the room box. No file: the box is an ordinary box."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

from appliance import storage
from rooms import topics
from rooms.link import Broker

FILE = "rooms.json"
# No 0/O, 1/I/L: a volunteer types it from a TV across the room.
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
QR_PREFIX = "svoyak-join:1"


class ConfigError(ValueError):
    def __init__(self, ru: str, en: str):
        super().__init__(en)
        self.ru = ru
        self.en = en


def path(data: Path) -> Path:
    return Path(data) / FILE


def load(data: Path) -> dict[str, Any] | None:
    p = path(data)
    if not p.exists():
        return None
    try:
        obj = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{p} не читается: {e}", f"{p} cannot be read: {e}") from e
    if not isinstance(obj, dict) or obj.get("role") not in ("director", "room"):
        raise ConfigError(f"{p}: неизвестная роль", f"{p}: unknown role")
    return obj


def save(data: Path, obj: dict[str, Any]) -> None:
    storage.write_bytes(path(data), json.dumps(obj, ensure_ascii=False, indent=1).encode())


def broker_of(obj: dict[str, Any]) -> Broker:
    b = obj["broker"]
    return Broker(str(b["host"]), int(b["port"]), str(obj["username"]), str(obj["password"]))


def join_code() -> str:
    raw = "".join(secrets.choice(ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def normal_code(code: str) -> str:
    c = "".join(ch for ch in code.upper() if ch.isalnum())
    if len(c) != 8 or any(ch not in ALPHABET for ch in c):
        raise ConfigError("Код подключения — восемь букв и цифр, например 4F7K-92QD.",
                          "A join code is eight letters and digits, e.g. 4F7K-92QD.")
    return f"{c[:4]}-{c[4:]}"


def set_password(passwd_file: Path, user: str, password: str) -> None:
    """Add or change a broker user (mosquitto_passwd hashes it); the broker re-reads the
    file on SIGHUP, which the box's svoyak-broker-reload.path sends on every change."""
    tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    passwd_file.parent.mkdir(parents=True, exist_ok=True)
    if not passwd_file.exists():
        passwd_file.touch(0o640)
    r = subprocess.run([tool, "-b", str(passwd_file), user, password], capture_output=True,
                       text=True, timeout=30)
    if r.returncode != 0:
        raise ConfigError(f"mosquitto_passwd: {r.stderr.strip()}",
                          f"mosquitto_passwd: {r.stderr.strip()}")


def make_director(data: Path, host: str, port: int, passwd_file: Path,
                  package: str | None = None) -> dict[str, Any]:
    """`package`: where the battles' themes come from (see `rooms.wiring.load_package`)."""
    obj: dict[str, Any] = {"role": "director", "broker": {"host": host, "port": port},
                           "username": "director", "password": secrets.token_urlsafe(18),
                           "passwd_file": str(passwd_file)}
    if package:
        obj["package"] = package
    set_password(passwd_file, "director", obj["password"])
    save(data, obj)
    return obj


def add_room(data: Path, room: str | None = None) -> dict[str, Any]:
    """A room's credentials on the director: its name and a fresh join code."""
    obj = load(data)
    if obj is None or obj["role"] != "director":
        raise ConfigError("Это не бокс директора.", "This is not the director's box.")
    rooms = obj.setdefault("rooms", [])
    if room is None:
        n = 1
        while f"room{n}" in rooms:
            n += 1
        room = f"room{n}"
    if not topics.valid_room(room):
        raise ConfigError("Имя зала: room и номер, например room3.",
                          "A room is named room and a number, e.g. room3.")
    code = join_code()
    set_password(Path(obj["passwd_file"]), room, code)
    if room not in rooms:
        rooms.append(room)
    save(data, obj)
    b = obj["broker"]
    return {"room": room, "code": code, "host": b["host"], "port": b["port"],
            "qr": f"{QR_PREFIX}:{b['host']}:{b['port']}:{room}:{code}"}


def join(data: Path, host: str, port: int, room: str, code: str) -> dict[str, Any]:
    """Make this box room `room` of the director at host:port."""
    if not topics.valid_room(room):
        raise ConfigError("Имя зала: room и номер, например room3.",
                          "A room is named room and a number, e.g. room3.")
    old = load(data)
    box = old.get("box") if old and old.get("role") == "room" else None
    obj = {"role": "room", "room": room, "box": box or secrets.token_hex(6),
           "broker": {"host": host, "port": int(port)}, "username": room,
           "password": normal_code(code)}
    save(data, obj)
    return obj


def parse_qr(text: str) -> tuple[str, int, str, str]:
    """host, port, room, code from the join QR code's text."""
    parts = text.strip().split(":")
    if len(parts) != 6 or ":".join(parts[:2]) != QR_PREFIX:
        raise ConfigError("Это не QR-код подключения Svoyak.", "Not a Svoyak join QR code.")
    return parts[2], int(parts[3]), parts[4], parts[5]
