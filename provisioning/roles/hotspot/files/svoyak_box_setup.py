#!/usr/bin/python3
"""Give a box its identity: Wi-Fi name and password and the first host PIN.

Runs at every boot before NetworkManager (svoyak-box-setup.service). The first time it
makes the identity and keeps it in the data directory's box.json (on the data partition,
so it survives an overlay root or a new image); every time it writes the Wi-Fi name and
password from box.json into the access point's keyfile. Options change the identity:
    svoyak-box-setup --ssid "Club Wi-Fi" --psk "a long password" --pin 4321 --reload
The admin page asks for a change without root: the app writes {"ssid": ..., "password":
...} to DATA/wifi-request.json, and svoyak-wifi-request.path runs this tool with
--request, which applies it (or refuses it) and removes the file.
It also seeds the app's settings.json (webui/settings.py) beside it: the Wi-Fi details and
host address the TV's idle screen shows (always, from box.json), and the first host PIN
(only while the app has none: a PIN changed on the admin page is kept).
Standard library only: it runs with the system's python3, outside the app's virtualenv.
"""

from __future__ import annotations

import argparse
import grp
import json
import os
import pwd
import re
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

# No look-alikes (0/o, 1/l/i): the password is read off a TV screen.
PSK_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
SUFFIX_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def generate(ssid_prefix: str, address: str) -> dict:
    suffix = "".join(secrets.choice(SUFFIX_ALPHABET) for _ in range(4))
    return {
        "wifi": {
            "ssid": f"{ssid_prefix}{suffix}",
            "password": "".join(secrets.choice(PSK_ALPHABET) for _ in range(10)),
            "security": "WPA",
        },
        "host_pin": f"{secrets.randbelow(10000):04d}",
        "address": address,
    }


def validate(box: dict) -> None:
    ssid, psk = box["wifi"]["ssid"], box["wifi"]["password"]
    if not 1 <= len(ssid.encode()) <= 32 or "\n" in ssid:
        raise ValueError("the Wi-Fi name must be 1 to 32 bytes on one line")
    if not (8 <= len(psk) <= 63 and all(32 <= ord(c) < 127 for c in psk)):
        raise ValueError("the Wi-Fi password must be 8 to 63 printable ASCII characters")
    if not re.fullmatch(r"\d{4,8}", box["host_pin"]):
        raise ValueError("the host PIN must be 4 to 8 digits")


def write_atomic(path: Path, text: str, mode: int, gid: int = -1, uid: int = -1) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if gid >= 0 or uid >= 0:
            os.chown(tmp, uid, gid)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def update_keyfile(text: str, ssid: str, psk: str) -> str:
    """The keyfile with its ssid= and psk= lines replaced, everything else untouched."""
    text = re.sub(r"(?m)^ssid=.*$", lambda _: f"ssid={ssid}", text)
    return re.sub(r"(?m)^psk=.*$", lambda _: f"psk={psk}", text)


def seed_settings(path: Path, box: dict, uid: int, gid: int) -> None:
    """Merge the box identity into the app's settings file (service user only, 0600)."""
    settings = json.loads(path.read_text("utf-8")) if path.exists() else {}
    new = dict(settings)
    new["wifi"] = dict(box["wifi"])
    new["host_url"] = box["host_url"]
    if not new.get("pin"):
        new["pin"] = box["host_pin"]
    if new != settings:
        write_atomic(path, json.dumps(new, ensure_ascii=False, indent=1), 0o600, gid, uid)


def read_request(path: Path) -> dict:
    """The app's Wi-Fi change request; never follows a symlink (the service user writes
    this directory, the reader is root)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        raw = f.read(4097)
    if len(raw) > 4096:
        raise ValueError("the request is too large")
    req = json.loads(raw.decode("utf-8"))
    if not isinstance(req, dict) or not set(req) <= {"ssid", "password"}:
        raise ValueError('a request is {"ssid": ..., "password": ...}')
    if not all(isinstance(v, str) for v in req.values()):
        raise ValueError("the Wi-Fi name and password are strings")
    return req


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="svoyak-box-setup", description=__doc__.split("\n")[0])
    p.add_argument("--data", default="/var/lib/svoyak", type=Path)
    p.add_argument("--keyfile", type=Path,
                   default=Path("/etc/NetworkManager/system-connections/svoyak-hotspot.nmconnection"))
    p.add_argument("--address", default="10.42.0.1")
    p.add_argument("--ssid-prefix", default="Svoyak-")
    p.add_argument("--user", default="svoyak", help="the service user (owns settings.json)")
    p.add_argument("--ssid")
    p.add_argument("--psk")
    p.add_argument("--pin")
    p.add_argument("--regenerate", action="store_true", help="a new name, password and PIN")
    p.add_argument("--request", type=Path, help="apply and remove the app's change request")
    p.add_argument("--reload", action="store_true", help="restart the access point now")
    args = p.parse_args(argv)
    if args.request is not None:
        if not args.request.exists() and not args.request.is_symlink():
            return 0
        try:
            req = read_request(args.request)
        except (OSError, ValueError) as e:
            print(f"svoyak-box-setup: {args.request}: refused: {e}", file=sys.stderr)
            return 2
        finally:
            args.request.unlink(missing_ok=True)
        args.ssid = req.get("ssid", args.ssid)
        args.psk = req.get("password", args.psk)

    path = args.data / "box.json"
    box = None if args.regenerate or not path.exists() else json.loads(path.read_text())
    box = box or generate(args.ssid_prefix, args.address)
    if args.ssid is not None:
        box["wifi"]["ssid"] = args.ssid
    if args.psk is not None:
        box["wifi"]["password"] = args.psk
    if args.pin is not None:
        box["host_pin"] = args.pin
    box["address"] = args.address
    box["host_url"] = f"http://{args.address}/host"
    try:
        validate(box)
    except ValueError as e:
        print(f"svoyak-box-setup: {e}", file=sys.stderr)
        return 2
    try:
        uid, gid = pwd.getpwnam(args.user).pw_uid, grp.getgrnam(args.user).gr_gid
    except KeyError:  # not provisioned yet (a test, a build host): keep the caller's
        uid = gid = -1
    text = json.dumps(box, ensure_ascii=False, indent=2) + "\n"
    args.data.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        write_atomic(path, text, 0o640, gid)
    seed_settings(args.data / "settings.json", box, uid, gid)
    if args.keyfile.exists():
        old = args.keyfile.read_text()
        new = update_keyfile(old, box["wifi"]["ssid"], box["wifi"]["password"])
        if new != old:
            write_atomic(args.keyfile, new, 0o600)
    else:
        print(f"svoyak-box-setup: no {args.keyfile}, Wi-Fi not configured", file=sys.stderr)
    if args.reload:
        subprocess.run(["nmcli", "connection", "reload"], check=False)
        subprocess.run(["nmcli", "connection", "up", "svoyak-hotspot"], check=False)
    print(f"Wi-Fi {box['wifi']['ssid']}, host PIN set, address {box['address']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
