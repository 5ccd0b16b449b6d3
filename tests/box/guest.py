"""What the test disk adds to the provisioned tree, and how it is made to look freshly flashed.

The test layer (nothing of it is on a real box): the kernel's modules (a Pi's image has its
own), the harness's command agent, the virtual Wi-Fi radios and GPIO chip, lgpio from PyPI
(Raspberry Pi OS ships it as python3-lgpio, which Debian does not have), busybox for the
phones' DHCP client, and a /proc/cpuinfo for the game server saying it runs on a Pi 4.

Fresh card: Raspberry Pi OS Lite images since 2024-11-19 leave the Wi-Fi radio off when no
Wi-Fi country was set at build time (pi-gen stage2/02-net-tweaks writes NetworkManager.state
with WirelessEnabled=false, before site.yml runs on the image: like_pi_os(), and blocks the
radio through rfkill: the test kernel's command line says rfkill.default_state=0). No
machine identity, no box identity or settings (the data partition is empty), the journal
in RAM (the base role's own setting).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

FILES = Path(__file__).resolve().parent / "files"
TEST_DIR = "usr/local/lib/svoyak-test"
UNITS = ["svoyak-test-agent.service", "svoyak-test-radios.service",
         "svoyak-test-gpiosim.service"]
# Test tools the box's image lacks; wpasupplicant is also what NetworkManager's access
# point needs (Raspberry Pi OS Lite ships it; a minimal Debian tree may not).
PACKAGES = ["wpasupplicant", "iproute2", "iw", "kmod", "procps"]
APT = ("DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 "
       "--no-install-recommends install")


def add_test_layer(tree: Path, kernel: Path, in_tree: Callable[[Path, str], None],
                   extra_modules: dict[str, Path] | None = None, busybox: Path | None = None,
                   kver: str = "6.1.0-57-amd64") -> None:
    modules = tree / "lib/modules" / kver
    shutil.rmtree(modules, ignore_errors=True)
    shutil.copytree(kernel / "lib/modules" / kver, modules, symlinks=True)
    for name, path in (extra_modules or {}).items():
        (modules / "extra").mkdir(exist_ok=True)
        shutil.copy2(path, modules / "extra" / f"{name}.ko")
    in_tree(tree, f"{APT} {' '.join(PACKAGES)} >/dev/null")
    in_tree(tree, f"depmod {kver}")
    in_tree(tree, "PIP_CERT=/etc/ssl/host-ca.crt /opt/svoyak/venv/bin/pip install -q "
                  "--disable-pip-version-check lgpio")

    test_dir = tree / TEST_DIR
    test_dir.mkdir(parents=True, exist_ok=True)
    for name in ("agent.py", "radios.sh", "phones.sh", "gpiosim.sh", "cpuinfo", "phone.py",
                 "udhcpc.sh"):
        shutil.copy2(FILES / name, test_dir / name)
    if busybox is not None:
        shutil.copy2(busybox, test_dir / "busybox")
    units = tree / "etc/systemd/system"
    for name in UNITS:
        shutil.copy2(FILES / name, units / name)
    chromium = tree / "etc/chromium.d"
    chromium.mkdir(parents=True, exist_ok=True)
    shutil.copy2(FILES / "svoyak-test-chromium", chromium / "svoyak-test-vm")
    for unit, conf in (("svoyak.service", "svoyak-test-pi.conf"),
                       ("svoyak-kiosk.service", "svoyak-test-kiosk.conf"),
                       ("svoyak-kiosk-watch.service", "svoyak-test-kiosk-watch.conf")):
        dropin = units / f"{unit}.d"
        dropin.mkdir(exist_ok=True)
        shutil.copy2(FILES / conf, dropin / conf)
    subprocess.run(["systemctl", f"--root={tree}", "enable", *UNITS], check=True,
                   capture_output=True)
    # The emulated machine runs some ten times slower than a Pi: udev names the data
    # partition well after the fstab line's 20 s device timeout, which a Pi's card never
    # comes near. The test gives the device three minutes (the generator's own drop-in
    # name, so this one replaces it).
    device = units / "dev-disk-by\\x2dlabel-svoyak\\x2ddata.device.d"
    device.mkdir(exist_ok=True)
    (device / "50-device-timeout.conf").write_text(
        "# Test box only (tests/box/guest.py): an emulated machine is slow.\n"
        "[Unit]\nJobRunningTimeoutSec=180\n")
    (tree / "etc/svoyak-test").mkdir(exist_ok=True)


PI_OS_STATE = "[main]\nWirelessEnabled=false\n"


def like_pi_os(tree: Path) -> None:
    """What Raspberry Pi OS Lite's own build leaves that matters here, before site.yml:
    pi-gen's stage2/02-net-tweaks writes NetworkManager.state with the radio off when no
    Wi-Fi country was set (the Imager undoes it at first boot only if told a country)."""
    nm = tree / "var/lib/NetworkManager"
    nm.mkdir(parents=True, exist_ok=True)
    (nm / "NetworkManager.state").write_text(PI_OS_STATE)


def make_fresh(tree: Path) -> None:
    """The state of a card just written by the Imager, before its first boot."""
    (tree / "etc/machine-id").write_text("")
    (tree / "var/lib/dbus/machine-id").unlink(missing_ok=True)
    for leftover in ("usr/sbin/policy-rc.d", "etc/resolv.conf"):
        (tree / leftover).unlink(missing_ok=True)
    shutil.rmtree(tree / "root/.cache", ignore_errors=True)
    data = tree / "var/lib/svoyak"
    for child in data.iterdir() if data.exists() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
