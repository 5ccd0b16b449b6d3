"""One booted test box: QEMU on a copy-on-write overlay of the base disk.

The VM has Debian's kernel and the test initramfs (image.py), the box's disk on virtio, a
virtio GPU (the TV), and one test-only Ethernet through QEMU's user networking with
`restrict=on` (nothing inside reaches anything outside; the host reaches the box's port 80
and the command agent only through forwards on 127.0.0.1). The serial console goes to a
file. KVM when asked for and it works (SVOYAK_BOX_ACCEL=kvm), else TCG (BOOT-TEST.md:
a KVM guest hung at boot on these machines); `accel` says which ran.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import image

KERNEL_ARGS = [
    "root=/dev/vda1", "console=ttyS0,115200", "panic=-1",
    # A fresh Raspberry Pi OS card boots with its Wi-Fi radio blocked (guest.py).
    "rfkill.default_state=0",
    # What the box's own cmdline.txt carries on a Pi (the hotspot role writes it there).
    "cfg80211.ieee80211_regdom=RU",
    "systemd.show_status=1",
    # Under TCG on a loaded host the emulated CPU is too slow for the kernel's check that
    # the timer interrupt arrives through the IO-APIC: it panics ("IO-APIC + timer doesn't
    # work!") before anything else runs. The check is for broken boards, not VMs.
    "no_timer_check",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BoxError(AssertionError):
    pass


class Box:
    """A VM of the box. `start()` boots it (again, after `kill()` or `poweroff()`, on the same
    disk overlay); `sh()` runs a command inside; `http()` asks its web server."""

    def __init__(self, workdir: Path, base: Path, *, accel: str | None = None,
                 memory_mib: int = 2048, cpus: int = 2, gpu: bool = True) -> None:
        self.workdir = workdir
        self.base = base
        self.accel = accel or os.environ.get("SVOYAK_BOX_ACCEL", "tcg")
        self.memory_mib, self.cpus, self.gpu = memory_mib, cpus, gpu
        self.disk = workdir / "disk.qcow2"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.boots = 0
        workdir.mkdir(parents=True, exist_ok=True)
        if not self.disk.exists():
            subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                            str(base), str(self.disk)], check=True)

    # --- life ---------------------------------------------------------------------------

    def command(self) -> list[str]:
        accel = ["-accel", "kvm", "-cpu", "host"] if self.accel == "kvm" else [
            "-accel", "tcg,thread=multi", "-cpu", "max"]
        self.http_port, self.agent_port = free_port(), free_port()
        net = (f"user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{self.http_port}-:80,"
               f"hostfwd=tcp:127.0.0.1:{self.agent_port}-:7000")
        cmd = ["qemu-system-x86_64", "-machine", "q35", *accel,
               "-smp", str(self.cpus), "-m", str(self.memory_mib), "-nodefaults",
               "-no-reboot", "-display", "none",
               "-kernel", str(image.vmlinuz()), "-initrd", str(image.initramfs()),
               "-append", " ".join(KERNEL_ARGS),
               "-drive", f"file={self.disk},if=virtio,format=qcow2,cache=writeback",
               "-netdev", net, "-device", "virtio-net-pci,netdev=n0",
               "-device", "virtio-rng-pci",
               "-serial", f"file:{self.serial_log}",
               "-qmp", f"unix:{self.qmp_path},server=on,wait=off"]
        if self.gpu:
            cmd += ["-device", "virtio-gpu-pci,xres=1280,yres=720"]
        return cmd

    @property
    def serial_log(self) -> Path:
        return self.workdir / f"serial-{self.boots}.log"

    @property
    def qmp_path(self) -> Path:
        return self.workdir / "qmp.sock"

    def start(self) -> None:
        assert self.proc is None, "already running"
        self.boots += 1
        self.qmp_path.unlink(missing_ok=True)
        cmd = self.command()
        self.started = time.monotonic()
        with open(self.workdir / f"qemu-{self.boots}.log", "wb") as out:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def since_start(self) -> float:
        return time.monotonic() - self.started

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """Pull the plug: QEMU killed at once, nothing flushed that the guest had not."""
        if self.proc is not None:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def poweroff(self, timeout: float = 240) -> None:
        if self.proc is None:
            return
        try:
            self.sh("systemctl --no-block poweroff", timeout=20)
            self.proc.wait(timeout=timeout)
        except Exception:
            pass
        self.kill()

    def serial(self) -> str:
        try:
            return self.serial_log.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, n: int = 4000) -> str:
        return f"\n--- serial console (boot {self.boots}) ---\n{self.serial()[-n:]}"

    # --- the agent ----------------------------------------------------------------------

    def wait_agent(self, timeout: float = 600) -> float:
        """Seconds from QEMU start until the command agent answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise BoxError("QEMU exited" + self.tail())
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.agent_port, timeout=5)
                conn.request("GET", "/ping")
                if conn.getresponse().status == 200:
                    return self.since_start()
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(1)
        raise BoxError(f"no agent after {timeout:.0f} s" + self.tail())

    def sh(self, cmd: str, timeout: float = 120, check: bool = True, input: str = "") -> str:
        """A shell command inside the box (root); its standard output."""
        conn = http.client.HTTPConnection("127.0.0.1", self.agent_port, timeout=timeout + 30)
        body = json.dumps({"cmd": cmd, "timeout": timeout, "input": input})
        conn.request("POST", "/run", body=body, headers={"Content-Type": "application/json"})
        r = json.loads(conn.getresponse().read())
        if check and r["rc"] != 0:
            raise BoxError(f"in the box: {cmd}\nrc={r['rc']}\n{r['out'][-3000:]}"
                           f"\n{r['err'][-3000:]}")
        return r["out"]

    def wait_for(self, cmd: str, timeout: float, what: str) -> str:
        """Run cmd until it succeeds; its output."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                return self.sh(cmd, timeout=60)
            except BoxError as e:
                last = str(e)
            except (OSError, http.client.HTTPException) as e:
                last = repr(e)
            time.sleep(2)
        raise BoxError(f"{what}: not within {timeout:.0f} s\n{last[-3000:]}")

    # --- the box's web server, from the host ------------------------------------------------

    def http(self, path: str, timeout: float = 30,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()

    def wait_board(self, timeout: float = 900) -> tuple[float, str]:
        """Seconds from QEMU start until the board page answers (the first time only), and
        the page."""
        self.wait_agent(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise BoxError("QEMU exited" + self.tail())
            try:
                status, _, body = self.http("/board", timeout=20)
                if status == 200:
                    return self.since_start(), body.decode()
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(1)
        raise BoxError("the board page never answered\n" + self.sh(
            "systemctl status --no-pager svoyak.service; journalctl -b --no-pager -n 80 "
            "-u svoyak.service", check=False) + self.tail())

    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def pin(self) -> str:
        """The host PIN as the box keeps it (the first one is made at first boot)."""
        return str(json.loads(self.sh("cat /var/lib/svoyak/settings.json"))["pin"])

    # --- the screen ---------------------------------------------------------------------

    def qmp(self, command: str, **arguments: object) -> dict:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(60)
            s.connect(str(self.qmp_path))
            f = s.makefile("rwb")
            f.readline()
            for msg in ({"execute": "qmp_capabilities"},
                        {"execute": command, "arguments": arguments}):
                f.write(json.dumps(msg).encode() + b"\n")
                f.flush()
                while True:
                    reply = json.loads(f.readline())
                    if "return" in reply or "error" in reply:
                        break
            return reply

    def screendump(self, path: Path, fmt: str = "png") -> Path:
        """What the TV shows: the virtual GPU's scan-out (png or ppm)."""
        reply = self.qmp("screendump", filename=str(path), format=fmt)
        if "error" in reply:
            raise BoxError(f"screendump: {reply['error']}")
        return path
