#!/usr/bin/python3
"""Give a box its identity: Wi-Fi name and password and the first host PIN.

Runs at every boot before NetworkManager (svoyak-box-setup.service). The first time it
makes the identity and keeps it in the data directory's box.json (on the data partition,
so it survives an overlay root or a new image); every time it writes the access point's
keyfile from its template (which holds no name or password) and box.json, every value
escaped as NetworkManager's key file format requires. Without a valid identity it writes
no keyfile at all (and removes an old one): never an access point with a known password;
settings.json's wifi_error then tells the TV why. Options change the identity:
    svoyak-box-setup --ssid "Club Wi-Fi" --psk "a long password" --pin 246810 --reload
The admin page asks for a change without root: the app writes {"ssid": ..., "password":
...} (or {"network": "venue-wifi" | "venue-ethernet" | "hotspot", ...} for the venue
network mode) to DATA/wifi-request.json, and svoyak-wifi-request.path runs this tool with
--request, which applies it (or refuses it) and removes the file. With --fallback N (at
boot, svoyak-network-fallback.service) it starts the box's own access point when the
venue network is not up within N seconds. With --radio N (after NetworkManager,
svoyak-wifi-radio.service) it switches the Wi-Fi radio on and, if the radio is still off
after N seconds, tells the TV and the host why (settings.json's wifi_error_code "radio").
It also seeds the app's settings.json (webui/settings.py) beside it: the Wi-Fi details and
host address the TV's idle screen shows (always, from box.json), and the first host PIN
(only while the app has none: a PIN changed on the admin page is kept).
Standard library only: it runs with the system's python3, outside the app's virtualenv.
"""

from __future__ import annotations

import argparse
import contextlib
import grp
import json
import os
import pwd
import re
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _wifi_rules():
    """The Wi-Fi name and password rule the admin page uses too (webui/wifi_rules.py): in
    the repository a link beside this file, on the box installed by the hotspot role."""
    import importlib.util

    for folder in (Path(__file__).resolve().parent, Path("/usr/local/lib/svoyak")):
        path = folder / "svoyak_wifi_rules.py"
        if path.exists():
            spec = importlib.util.spec_from_file_location("svoyak_wifi_rules", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise SystemExit("svoyak-box-setup: svoyak_wifi_rules.py is missing (the hotspot role "
                     "installs it in /usr/local/lib/svoyak)")


wifi_rules = _wifi_rules()

# No look-alikes (0/o, 1/l/i): the password is read off a TV screen.
PSK_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
SUFFIX_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


# The host PIN: 6 digits on a new box, 6 to 12 when set (the app's rule, webui/auth.py and
# docs/webui.md: a stranger on the Wi-Fi needs weeks to guess 6 under the login's limits).
PIN_DIGITS = 6
PIN_RULE = re.compile(r"[0-9]{6,12}")


def new_pin() -> str:
    return f"{secrets.randbelow(10 ** PIN_DIGITS):0{PIN_DIGITS}d}"


def new_suffix() -> str:
    return "".join(secrets.choice(SUFFIX_ALPHABET) for _ in range(4))


def name_suffix(box: dict, ssid_prefix: str) -> str:
    """The box's own four letters and digits, made once: those of its generated Wi-Fi
    name (Svoyak-7K2M), else new ones kept in box.json (a fixed name names no box)."""
    suffix = box.get("name_suffix")
    if isinstance(suffix, str) and re.fullmatch(f"[{SUFFIX_ALPHABET}]{{4}}", suffix):
        return suffix
    ssid = str(box.get("wifi", {}).get("ssid", ""))
    tail = ssid[len(ssid_prefix):]
    if ssid.startswith(ssid_prefix) and re.fullmatch(f"[{SUFFIX_ALPHABET}]{{4}}", tail):
        return tail
    return new_suffix()


def mdns_name(hostname: str, suffix: str) -> str:
    """The box's name on a venue network (svoyak-7k2m, announced as svoyak-7k2m.local):
    each box its own, so two boxes on one network never answer for each other."""
    return f"{hostname}-{suffix.lower()}"


def generate(ssid_prefix: str, address: str) -> dict:
    suffix = new_suffix()
    return {
        "name_suffix": suffix,
        "wifi": {
            "ssid": f"{ssid_prefix}{suffix}",
            "password": "".join(secrets.choice(PSK_ALPHABET) for _ in range(10)),
            "security": "WPA",
        },
        "host_pin": new_pin(),
        "address": address,
    }


def validate(box: dict) -> None:
    wifi_rules.check(box["wifi"]["ssid"], box["wifi"]["password"])  # the admin page's rule
    if not PIN_RULE.fullmatch(box["host_pin"]):
        raise ValueError("the host PIN must be 6 to 12 digits")


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


def keyfile_string(value: str) -> str:
    """A string value as a GLib key file stores it (NetworkManager's keyfiles are GLib key
    files): backslash, newline, tab and carriage return escaped, and a leading space as
    ``\\s`` (GLib strips unescaped leading whitespace)."""
    out = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    out = out.replace("\r", "\\r")
    return "\\s" + out[1:] if out.startswith(" ") else out


def keyfile_ssid(ssid: str) -> str:
    """An SSID for NetworkManager's keyfile. NetworkManager reads ``ssid=`` as bytes: a
    value ending in ``;`` made of numbers is a byte list, and ``\\;`` is its escape for a
    semicolon. An SSID with ``;``, a backslash or a control character is therefore written
    as the byte list, which has no ambiguity; any other as a plain (GLib-escaped) string."""
    if any(c in ssid for c in ";\\") or any(ord(c) < 32 or ord(c) == 127 for c in ssid):
        return "".join(f"{b};" for b in ssid.encode())
    return keyfile_string(ssid)


def set_key(text: str, section: str, key: str, value: str | None) -> str:
    """The keyfile with `key` in `section` set to the already-escaped `value` (or removed
    for None); other lines untouched."""
    lines = text.splitlines()
    out: list[str] = []
    current, done = None, False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            if current == section and not done and value is not None:
                blank = 0
                while out and not out[-1 - blank].strip() and blank < len(out) - 1:
                    blank += 1
                out.insert(len(out) - blank, f"{key}={value}")
                done = True
            current = stripped[1:-1]
        elif current == section and stripped.split("=", 1)[0].strip() == key and "=" in line:
            if value is not None and not done:
                out.append(f"{key}={value}")
            done = True
            continue
        out.append(line)
    if not done and value is not None:
        if current != section:
            out.append(f"[{section}]")
        out.append(f"{key}={value}")
    return "\n".join(out) + "\n"


def render_keyfile(template: str, ssid: str, psk: str, autoconnect: bool = True) -> str:
    """The access point keyfile: the provisioned template (no secret in it) with the box's
    Wi-Fi name and password, every value escaped as the key file format requires."""
    text = set_key(template, "wifi", "ssid", keyfile_ssid(ssid))
    text = set_key(text, "wifi-security", "psk", keyfile_string(psk))
    return set_key(text, "connection", "autoconnect", "true" if autoconnect else "false")


NETWORK_MODES = ("hotspot", "venue-wifi", "venue-ethernet")
HOTSPOT = "svoyak-hotspot"
VENUE = "svoyak-venue"


def host_url(box: dict) -> str:
    """The host page's address for the TV's QR code: the access point's fixed address, or
    the box's mDNS name on a venue network (whose address the box learns only later)."""
    if box["network"]["mode"] == "hotspot":
        return f"http://{box['address']}/host"
    return f"http://{box['hostname']}.local/host"


def seed_settings(path: Path, box: dict, uid: int, gid: int, *, error: str | None = None,
                  hotspot: bool | None = None) -> None:
    """Merge the box identity into the app's settings file (service user only, 0600): the
    Wi-Fi the TV's QR code offers (the box's own, or the venue's), the host address, the
    first PIN, and ``wifi_error`` when there is no Wi-Fi to offer and why."""
    settings = json.loads(path.read_text("utf-8")) if path.exists() else {}
    new = dict(settings)
    if error is not None:
        new["wifi"] = {"ssid": "", "password": "", "security": "WPA"}
        new["wifi_error"] = error
        new.pop("wifi_error_code", None)
    else:
        new.pop("wifi_error", None)
        new.pop("wifi_error_code", None)  # the radio is checked again after NetworkManager
        on_hotspot = box["network"]["mode"] == "hotspot" if hotspot is None else hotspot
        if on_hotspot:
            new["wifi"] = dict(box["wifi"])
        elif box["network"]["mode"] == "venue-wifi":
            venue = box["network"]
            new["wifi"] = {"ssid": venue["ssid"], "password": venue.get("password", ""),
                           "security": "WPA" if venue.get("password") else "nopass"}
        else:  # Ethernet: the players join the venue's own Wi-Fi, which the box does not know
            new["wifi"] = {"ssid": "", "password": "", "security": "WPA"}
        new["host_url"] = (f"http://{box['address']}/host" if on_hotspot else host_url(box))
        new["network"] = box["network"]["mode"]
    if box and not new.get("pin"):
        new["pin"] = box["host_pin"]
        # A first PIN nobody has seen: the TV shows it until the host first logs in
        # (webui.settings, docs/webui.md "The first PIN").
        new["pin_on_board"] = True
    if new != settings:
        write_atomic(path, json.dumps(new, ensure_ascii=False, indent=1), 0o600, gid, uid)


def validate_network(network: dict) -> None:
    if network.get("mode") not in NETWORK_MODES:
        raise ValueError(f"the network mode is one of {', '.join(NETWORK_MODES)}")
    if network["mode"] == "venue-wifi":
        wifi_rules.check(network.get("ssid", ""), network.get("password", ""), venue=True)


def venue_keyfile(network: dict, wifi_interface: str, hostname: str = "svoyak") -> str | None:
    """The keyfile that joins the venue's network, or None in hotspot mode. It outranks
    the access point (autoconnect-priority), so NetworkManager prefers it when present."""
    mode = network["mode"]
    if mode == "hotspot":
        return None
    head = f"[connection]\nid={VENUE}\nautoconnect=true\nautoconnect-priority=200\n"
    tail = (f"\n[ipv4]\nmethod=auto\ndhcp-hostname={keyfile_string(hostname)}\n\n"
            "[ipv6]\nmethod=auto\n")
    if mode == "venue-ethernet":
        return head + "type=ethernet\n\n[ethernet]\n" + tail
    text = (head + f"type=wifi\ninterface-name={keyfile_string(wifi_interface)}\n\n"
            f"[wifi]\nmode=infrastructure\nssid={keyfile_ssid(network['ssid'])}\n")
    if network.get("password"):
        text += ("\n[wifi-security]\nkey-mgmt=wpa-psk\n"
                 f"psk={keyfile_string(network['password'])}\n")
    return text + tail


def read_request(path: Path) -> dict:
    """The app's Wi-Fi change request; never follows a symlink (the service user writes
    this directory, the reader is root)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        raw = f.read(4097)
    if len(raw) > 4096:
        raise ValueError("the request is too large")
    req = json.loads(raw.decode("utf-8"))
    if not isinstance(req, dict) or not set(req) <= {"ssid", "password", "network"}:
        raise ValueError('a request is {"ssid": ..., "password": ..., "network": ...}')
    if not all(isinstance(v, str) for v in req.values()):
        raise ValueError("the Wi-Fi name and password are strings")
    return req


def write_if_changed(path: Path, text: str | None, mode: int) -> bool:
    if text is None:
        if path.exists():
            path.unlink()
            return True
        return False
    if path.exists() and path.read_text("utf-8") == text:
        return False
    write_atomic(path, text, mode)
    return True


def nmcli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["nmcli", *args], capture_output=True, text=True, check=False)


NM_STATE = Path("/var/lib/NetworkManager/NetworkManager.state")


def enable_radio_state(path: Path) -> bool:
    """Raspberry Pi OS Lite, built without a Wi-Fi country, ships NetworkManager's state
    file with ``WirelessEnabled=false`` (the Imager's first-boot script normally undoes
    it): NetworkManager would then keep the radio off and the access point never comes
    up. Run before NetworkManager starts, this sets it true; other keys stay."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        text = "[main]\n"
    new = set_key(text, "main", "WirelessEnabled", "true")
    if new == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, new, 0o644)
    return True


AVAHI_CONF = Path("/etc/avahi/avahi-daemon.conf")


def announce_as(path: Path, name: str) -> bool:
    """avahi announces the box as NAME.local (its [server] host-name), its own name, not
    the image's: written before avahi starts. Nothing when avahi is not installed."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return False
    new = set_key(text, "server", "host-name", name)
    if new == text:
        return False
    write_atomic(path, new, 0o644)
    return True


def radio_problem() -> str | None:
    """Why the Wi-Fi radio is not on now (None when it is): NetworkManager's own view."""
    r = nmcli("-t", "-f", "WIFI-HW,WIFI", "radio")
    if r.returncode != 0:
        return f"NetworkManager does not answer ({(r.stderr or r.stdout).strip()})"
    hardware, _, software = r.stdout.strip().partition(":")
    if hardware != "enabled":
        return f"the Wi-Fi radio is {hardware or 'missing'} in hardware (rfkill hard block?)"
    if software != "enabled":
        return "NetworkManager keeps the Wi-Fi radio off"
    devices = [line.split(":") for line in nmcli("-t", "-f", "TYPE,STATE",
                                                  "device").stdout.splitlines()]
    states = [d[1] for d in devices if len(d) > 1 and d[0] == "wifi"]
    if not states:
        return "no Wi-Fi device (wlan0) was found"
    if all(s == "unavailable" for s in states):
        return "the Wi-Fi device is unavailable (firmware, or rfkill)"
    return None


def mark_radio(path: Path, error: str | None, uid: int, gid: int) -> None:
    """Tell the TV and the host (settings.json) that the radio is off and why, or clear it.
    The box's Wi-Fi details stay: they are right, the radio is what is missing."""
    settings = json.loads(path.read_text("utf-8")) if path.exists() else {}
    new = dict(settings)
    if error is not None:
        new.update(wifi_error=f"the Wi-Fi radio is off: {error}", wifi_error_code="radio")
    elif new.get("wifi_error_code") == "radio":
        new.pop("wifi_error", None)
        new.pop("wifi_error_code", None)
    if new != settings:
        write_atomic(path, json.dumps(new, ensure_ascii=False, indent=1), 0o600, gid, uid)


def radio(args: argparse.Namespace, box: dict, uid: int, gid: int) -> int:
    """After NetworkManager is up: switch the Wi-Fi radio on (what raspi-config does when
    a country is set) and wait up to --radio seconds for it; if it stays off, the TV's
    idle screen and the host page say so instead of offering a Wi-Fi nobody can join."""
    nmcli("radio", "wifi", "on")
    deadline = time.monotonic() + args.radio
    while (problem := radio_problem()) is not None and time.monotonic() < deadline:
        time.sleep(1)
        nmcli("radio", "wifi", "on")
    settings = args.data / "settings.json"
    if problem is None:
        mark_radio(settings, None, uid, gid)
        print("svoyak-box-setup: the Wi-Fi radio is on")
        return 0
    print(f"svoyak-box-setup: {problem}", file=sys.stderr)
    if box["network"]["mode"] == "venue-ethernet":
        return 0  # the evening needs no radio of the box's
    mark_radio(settings, problem, uid, gid)
    return 1


def fallback(args: argparse.Namespace, box: dict, uid: int, gid: int) -> int:
    """At boot, in a venue mode: wait for the venue connection; if it never comes up, bring
    the box's own access point up for this boot, so the evening still happens."""
    if box["network"]["mode"] == "hotspot":
        return 0
    deadline = time.monotonic() + args.fallback
    while time.monotonic() < deadline:
        active = nmcli("-t", "-f", "NAME", "connection", "show", "--active").stdout.split()
        if VENUE in active:
            print(f"svoyak-box-setup: on the venue network ({box['network']['mode']})")
            return 0
        time.sleep(2)
    print(f"svoyak-box-setup: the venue network did not come up in {args.fallback:g} s; "
          f"starting the box's own Wi-Fi {box['wifi']['ssid']} for this boot", file=sys.stderr)
    seed_settings(args.data / "settings.json", box, uid, gid, hotspot=True)
    r = nmcli("connection", "up", HOTSPOT)
    if r.returncode != 0:
        print(f"svoyak-box-setup: {r.stderr.strip()}", file=sys.stderr)
    return 0


def stored_identity(path: Path) -> bool:
    """A valid identity is on the data partition (a refused change then keeps it)."""
    try:
        validate(json.loads(path.read_text("utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="svoyak-box-setup", description=__doc__.split("\n")[0])
    p.add_argument("--data", default="/var/lib/svoyak", type=Path)
    p.add_argument("--keyfile", type=Path,
                   default=Path(f"/etc/NetworkManager/system-connections/{HOTSPOT}.nmconnection"))
    p.add_argument("--template", type=Path,
                   default=Path("/etc/svoyak/svoyak-hotspot.nmconnection.in"),
                   help="the access point keyfile without its name and password")
    p.add_argument("--venue-keyfile", type=Path, default=None,
                   help="default: svoyak-venue.nmconnection beside --keyfile")
    p.add_argument("--wifi-interface", default="wlan0")
    p.add_argument("--address", default="10.42.0.1")
    p.add_argument("--hostname", default="svoyak")
    p.add_argument("--ssid-prefix", default="Svoyak-")
    p.add_argument("--user", default="svoyak", help="the service user (owns settings.json)")
    p.add_argument("--fixed", type=Path, default=None,
                   help='a file {"ssid": ..., "password": ...} that wins (the playbook\'s '
                   'fixed Wi-Fi); ignored when absent')
    p.add_argument("--ssid")
    p.add_argument("--psk")
    p.add_argument("--pin")
    p.add_argument("--network", choices=NETWORK_MODES,
                   help="the box's own Wi-Fi, or join the venue's (Wi-Fi or Ethernet)")
    p.add_argument("--venue-ssid")
    p.add_argument("--venue-psk", default="")
    p.add_argument("--regenerate", action="store_true", help="a new name, password and PIN")
    p.add_argument("--request", type=Path, help="apply and remove the app's change request")
    p.add_argument("--reload", action="store_true", help="restart the access point now")
    p.add_argument("--fallback", type=float, metavar="SECONDS", default=None,
                   help="boot check: own Wi-Fi if the venue network is not up in SECONDS")
    p.add_argument("--avahi-conf", type=Path, default=AVAHI_CONF,
                   help="avahi's configuration (its host-name is set to the box's own name)")
    p.add_argument("--nm-state", type=Path, default=NM_STATE,
                   help="NetworkManager's state file (its WirelessEnabled is set true)")
    p.add_argument("--radio", type=float, metavar="SECONDS", default=None,
                   help="after NetworkManager: switch the Wi-Fi radio on, say so if it stays off")
    args = p.parse_args(argv)
    venue_path = args.venue_keyfile or args.keyfile.with_name(f"{VENUE}.nmconnection")
    try:
        uid, gid = pwd.getpwnam(args.user).pw_uid, grp.getgrnam(args.user).gr_gid
    except KeyError:  # not provisioned yet (a test, a build host): keep the caller's
        uid = gid = -1
    path = args.data / "box.json"
    requested = args.request is not None
    if requested:
        if not args.request.exists() and not args.request.is_symlink():
            return 0
        try:
            req = read_request(args.request)
        except (OSError, ValueError) as e:
            print(f"svoyak-box-setup: {args.request}: refused: {e}", file=sys.stderr)
            return 2
        finally:
            args.request.unlink(missing_ok=True)
        if "network" in req:
            args.network = req["network"]
            if req["network"] == "venue-wifi":
                args.venue_ssid, args.venue_psk = req.get("ssid"), req.get("password", "")
        else:
            args.ssid = req.get("ssid", args.ssid)
            args.psk = req.get("password", args.psk)

    try:
        if args.fixed is not None and args.fixed.exists():
            fixed = json.loads(args.fixed.read_text("utf-8"))
            args.ssid = args.ssid if args.ssid is not None else fixed.get("ssid") or None
            args.psk = args.psk if args.psk is not None else fixed.get("password") or None
        box = None if args.regenerate or not path.exists() else json.loads(path.read_text())
        box = box or generate(args.ssid_prefix, args.address)
        if not PIN_RULE.fullmatch(str(box.get("host_pin", ""))):
            box["host_pin"] = new_pin()  # an older box's 4 digits (the app keeps its own)
        if args.ssid is not None:
            box["wifi"]["ssid"] = args.ssid
        if args.psk is not None:
            box["wifi"]["password"] = args.psk
        if args.pin is not None:
            box["host_pin"] = args.pin
        box["address"] = args.address
        box["name_suffix"] = name_suffix(box, args.ssid_prefix)
        box["hostname"] = mdns_name(args.hostname, box["name_suffix"])
        box.setdefault("network", {"mode": "hotspot"})
        if args.network is not None:
            box["network"] = {"mode": args.network}
            if args.network == "venue-wifi":
                box["network"].update(ssid=args.venue_ssid or "", password=args.venue_psk)
        box["host_url"] = host_url(box)
        validate(box)
        validate_network(box["network"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"svoyak-box-setup: {e}", file=sys.stderr)
        if not requested and args.fallback is None and args.radio is None \
                and not stored_identity(path):
            # Never an access point with a password anyone could know: no identity, no
            # hotspot, and the TV says why (settings.json's wifi_error).
            write_if_changed(args.keyfile, None, 0o600)
            with contextlib.suppress(OSError, ValueError):
                args.data.mkdir(parents=True, exist_ok=True)
                seed_settings(args.data / "settings.json", {}, uid, gid,
                              error=f"the box's Wi-Fi identity could not be made: {e}")
        return 2
    if args.fallback is not None:
        return fallback(args, box, uid, gid)
    if args.radio is not None:
        return radio(args, box, uid, gid)

    text = json.dumps(box, ensure_ascii=False, indent=2) + "\n"
    args.data.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        write_atomic(path, text, 0o640, gid)
    seed_settings(args.data / "settings.json", box, uid, gid)
    if not requested:  # at boot, before NetworkManager and avahi read them
        try:
            enable_radio_state(args.nm_state)
        except OSError as e:
            print(f"svoyak-box-setup: {args.nm_state}: {e}", file=sys.stderr)
        try:
            announce_as(args.avahi_conf, box["hostname"])
        except OSError as e:
            print(f"svoyak-box-setup: {args.avahi_conf}: {e}", file=sys.stderr)
    if args.template.exists():
        keyfile = render_keyfile(args.template.read_text("utf-8"), box["wifi"]["ssid"],
                                 box["wifi"]["password"], box["network"]["mode"] == "hotspot")
        write_if_changed(args.keyfile, keyfile, 0o600)
        write_if_changed(venue_path, venue_keyfile(box["network"], args.wifi_interface,
                                                   box["hostname"]), 0o600)
    else:
        print(f"svoyak-box-setup: no {args.template}, Wi-Fi not configured", file=sys.stderr)
    if args.reload:
        nmcli("connection", "reload")
        target = HOTSPOT if box["network"]["mode"] == "hotspot" else VENUE
        if target == VENUE:
            nmcli("connection", "down", HOTSPOT)
        nmcli("connection", "up", target)
    print(f"Wi-Fi {box['wifi']['ssid']}, host PIN set, address {box['address']}, "
          f"network {box['network']['mode']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
