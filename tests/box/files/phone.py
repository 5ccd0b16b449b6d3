"""A phone inside the test box: run in a phone's network namespace (`ip netns exec phoneN`),
whose only interface is a virtual Wi-Fi radio (radios.sh), so everything it sends goes
over the air to the box's access point. Test disk only.

    phone.py radio                 a new radio of its own (the namespace's only interface)
    phone.py join NS SSID PSK [S]  wpa_supplicant joins with WPA2-PSK, busybox udhcpc gets
                                   an address; prints {"iface", "ip", "router", "dns"}
    phone.py probe NS NAME PATH    resolves NAME with the DHCP-given DNS and GETs PATH from
                                   it; prints {"address", "status", "location"}
    phone.py mdns NAME             asks for NAME by multicast DNS; prints {"address"}
    phone.py press ADDRESS SEAT    a player's phone page in SEAT presses its buzzer; prints
                                   the box's answer
    phone.py play ADDRESS SEAT P   in the room for one question (SEAT -1: a spectator),
                                   pressing at the lamp when P is 1; prints the answerer
    phone.py leave NS              stops the phone's wpa_supplicant
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

TEST_DIR = Path("/usr/local/lib/svoyak-test")
RUN = Path("/run/svoyak-test")


def iface() -> str:
    names = [n for n in os.listdir("/sys/class/net") if n != "lo"]
    assert len(names) == 1, names
    return names[0]


def join(ns: str, ssid: str, psk: str, timeout: str = "180") -> dict[str, object]:
    dev, seconds = iface(), float(timeout)
    leave(ns)  # a phone that tried before starts over
    ctrl = RUN / ns
    ctrl.mkdir(parents=True, exist_ok=True)
    for stale in ctrl.iterdir():  # control sockets of a supplicant that is gone
        if stale.is_socket():
            stale.unlink()
    conf = ctrl / "wpa.conf"
    conf.write_text(f"ctrl_interface={ctrl}\nnetwork={{\n  ssid={ssid.encode().hex()}\n"
                    f"  psk={json.dumps(psk)}\n  key_mgmt=WPA-PSK\n  proto=RSN\n}}\n")
    subprocess.run(["ip", "link", "set", dev, "up"], check=True)
    subprocess.run(["wpa_supplicant", "-B", "-i", dev, "-c", str(conf), "-P",
                    str(ctrl / "wpa.pid"), "-f", str(ctrl / "wpa.log")], check=True)
    deadline = time.monotonic() + seconds
    # Associated once the supplicant logs CTRL-EVENT-CONNECTED: read from its log file, not
    # asked with wpa_cli every second (twenty phones' wpa_cli processes a second are what
    # an emulated two-core box cannot spare while the same phones ask for addresses).
    log = ctrl / "wpa.log"
    while "CTRL-EVENT-CONNECTED" not in (log.read_text(errors="replace")
                                          if log.exists() else ""):
        if time.monotonic() > deadline:
            r = subprocess.run(["wpa_cli", "-p", str(ctrl), "-i", dev, "status"],
                               capture_output=True, text=True)
            state = dict(line.split("=", 1) for line in r.stdout.splitlines()
                         if "=" in line).get("wpa_state", "")
            raise SystemExit(f"{ns}: not associated ({state}):\n{log.read_text()}")
        time.sleep(1)
    leased = ctrl / "lease.json"
    leased.unlink(missing_ok=True)
    # DHCP for as long as the phone has left (a discover every 3 s), not udhcpc's own 20
    # tries: a room's phones asking at once on an emulated box wait their turn.
    left = max(20.0, deadline - time.monotonic())
    r = subprocess.run([str(TEST_DIR / "busybox"), "udhcpc", "-i", dev, "-n", "-q", "-f",
                        "-t", str(int(left // 3) + 1), "-T", "3", "-s",
                        str(TEST_DIR / "udhcpc.sh")],
                       env={**os.environ, "LEASE": str(leased)}, capture_output=True,
                       text=True, timeout=left + 30)
    if r.returncode != 0 or not leased.exists():
        raise SystemExit(f"{ns}: associated, but no DHCP lease in {left:.0f} s:\n"
                         f"{(r.stdout + r.stderr)[-1500:]}")
    record = json.loads(leased.read_text())
    record["joined_s"] = round(seconds - (deadline - time.monotonic()), 1)
    leased.write_text(json.dumps(record))
    return {"iface": dev, **lease(ns)}


def lookup(name: str, server: str, port: int = 53, timeout: float = 20) -> str:
    """One DNS question for NAME's IPv4 address, asked of server:port; the first answer.
    (Port 5353 and the multicast group: multicast DNS, in its one-shot "legacy unicast"
    form, which the responder answers to the asking port directly.)"""
    qid = random.randrange(1 << 16)
    qname = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
    flags = 0 if port == 5353 else 0x0100  # recursion desired, for an ordinary server
    packet = struct.pack(">HHHHHH", qid, flags, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s.sendto(packet, (server, port))
            try:
                data, _ = s.recvfrom(4096)
            except TimeoutError:
                continue
            if data[:2] == packet[:2] and struct.unpack(">H", data[6:8])[0] > 0:
                return socket.inet_ntoa(data[-4:])
    raise SystemExit(f"no DNS answer for {name} from {server}:{port}")


def lease(ns: str) -> dict[str, str]:
    return dict(json.loads((RUN / ns / "lease.json").read_text()))


def probe(ns: str, name: str, path: str) -> dict[str, object]:
    """What a phone's captive-portal check does: NAME through the DNS server its lease
    gave, then a GET of PATH from the address it got."""
    address = lookup(name, lease(ns)["dns"].split()[0])
    conn = http.client.HTTPConnection(address, 80, timeout=60)
    conn.request("GET", path, headers={"Host": name})
    r = conn.getresponse()
    return {"address": address, "status": r.status, "location": r.getheader("Location")}


def mdns(name: str) -> dict[str, object]:
    return {"address": lookup(name, "224.0.0.251", 5353)}


class Page:
    """A phone's page in a few lines: Socket.IO over Engine.IO long-polling (plain HTTP)."""

    BASE = "/socket.io/?EIO=4&transport=polling"

    def __init__(self, address: str, auth: dict[str, object], timeout: float = 60) -> None:
        self.address, self.timeout = address, timeout
        opened = self._get(self.BASE)[0]
        assert opened.startswith("0"), opened
        self.path = f"{self.BASE}&sid={json.loads(opened[1:])['sid']}"
        self._post("40" + json.dumps(auth))

    def _get(self, path: str) -> list[str]:
        conn = http.client.HTTPConnection(self.address, timeout=self.timeout)  # host[:port]
        conn.request("GET", path)
        return conn.getresponse().read().decode().split("\x1e")

    def _post(self, body: str) -> None:
        conn = http.client.HTTPConnection(self.address, timeout=self.timeout)
        conn.request("POST", self.path, body=body.encode(),
                     headers={"Content-Type": "text/plain;charset=UTF-8"})
        assert conn.getresponse().read().lower() == b"ok"

    def packets(self, seconds: float):  # noqa: ANN201 (a generator of Socket.IO packets)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for packet in self._get(self.path):
                if packet == "2":  # Engine.IO ping
                    self._post("3")
                elif packet.startswith("44"):
                    raise SystemExit(f"refused: {packet}")
                else:
                    yield packet
        raise SystemExit("timed out")

    def emit(self, event: str, data: object, ack: int) -> None:
        self._post(f"42{ack}" + json.dumps([event, data]))


def press(address: str, seat: str, timeout: float = 60) -> dict[str, object]:
    """A player's phone in `seat` presses its buzzer; the box's answer to the press."""
    page = Page(address, {"role": "player", "seat": int(seat)}, timeout)
    sent = False
    for packet in page.packets(timeout):
        if packet.startswith("40") and not sent:
            page.emit("press", {}, 1)
            sent = True
        elif packet.startswith("431"):
            return {"answer": json.loads(packet[3:])[0]}
    return {}


def play(address: str, seat: str, presses: str, timeout: float = 240) -> dict[str, object]:
    """A phone in the room for one question: a player of `seat` (or a spectator, seat -1)
    watching the views; when `presses` is 1 it presses as soon as the lamp is on. Returns
    the answerer the views named."""
    auth: dict[str, object] = {"role": "player"}
    if int(seat) >= 0:
        auth["seat"] = int(seat)
    page = Page(address, auth, 60)
    pressed = ready = False
    for packet in page.packets(timeout):
        if not packet.startswith('42["view"'):
            continue
        if not ready:
            print("ready", file=sys.stderr, flush=True)  # in the room
            ready = True
        view = (json.loads(packet[2:])[1].get("view") or {})
        if view.get("phase") == "buttons" and presses == "1" and not pressed:
            page.emit("press", {}, 1)
            pressed = True
        if view.get("phase") == "answering":
            return {"answerer": view["question"]["answerer"], "pressed": pressed}
    return {}


def radio() -> dict[str, object]:
    """A new virtual radio (mac80211_hwsim's HWSIM_CMD_NEW_RADIO over generic netlink), made
    in the box's namespace (mac80211_hwsim lets only radios made in one namespace hear each
    other; phones.sh then moves it to the phone's). Its rfkill switch is unblocked (a
    phone's own Wi-Fi is on)."""
    before = set(os.listdir("/sys/class/ieee80211"))
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16) as s:  # NETLINK_GENERIC
        s.bind((0, 0))

        def request(kind: int, cmd: int, attrs: bytes) -> bytes:
            body = struct.pack("=BBH", cmd, 1, 0) + attrs
            s.send(struct.pack("=IHHII", 16 + len(body), kind, 1 | 4, 1, 0) + body)
            return s.recv(65536)

        name = b"MAC80211_HWSIM\0"
        attr = struct.pack("=HH", 4 + len(name), 2) + name  # CTRL_ATTR_FAMILY_NAME
        reply = request(0x10, 3, attr + b"\0" * (-len(attr) % 4))  # CTRL_CMD_GETFAMILY
        family, at = None, 20
        while at + 4 <= len(reply):
            length, kind = struct.unpack_from("=HH", reply, at)
            if kind == 1:  # CTRL_ATTR_FAMILY_ID
                family = struct.unpack_from("=H", reply, at + 4)[0]
            at += max(4, (length + 3) & ~3)
        assert family is not None, "no mac80211_hwsim netlink family"
        answer = request(family, 4, b"")  # HWSIM_CMD_NEW_RADIO
        error = struct.unpack_from("=i", answer, 16)[0]
        assert error >= 0, f"new radio refused: {error}"
    deadline = time.monotonic() + 30
    while not (set(os.listdir("/sys/class/ieee80211")) - before):
        assert time.monotonic() < deadline, "the new radio did not appear"
        time.sleep(0.1)
    phy = sorted(set(os.listdir("/sys/class/ieee80211")) - before)[0]
    for entry in Path(f"/sys/class/ieee80211/{phy}").glob("rfkill*/soft"):
        entry.write_text("0")
    return {"phy": phy}


def leave(ns: str) -> dict[str, object]:
    """Stop the phone's wpa_supplicant (the one started with this phone's configuration)
    and wait until it is gone."""
    conf = str(RUN / ns / "wpa.conf").encode()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if conf in (proc / "cmdline").read_bytes().split(b"\0"):
                os.kill(int(proc.name), 15)
                deadline = time.monotonic() + 10
                while proc.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
        except (OSError, ProcessLookupError):
            pass
    return {}


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    commands = {"radio": radio, "join": join, "probe": probe, "mdns": mdns, "press": press,
                "play": play, "leave": leave}
    result = commands[command](*args)
    print(json.dumps(result))
