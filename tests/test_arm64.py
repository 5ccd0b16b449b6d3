"""The box's software on arm64, the Raspberry Pi's architecture, under qemu user-mode
emulation (qemu-user-static with binfmt; scripts/test-deps.sh installs and registers it).

A Debian bookworm arm64 tree is made once with debootstrap and cached beside the amd64 one
(tests/provisioning_chroot.py), with a virtualenv of the project's runtime dependencies
from PyPI (their arm64 wheels, lgpio included) cached on top of it. Each run copies that,
installs this commit's wheel and checks, under emulation: `svoyak --help`; gpiozero and
lgpio import; without --simulate the pin factory fails loudly (this machine has no GPIO
chip, like a Pi whose chip is not reachable) and `svoyak buttons test` says so; lgpio's
notification pipe needs a writable working directory (why the unit sets one); the box
identity tool writes a keyfile that arm64 NetworkManager's own parser reads back.

The full site.yml on arm64 is `make test-arm64` (docs/appliance.md has its time)."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provisioning_chroot as chroot  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARCH = "arm64"
VENV = "/opt/svoyak/venv"
BINFMT = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")


def runtime_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["pi"]]


def sh(tree: Path, command: str, **kwargs) -> subprocess.CompletedProcess:
    """A shell command with the tree's mounts (private namespace) and a clean environment."""
    env = ("env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "
           "PIP_CERT=/etc/ssl/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1")
    return chroot.run_in_namespace(tree, f"{env} {command}", capture_output=True, text=True,
                                   **kwargs)


def smoke_layer() -> Path:
    """The arm64 base tree plus a virtualenv of the runtime dependencies, cached by the base
    tree's key, their list and the code that installs them (a change of pyproject.toml's
    dependencies makes a new one)."""
    reqs = runtime_requirements()
    key = chroot.digest(chroot.base_key(ARCH), *reqs, VENV, inspect.getsource(make_venv))
    return chroot.layer(f"{chroot.SUITE}-{ARCH}-venv", key, lambda tmp: make_venv(tmp, reqs),
                        max_age_s=chroot.FETCHED_MAX_AGE_S)


def make_venv(tmp: Path, reqs: list[str]) -> None:
    chroot.fresh_copy(tmp, arch=ARCH)
    (tmp / "root/requirements.txt").write_text("\n".join(reqs) + "\n")
    r = sh(tmp, f"chroot '{tmp}' sh -c 'python3 -m venv --system-site-packages {VENV} && "
           f"{VENV}/bin/pip install -q --only-binary=:all: -r /root/requirements.txt && "
           f"{VENV}/bin/python -c \"import flask, flask_socketio, gpiozero, segno\"'")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the arm64 chroot needs root (CI runs as root)")
    if not BINFMT.exists():
        pytest.fail(f"no {BINFMT}: run scripts/test-deps.sh (qemu-user-static + binfmt)")
    wheel = chroot.wheel(tmp_path_factory.mktemp("dist"))
    run = chroot.cache_dir() / f"run-{ARCH}-{os.getpid()}"
    with chroot.scratch_copy(smoke_layer(), run) as root:
        (root / "tmp" / wheel.name).write_bytes(wheel.read_bytes())
        r = sh(root, f"chroot '{root}' {VENV}/bin/pip install -q --no-deps /tmp/{wheel.name}")
        assert r.returncode == 0, r.stdout + r.stderr
        yield root


def in_tree(root: Path, command: str, cwd: str = "/") -> subprocess.CompletedProcess:
    return sh(root, f"chroot '{root}' sh -c 'cd {cwd} && {command}'")


def test_the_tree_is_arm64(tree):
    r = in_tree(tree, "uname -m && dpkg --print-architecture")
    assert r.stdout.split() == ["aarch64", "arm64"], r.stderr


def test_svoyak_help_runs(tree):
    r = in_tree(tree, f"{VENV}/bin/svoyak --help")
    assert r.returncode == 0, r.stderr
    assert "usage: svoyak" in r.stdout and "buttons" in r.stdout


def test_gpiozero_and_lgpio_import(tree):
    (tree / "tmp/imports.py").write_text(
        "from importlib.metadata import version\nimport gpiozero, lgpio\n"
        "from gpiozero.pins.lgpio import LGPIOFactory\n"
        "print(version('gpiozero'), version('lgpio'))\n")
    r = in_tree(tree, f"{VENV}/bin/python /tmp/imports.py", cwd="/var/tmp")
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"2\.\S+ 0\.2\S*\n", r.stdout), r.stdout


def test_without_simulate_no_gpio_chip_is_loud(tree):
    """The real lgpio finds no /dev/gpiochip* here (as on a Pi whose chip it cannot open):
    the factory raises, and the self-test exits 3 with the reason and where to look."""
    (tree / "tmp/choose.py").write_text("import gpio\ngpio.choose()\n")
    r = in_tree(tree, f"{VENV}/bin/python /tmp/choose.py", cwd="/var/tmp")
    assert r.returncode != 0 and "GpioUnavailable" in r.stderr, r.stderr
    r = in_tree(tree, f"{VENV}/bin/svoyak buttons test --step 0 --seconds 0 </dev/null",
                cwd="/var/tmp")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "the GPIO pins cannot be used" in r.stderr and "wiring.md" in r.stderr
    r = in_tree(tree, f"{VENV}/bin/svoyak buttons test --simulate --step 0 --seconds 0 "
                "</dev/null", cwd="/var/tmp")
    assert r.returncode == 0, r.stdout + r.stderr


def test_lgpio_notification_pipe_needs_a_writable_working_directory(tree):
    """lgpio opens its notification pipe when imported: its C side makes `.lgd-nfy0` in
    LG_WD or the working directory, its Python side opens it relative to the working
    directory. Under a read-only working directory (the service's / with
    ProtectSystem=strict) lgpio cannot even be imported, so gpiozero has no pin factory;
    in the unit's WorkingDirectory with LG_WD (both the data directory) it works."""
    ro = tree / "srv/ro"
    ro.mkdir(parents=True, exist_ok=True)
    (tree / "tmp/lg.py").write_text("import lgpio\n")
    bad = sh(tree, f"mount --bind -o ro '{ro}' '{ro}' && chroot '{tree}' sh -c "
             f"'cd /srv/ro && {VENV}/bin/python /tmp/lg.py'")
    assert bad.returncode != 0 and "lgd-nfy" in bad.stderr, bad.stdout + bad.stderr
    data = tree / "var/lib/svoyak"
    data.mkdir(parents=True, exist_ok=True)
    good = in_tree(tree, f"LG_WD=/var/lib/svoyak {VENV}/bin/python /tmp/lg.py",
                   cwd="/var/lib/svoyak")
    assert good.returncode == 0, good.stdout + good.stderr
    assert list(data.glob(".lgd-nfy*")), "no notification pipe in the working directory"


def test_box_setup_writes_a_keyfile_arm64_networkmanager_reads(tree):
    src = ROOT / "provisioning/roles/hotspot/files/svoyak_box_setup.py"
    (tree / "usr/local/sbin/svoyak-box-setup").write_text(src.read_text())
    (tree / "usr/local/sbin/svoyak-box-setup").chmod(0o755)
    # and the Wi-Fi rule it shares with the admin page, where the hotspot role puts it
    rules = ROOT / "provisioning/roles/hotspot/files/svoyak_wifi_rules.py"
    (tree / "usr/local/lib/svoyak").mkdir(parents=True, exist_ok=True)
    (tree / "usr/local/lib/svoyak/svoyak_wifi_rules.py").write_text(rules.read_text())
    from test_provisioning import KEYFILE, nm_reference, nm_sections

    (tree / "etc/svoyak").mkdir(parents=True, exist_ok=True)
    (tree / "etc/svoyak/svoyak-hotspot.nmconnection.in").write_text(KEYFILE)
    (tree / "etc/svoyak/wifi.json").write_text(json.dumps(
        {"ssid": "Клуб; \\ #1", "password": " pa\\sword;#\"x\" "}))
    keyfile = "/etc/NetworkManager/system-connections/svoyak-hotspot.nmconnection"
    r = in_tree(tree, "/usr/local/sbin/svoyak-box-setup --data /var/lib/svoyak "
                "--fixed /etc/svoyak/wifi.json")
    assert r.returncode == 0, r.stderr
    parsed = in_tree(tree, f"nmcli --offline connection modify connection.id t <{keyfile}")
    assert parsed.returncode == 0, parsed.stderr
    got, want = nm_sections(parsed.stdout), nm_reference("Клуб; \\ #1", " pa\\sword;#\"x\" ")
    assert got["wifi"]["ssid"] == want["wifi"]["ssid"]
    assert got["wifi-security"]["psk"] == want["wifi-security"]["psk"]
    assert got["wifi"]["mode"] == "ap"
