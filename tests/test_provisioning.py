"""provisioning/: lint, syntax, shell scripts, the box identity tool, and a real run of
site.yml through the chroot connection on a fresh Debian bookworm tree (applied twice:
the second run must change nothing), then an inspection of the provisioned tree.

Needs root, debootstrap, unshare, shellcheck and the dev extra's Ansible (`make test`
installs them). The debootstrap tree, .deb files and pip's cache are kept between runs
(tests/provisioning_chroot.py); a cold run takes several minutes, a warm one a few."""

from __future__ import annotations

import configparser
import http.client
import importlib.util
import inspect
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from webui import localserver

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provisioning_chroot as chroot  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROV = ROOT / "provisioning"
VENV_BIN = Path(sys.executable).parent
SCRIPTS = [ROOT / "image-build/build.sh", ROOT / "image-build/lib.sh",
           ROOT / "image-build/files/svoyak-grow-data", ROOT / "scripts/test-deps.sh"]
PATH = f"{VENV_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BOX_SETUP = PROV / "roles/hotspot/files/svoyak_box_setup.py"


def need(*tools: str) -> None:
    missing = [t for t in tools if not shutil.which(t, path=PATH)]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/test-deps.sh and "
                    "`pip install -e '.[dev]'` (make test does both)")


def clean_env(**extra: str) -> dict[str, str]:
    """A minimal environment: the build host's PIP_*, proxies etc. must not leak into the
    chroot (the chroot connection passes the controller's environment on)."""
    return {"PATH": PATH, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": "/tmp/.ansible-svoyak", **extra}


# --- static checks -------------------------------------------------------------------


# What ansible-lint's verdict depends on besides provisioning/ (its config, .ansible-lint,
# is in there): the linter, the Ansible it loads and the YAML linter it runs.
LINT_TOOLS = ("ansible-lint", "ansible-compat", "ansible-core", "ansible", "yamllint")


def lint(prov: Path = PROV) -> None:
    r = subprocess.run(["ansible-lint", "--profile", "production", "--nocolor"], cwd=prov,
                       capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Profile 'production'" in r.stdout + r.stderr


def lint_key(prov: Path = PROV) -> str:
    """Everything `lint` depends on: provisioning/ (files and modes), the tools' versions,
    the environment it runs in (but for PATH, which names the worktree's virtualenv) and
    the code that runs it."""
    from importlib.metadata import version

    env = {k: v for k, v in clean_env().items() if k != "PATH"}
    return chroot.digest(chroot.tree_digest(prov), *(f"{t}=={version(t)}" for t in LINT_TOOLS),
                         json.dumps(env, sort_keys=True), inspect.getsource(lint))


def test_ansible_lint_production_profile():
    """ansible-lint takes minutes on a loaded machine; a provisioning/ it passed before with
    the same tools is not linted again (the key is tested in tests/test_chroot_cache.py)."""
    need("ansible-lint")
    chroot.passed_once("ansible-lint", lint_key(), lint)


def test_playbook_syntax():
    need("ansible-playbook")
    r = subprocess.run(["ansible-playbook", "--syntax-check", "-i", "localhost,", "site.yml"],
                       cwd=PROV, capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr


def test_shellcheck_scripts():
    need("shellcheck")
    r = subprocess.run(["shellcheck", "-x", *map(str, SCRIPTS)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# --- the box identity tool (runs at every boot on the box) -----------------------------


@pytest.fixture()
def box_setup():
    spec = importlib.util.spec_from_file_location("svoyak_box_setup", BOX_SETUP)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render_template(name: str, **extra: object) -> str:
    """A role's template with the playbook's defaults (for the tests that need no chroot)."""
    import jinja2
    import yaml

    defaults = yaml.safe_load((PROV / "group_vars/all.yml").read_text())
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["to_uuid"] = lambda v: str(uuid.uuid5(uuid.NAMESPACE_URL, v))
    env.filters["regex_replace"] = lambda v, pattern, repl: re.sub(pattern, repl, v)
    path = next(PROV.glob(f"roles/*/templates/{name}"))
    return env.from_string(path.read_text()).render(
        **{**defaults, "ansible_managed": "test", **extra})


KEYFILE = render_template("svoyak-hotspot.nmconnection.j2")


def setup_args(tmp_path: Path) -> list[str]:
    template = tmp_path / "hotspot.nmconnection.in"
    template.write_text(KEYFILE)
    return ["--data", str(tmp_path / "data"), "--keyfile", str(tmp_path / "hotspot.nmconnection"),
            "--template", str(template), "--user", "nobody-here",
            "--nm-state", str(tmp_path / "NetworkManager.state"),
            "--avahi-conf", str(tmp_path / "avahi-daemon.conf")]


def nm_parse(keyfile: str) -> dict[str, dict[str, str]]:
    """The keyfile as NetworkManager itself reads it: `nmcli --offline` parses the keyfile
    on stdin and writes it back out in its own rendering (which is then plain)."""
    need("nmcli")
    r = subprocess.run(["nmcli", "--offline", "connection", "modify", "connection.id", "t"],
                       input=keyfile, capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, r.stderr + keyfile
    return nm_sections(r.stdout)


def nm_sections(text: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip("[]")
            out[section] = {}
        elif "=" in line:
            k, v = line.split("=", 1)
            out[section][k] = v
    return out


def nm_reference(ssid: str, psk: str, mode: str = "ap") -> dict[str, dict[str, str]]:
    """What NetworkManager writes for this SSID and password given on its command line (no
    key file escaping of ours involved)."""
    r = subprocess.run(["nmcli", "--offline", "connection", "add", "type", "wifi",
                        "con-name", "t", "ssid", ssid, "wifi.mode", mode,
                        "wifi-sec.key-mgmt", "wpa-psk", "wifi-sec.psk", psk],
                       capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, r.stderr
    return nm_sections(r.stdout)


HOSTILE = [
    ("pass\\word1", "pass\\word1"),                 # the two cases
    ("pa\\sword1", "pa\\sword1"),
    ("semi;colon;", "semi;colon;pw"),
    ("65;66;", "12345678"),                            # would read as the bytes "AB"
    ("#not a comment", "#hash#hash"),
    ('"quoted" \'ssid\'', '"quoted" \'pw\''),
    (" leading and trailing ", " leading space pw "),
    ("Квиз клуб «Сова»", "ascii only pw"),
    ("x" * 32, "y" * 63),
    ("back\\;slash", "8chars;\\"),
    ("tab\there", "abc\\ndef"),
]


@pytest.mark.parametrize("ssid,psk", HOSTILE)
def test_keyfile_values_survive_networkmanagers_own_parser(box_setup, ssid, psk):
    text = box_setup.render_keyfile(KEYFILE, ssid, psk)
    parsed, ref = nm_parse(text), nm_reference(ssid, psk)
    assert parsed["wifi"]["ssid"] == ref["wifi"]["ssid"], text
    assert parsed["wifi-security"]["psk"] == ref["wifi-security"]["psk"], text
    assert parsed["wifi"]["mode"] == "ap" and parsed["connection"].get("autoconnect") != "false"
    venue = box_setup.venue_keyfile({"mode": "venue-wifi", "ssid": ssid, "password": psk},
                                    "wlan0")
    parsed, ref = nm_parse(venue), nm_reference(ssid, psk, "infrastructure")
    assert (parsed["wifi"]["ssid"], parsed["wifi-security"]["psk"]) == (
        ref["wifi"]["ssid"], ref["wifi-security"]["psk"]), venue


def test_box_identity_is_made_once_and_kept(box_setup, tmp_path, capsys):
    args = setup_args(tmp_path)
    key = tmp_path / "hotspot.nmconnection"
    assert box_setup.main(args) == 0
    box = json.loads((tmp_path / "data/box.json").read_text())
    ssid, psk, pin = box["wifi"]["ssid"], box["wifi"]["password"], box["host_pin"]
    assert re.fullmatch(r"Svoyak-[A-Z2-9]{4}", ssid)
    assert re.fullmatch(r"[a-z2-9]{10}", psk) and not set(psk) & set("01ilo")
    assert re.fullmatch(r"\d{6}", pin)  # docs/webui.md: 6 digits on a new box
    parsed = nm_parse(key.read_text())
    assert parsed["wifi"]["ssid"] == ssid and parsed["wifi-security"]["psk"] == psk
    assert parsed["wifi"]["mode"] == "ap" and parsed["connection"].get("autoconnect") != "false"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "data/box.json").stat().st_mode) == 0o640
    settings_path = tmp_path / "data/settings.json"
    settings = json.loads(settings_path.read_text())
    assert stat.S_IMODE(settings_path.stat().st_mode) == 0o600
    assert settings["wifi"] == box["wifi"] and settings["pin"] == pin
    assert settings["pin_on_board"] is True  # nobody has seen it: the TV shows it
    assert settings["host_url"] == "http://10.42.0.1/host" and "wifi_error" not in settings
    # The next boot: same identity, nothing rewritten.
    mtime = key.stat().st_mtime_ns
    assert box_setup.main(args) == 0
    assert json.loads((tmp_path / "data/box.json").read_text()) == box
    assert key.stat().st_mtime_ns == mtime
    # A PIN changed on the admin page survives; the Wi-Fi is the box's.
    settings["pin"] = "9876"
    settings["wifi"]["ssid"] = "edited"
    settings_path.write_text(json.dumps(settings))
    assert box_setup.main(args) == 0
    settings = json.loads(settings_path.read_text())
    assert settings["pin"] == "9876" and settings["wifi"]["ssid"] == ssid
    # Changing the Wi-Fi by hand.
    assert box_setup.main([*args, "--ssid", "Club quiz", "--psk", "long enough pw"]) == 0
    parsed = nm_parse(key.read_text())
    assert (parsed["wifi"]["ssid"], parsed["wifi-security"]["psk"]) == ("Club quiz",
                                                                         "long enough pw")
    assert box_setup.main([*args, "--psk", "short"]) == 2
    assert "8 to 63" in capsys.readouterr().err
    assert nm_parse(key.read_text())["wifi-security"]["psk"] == "long enough pw"
    assert box_setup.main([*args, "--pin", "1234"]) == 2  # the app's rule: 6 to 12 digits
    assert "6 to 12" in capsys.readouterr().err


def test_an_older_boxs_four_digit_pin_is_replaced_and_its_wifi_kept(box_setup, tmp_path):
    """box.json of a box made when the first PIN had 4 digits: the next boot gives it a
    6-digit one instead of refusing the whole identity (which would mean no Wi-Fi), and
    keeps its Wi-Fi; a PIN the app already has is the app's."""
    args = setup_args(tmp_path)
    assert box_setup.main(args) == 0
    path = tmp_path / "data/box.json"
    old = json.loads(path.read_text())
    path.write_text(json.dumps({**old, "host_pin": "0427"}))
    key = (tmp_path / "hotspot.nmconnection").read_text()
    assert box_setup.main(args) == 0
    box = json.loads(path.read_text())
    assert re.fullmatch(r"\d{6}", box["host_pin"]) and box["wifi"] == old["wifi"]
    assert (tmp_path / "hotspot.nmconnection").read_text() == key


def test_no_identity_means_no_access_point_and_the_tv_says_why(box_setup, tmp_path):
    """A first boot whose identity cannot be made (here: a fixed password that is too
    short) leaves no access point keyfile at all, never one with a known password, and
    settings.json tells the TV what happened."""
    args = setup_args(tmp_path)
    key = tmp_path / "hotspot.nmconnection"
    key.write_text(KEYFILE + "psk=set-at-first-boot\n")  # a stale keyfile of an old image
    fixed = tmp_path / "wifi.json"
    fixed.write_text('{"ssid": "Club", "password": "short"}')
    assert box_setup.main([*args, "--fixed", str(fixed)]) == 2
    assert not key.exists()
    settings = json.loads((tmp_path / "data/settings.json").read_text())
    assert "8 to 63" in settings["wifi_error"] and settings["wifi"]["ssid"] == ""
    # Fixed properly: the access point and the QR code come back, the error goes.
    fixed.write_text('{"ssid": "Club", "password": "a fixed pw;\\\\"}')
    assert box_setup.main([*args, "--fixed", str(fixed)]) == 0
    assert nm_parse(key.read_text())["wifi-security"]["psk"] == nm_reference(
        "Club", "a fixed pw;\\")["wifi-security"]["psk"]
    settings = json.loads((tmp_path / "data/settings.json").read_text())
    assert "wifi_error" not in settings and settings["wifi"]["ssid"] == "Club"


def test_venue_network_mode_and_back(box_setup, tmp_path):
    """The admin page asks to join the venue's Wi-Fi: a client keyfile that outranks the
    access point, whose own keyfile stays (for the fallback) without autoconnect; the TV's
    QR codes name the venue's Wi-Fi and svoyak.local. Ethernet, then back to the hotspot."""
    args = setup_args(tmp_path)
    data, key = tmp_path / "data", tmp_path / "hotspot.nmconnection"
    venue = tmp_path / "svoyak-venue.nmconnection"
    assert box_setup.main(args) == 0
    own = json.loads((data / "box.json").read_text())["wifi"]
    request = data / "wifi-request.json"
    request.write_text(json.dumps({"network": "venue-wifi", "ssid": "Bar; Wi-Fi",
                                   "password": "bar pass\\1"}))
    assert box_setup.main([*args, "--request", str(request)]) == 0
    parsed = nm_parse(venue.read_text())
    assert parsed["wifi"]["mode"] == "infrastructure"
    assert parsed["wifi"]["ssid"] == nm_reference("Bar; Wi-Fi", "x" * 8)["wifi"]["ssid"]
    assert parsed["wifi-security"]["psk"] == "bar pass\\\\1"  # NM's own escaping
    assert int(parsed["connection"]["autoconnect-priority"]) > 100
    assert stat.S_IMODE(venue.stat().st_mode) == 0o600
    assert nm_parse(key.read_text())["connection"]["autoconnect"] == "false"
    settings = json.loads((data / "settings.json").read_text())
    assert settings["wifi"]["ssid"] == "Bar; Wi-Fi"
    box = json.loads((data / "box.json").read_text())
    # The box's own name (not every box's svoyak.local), given to the router's DHCP too.
    assert re.fullmatch(r"svoyak-[a-z2-9]{4}", box["hostname"])
    assert settings["host_url"] == f"http://{box['hostname']}.local/host"
    assert parsed["ipv4"]["dhcp-hostname"] == box["hostname"]
    assert box["wifi"] == own and box["network"]["mode"] == "venue-wifi"
    # A refused venue request changes nothing.
    request.write_text(json.dumps({"network": "venue-wifi", "ssid": "", "password": ""}))
    assert box_setup.main([*args, "--request", str(request)]) == 2
    assert json.loads((data / "box.json").read_text()) == box
    request.write_text(json.dumps({"network": "venue-ethernet"}))
    assert box_setup.main([*args, "--request", str(request)]) == 0
    assert nm_parse(venue.read_text())["connection"]["type"] == "ethernet"
    assert json.loads((data / "settings.json").read_text())["wifi"]["ssid"] == ""
    request.write_text(json.dumps({"network": "hotspot"}))
    assert box_setup.main([*args, "--request", str(request)]) == 0
    assert not venue.exists()
    assert nm_parse(key.read_text())["connection"].get("autoconnect") != "false"
    settings = json.loads((data / "settings.json").read_text())
    assert settings["wifi"] == own and settings["host_url"] == "http://10.42.0.1/host"


def test_every_box_has_its_own_name_on_a_venue_network(box_setup, tmp_path):
    """Two boxes from one image get two names, each announced by avahi (written before it
    starts) and kept across boots: the Wi-Fi name's four letters and digits, or with a
    fixed Wi-Fi name, four made once."""
    names = []
    for n in (1, 2):
        folder = tmp_path / f"box{n}"
        folder.mkdir()
        args = setup_args(folder)
        avahi = folder / "avahi-daemon.conf"
        avahi.write_text("[server]\nhost-name=svoyak\nuse-ipv4=yes\n\n[wide-area]\n"
                         "enable-wide-area=yes\n")  # as an earlier image left it
        assert box_setup.main(args) == 0
        box = json.loads((folder / "data/box.json").read_text())
        assert box["hostname"] == "svoyak-" + box["wifi"]["ssid"].removeprefix(
            "Svoyak-").lower()
        cp = configparser.ConfigParser()
        cp.read_string(avahi.read_text())
        assert cp["server"]["host-name"] == box["hostname"] and cp["server"]["use-ipv4"] == "yes"
        assert "enable-wide-area" in cp["wide-area"]
        mtime = avahi.stat().st_mtime_ns
        assert box_setup.main(args) == 0  # the next boot: the same name, nothing rewritten
        assert json.loads((folder / "data/box.json").read_text())["hostname"] == box["hostname"]
        assert avahi.stat().st_mtime_ns == mtime
        names.append(box["hostname"])
    assert names[0] != names[1]
    # A fixed Wi-Fi name (the same on every box) still gives each box a name of its own.
    folder = tmp_path / "fixed"
    folder.mkdir()
    args = setup_args(folder)
    assert box_setup.main([*args, "--ssid", "Club quiz", "--psk", "long enough pw"]) == 0
    first = json.loads((folder / "data/box.json").read_text())["hostname"]
    assert re.fullmatch(r"svoyak-[a-z2-9]{4}", first)
    assert box_setup.main(args) == 0
    assert json.loads((folder / "data/box.json").read_text())["hostname"] == first


def test_wifi_change_requested_by_the_app(box_setup, tmp_path, capsys):
    args = setup_args(tmp_path)
    key = tmp_path / "hotspot.nmconnection"
    data = tmp_path / "data"
    assert box_setup.main(args) == 0
    request = data / "wifi-request.json"
    request.write_text(json.dumps({"ssid": "Квиз клуб", "password": "novyi parol 2026"}))
    assert box_setup.main([*args, "--request", str(request)]) == 0
    assert not request.exists()
    assert "ssid=Квиз клуб\n" in key.read_text()
    box = json.loads((data / "box.json").read_text())
    assert box["wifi"]["password"] == "novyi parol 2026"
    # No request: nothing to do.
    assert box_setup.main([*args, "--request", str(request)]) == 0
    # Refused, and removed so the path unit does not fire again and again.
    for bad in ('{"ssid": "x", "password": "short"}', '{"pin": "1234"}', "not json",
                '{"network": "mesh"}'):
        request.write_text(bad)
        assert box_setup.main([*args, "--request", str(request)]) == 2
        assert not request.exists()
    assert "refused" in capsys.readouterr().err
    assert "ssid=Квиз клуб\n" in key.read_text()
    # A symlink planted by the service user is not followed (root reads this file).
    secret = tmp_path / "secret"
    secret.write_text('{"ssid": "leaked", "password": "leaked-secret"}')
    request.symlink_to(secret)
    assert box_setup.main([*args, "--request", str(request)]) == 2
    assert not request.is_symlink() and secret.exists()
    assert "leaked" not in key.read_text()


# (name, password): what a club might type on the admin page's Wi-Fi form.
WIFI_FORM_CASES = [
    ("Квиз клуб", "novyi parol 2026"), ("Club", "пароль клуба 2026"), ("Club", "short"),
    ("Club", "x" * 63), ("Club", "x" * 64), ("x" * 33, "long enough pw"),
    ("Я" * 16, "long enough pw"), ("Я" * 17, "long enough pw"), ("Club", "tab\there pw"),
    ("Club", "   spaces are fine  "), ("Club", "émigré password"),
]


def test_the_wifi_form_refuses_exactly_what_the_set_up_tool_refuses(box_setup, tmp_path,
                                                                     capsys):
    """The admin page and the root-side tool share one rule (webui/wifi_rules.py): the
    page says «Сохранено» only for what the tool then applies, and refuses the rest with
    the tool's own words (Russian on the page in Russian)."""
    from webui_kit import make_kit

    from webui import wifi_rules

    args = setup_args(tmp_path)
    assert box_setup.main(args) == 0
    data = tmp_path / "data"
    request = data / "wifi-request.json"
    kit = make_kit(data, simulate=False)  # the box: the page only asks the tool
    try:
        c = kit.app.test_client()
        assert c.post("/login", data={"pin": kit.services.settings.pin}).status_code == 302
        outcomes = []
        for ssid, password in WIFI_FORM_CASES:
            c.get("/lang/en")
            r = c.post("/admin/settings", data={"ssid": ssid, "password": password})
            page_ok = r.status_code == 200
            if page_ok:
                assert request.exists()
            else:
                request.write_text(json.dumps({"ssid": ssid, "password": password}))
            capsys.readouterr()
            tool_ok = box_setup.main([*args, "--request", str(request)]) == 0
            err = capsys.readouterr().err
            outcomes.append((ssid, password, page_ok, tool_ok))
            if not page_ok:
                try:
                    wifi_rules.check(ssid, password)
                except wifi_rules.WifiRefused as e:
                    refused = e
                assert refused.en in err and refused.en in r.get_data(as_text=True)
                c.get("/lang/ru")
                ru = c.post("/admin/settings", data={"ssid": ssid, "password": password})
                assert ru.status_code == 400 and refused.ru in ru.get_data(as_text=True)
        assert all(page_ok == tool_ok for *_, page_ok, tool_ok in outcomes), outcomes
        assert [ok for *_, ok, _ in outcomes] == [True, False, False, True, False, False,
                                                  True, False, False, True, False]
    finally:
        kit.close()


# What Raspberry Pi OS Lite's pi-gen (stage2/02-net-tweaks) writes when the image is built
# without a Wi-Fi country.
PI_GEN_NM_STATE = "[main]\nNetworkingEnabled=true\nWirelessEnabled=false\nWWANEnabled=true\n"

# A stand-in for nmcli (no NetworkManager with a radio runs here): the radio's state is a
# file, "HARDWARE SOFTWARE"; `radio wifi on` switches the software side on, which only
# helps when the hardware side is enabled (an rfkill hard block is not software's to undo).
FAKE_NMCLI = """#!/bin/sh
echo "$*" >> "$NMCLI_LOG"
read -r hw sw < "$NMCLI_RADIO"
case "$*" in
  "radio wifi on") echo "$hw enabled" > "$NMCLI_RADIO" ;;
  "-t -f WIFI-HW,WIFI radio")
    [ "$hw" = enabled ] || sw=disabled
    echo "$hw:$sw" ;;
  "-t -f TYPE,STATE device") echo "wifi:disconnected"; echo "loopback:unmanaged" ;;
esac
"""


def test_wifi_radio_left_off_by_the_image_is_switched_on(box_setup, tmp_path):
    """NetworkManager's state file as Raspberry Pi OS Lite ships it (WirelessEnabled=false)
    is set right at every boot, before NetworkManager reads it; other keys stay."""
    args = setup_args(tmp_path)
    state = tmp_path / "NetworkManager.state"
    state.write_text(PI_GEN_NM_STATE)
    assert box_setup.main(args) == 0
    cp = configparser.ConfigParser()
    cp.optionxform = str
    cp.read_string(state.read_text())
    assert dict(cp["main"]) == {"NetworkingEnabled": "true", "WirelessEnabled": "true",
                                "WWANEnabled": "true"}
    mtime = state.stat().st_mtime_ns
    assert box_setup.main(args) == 0
    assert state.stat().st_mtime_ns == mtime  # the next boot rewrites nothing
    state.unlink()  # no state file yet (a fresh NetworkManager): one that says "on"
    assert box_setup.main(args) == 0
    assert "WirelessEnabled=true" in state.read_text()


def host_notices(response) -> list[str]:  # type: ignore[no-untyped-def]
    """The problems a host page shows at its top (base.html)."""
    return re.findall(r'class="offline problem" role="alert">([^<]*)<',
                      response.get_data(as_text=True))


def test_wifi_radio_switched_on_after_networkmanager_or_the_tv_says_why(
        box_setup, tmp_path, monkeypatch):
    """svoyak-wifi-radio.service: `nmcli radio wifi on`; a radio that stays off (here a
    hardware block) is reported on the TV's idle screen and the host's pages, in Russian
    and English, and the report goes once the radio is on."""
    from webui_kit import make_kit

    args = setup_args(tmp_path)
    assert box_setup.main(args) == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nmcli").write_text(FAKE_NMCLI)
    (bin_dir / "nmcli").chmod(0o755)
    radio, calls = tmp_path / "radio", tmp_path / "nmcli.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("NMCLI_RADIO", str(radio))
    monkeypatch.setenv("NMCLI_LOG", str(calls))
    settings_path = tmp_path / "data/settings.json"

    radio.write_text("enabled disabled\n")  # what WirelessEnabled=false leaves
    assert box_setup.main([*args, "--radio", "3"]) == 0
    assert "radio wifi on" in calls.read_text().splitlines()
    assert "wifi_error" not in json.loads(settings_path.read_text())

    radio.write_text("disabled disabled\n")  # blocked in hardware: it stays off
    assert box_setup.main([*args, "--radio", "1"]) == 1
    settings = json.loads(settings_path.read_text())
    assert settings["wifi_error_code"] == "radio" and "hardware" in settings["wifi_error"]
    assert settings["wifi"]["ssid"]  # the box's Wi-Fi details stay right
    kit = make_kit(tmp_path / "data")
    try:
        c = kit.app.test_client()
        # (The pages carry the whole catalogue for their scripts: look at the notice only.)
        for lang, words in (("ru", "радиомодуль Wi-Fi не включается"),
                            ("en", "Wi-Fi radio does not switch on")):
            c.get(f"/lang/{lang}")
            body = c.get("/board").get_data(as_text=True)
            notice = re.search(r'id="idle-wifi-off"[^>]*>([^<]*)<', body)
            assert notice and words in notice[1], lang
            assert 'id="idle-wifi"' not in body  # no QR code for a Wi-Fi nobody can join
        c.post("/login", data={"pin": kit.services.settings.pin})
        for lang, words in (("ru", "радиомодуль Wi-Fi"), ("en", "Wi-Fi radio")):
            c.get(f"/lang/{lang}")
            assert words in " ".join(host_notices(c.get("/host"))), lang

        radio.write_text("enabled disabled\n")  # unblocked: the next check clears it
        assert box_setup.main([*args, "--radio", "3"]) == 0
        assert "wifi_error_code" not in json.loads(settings_path.read_text())
        assert 'id="idle-wifi"' in c.get("/board").get_data(as_text=True)
        assert not any("Wi-Fi radio" in n for n in host_notices(c.get("/host")))
    finally:
        kit.close()
    # Joined to the venue by cable, a box needs no radio of its own: nothing to report.
    request = tmp_path / "data/wifi-request.json"
    request.write_text(json.dumps({"network": "venue-ethernet"}))
    assert box_setup.main([*args, "--request", str(request)]) == 0
    radio.write_text("disabled disabled\n")
    assert box_setup.main([*args, "--radio", "0"]) == 0
    assert "wifi_error_code" not in json.loads(settings_path.read_text())


def unit_list(text: str, key: str) -> list[str]:
    """Every value of a list setting of a unit, over all its lines (systemd adds them up;
    configparser would keep the last line only)."""
    return [v for line in text.splitlines() if line.startswith(f"{key}=")
            for v in line.split("=", 1)[1].split()]


def test_kiosk_starts_beside_the_server_and_the_heartbeat_is_in_ram():
    """The kiosk's unit does not wait for the server's READY=1 (its own page says
    «Запускается…»); the server's unit gives gunicorn a directory in RAM."""
    kiosk = render_template("svoyak-kiosk.service.j2")
    assert "svoyak.service" in unit_list(kiosk, "Wants")
    assert "svoyak.service" not in unit_list(kiosk, "After")
    app = configparser.ConfigParser(strict=False, interpolation=None)
    app.read_string(render_template("svoyak.service.j2"))
    assert app["Service"]["RuntimeDirectory"] == "svoyak"


def test_the_server_holds_glibcs_malloc_to_two_arenas():
    """Measured flatter over an evening (bench/soak.py side by side, docs/performance.md);
    on the one Environment line the others are on (configparser, like the tests above,
    would keep only the last of several)."""
    app = configparser.ConfigParser(strict=False, interpolation=None)
    app.read_string(render_template("svoyak.service.j2"))
    assert "MALLOC_ARENA_MAX=2" in app["Service"]["Environment"].split()


def test_wifi_radio_unit_runs_after_networkmanager():
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    cp.read_string(render_template("svoyak-wifi-radio.service.j2"))
    assert "NetworkManager.service" in cp["Unit"]["After"].split()
    assert "svoyak-network-fallback.service" in cp["Unit"]["Before"].split()
    cmd = cp["Service"]["ExecStart"].split()
    assert cmd[0] == "/usr/local/sbin/svoyak-box-setup" and cmd[-2:] == ["--radio", "20"]


# --- the real run ----------------------------------------------------------------------


RECAP = re.compile(r"ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)")


def play_vars(wheel: Path) -> dict[str, object]:
    return {
        "svoyak_on_pi": False,            # no Raspberry Pi packages or firmware here...
        "svoyak_firmware_config": True,   # ...but the firmware file edits, on stand-ins
        "svoyak_wheel": str(wheel),
        "svoyak_data_device": "LABEL=svoyak-data",
        # The overlay root too (overlayroot is a Debian package; no initramfs is built here).
        "svoyak_readonly": True, "svoyak_readonly_force": True,
        # pip must trust what the build host trusts (a TLS-inspecting proxy, say).
        "svoyak_pip_env": {"PIP_CERT": "/etc/ssl/host-ca.crt"},
    }


def play(tree: Path, wheel: Path) -> str:
    env = " ".join(f"{k}='{v}'" for k, v in clean_env().items())
    cmd = (f"cd '{PROV}' && env -i {env} ansible-playbook -i '{tree},' "
           f"-c community.general.chroot site.yml -e '{json.dumps(play_vars(wheel))}'")
    r = chroot.run_in_namespace(tree, cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    return out


# What raspi-config's overlay option and earlier boxes left in the firmware files.
FIRMWARE = {
    "config.txt": "[all]\narm_64bit=1\n",
    "cmdline.txt": "console=serial0,115200 console=tty1 root=PARTUUID=0a1b2c3d-02 "
                   "rootfstype=ext4 fsck.repair=yes rootwait cfg80211.ieee80211_regdom=GB "
                   "video=HDMI-A-1:1920x1080@60D overlayroot=tmpfs\n",
}


def provision(layer: Path, wheel: Path) -> None:
    """A fresh copy of the base tree (layer/tree) with site.yml applied twice, and what
    each run printed (layer/first.log, layer/second.log)."""
    layer.mkdir(parents=True)
    root = chroot.fresh_copy(layer / "tree", arch=chroot.provision_arch())
    firmware = root / "boot/firmware"
    firmware.mkdir(parents=True)
    for name, text in FIRMWARE.items():
        (firmware / name).write_text(text)
    (layer / "first.log").write_text(play(root, wheel))
    (layer / "second.log").write_text(play(root, wheel))


def provisioned_key(wheel: Path, arch: str, prov: Path = PROV) -> str:
    """Everything `provision` depends on: the base tree, provisioning/, the wheel's files,
    the variables and stand-ins, this harness's code, Ansible's version and the
    environment it runs in (but for PATH, which names the worktree's virtualenv)."""
    from importlib.metadata import version

    env = {k: v for k, v in clean_env().items() if k != "PATH"}
    return chroot.digest(
        chroot.base_key(arch), chroot.tree_digest(prov), chroot.wheel_digest(wheel),
        json.dumps({**play_vars(wheel), "svoyak_wheel": wheel.name}, sort_keys=True),
        json.dumps(FIRMWARE, sort_keys=True), json.dumps(env, sort_keys=True),
        version("ansible"), version("ansible-core"), Path(chroot.__file__),
        inspect.getsource(play), inspect.getsource(provision))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """site.yml applied twice to a fresh base tree, made once per key (`provisioned_key`)
    and kept in the test cache: a commit that changes neither provisioning/ nor the
    project's files reuses the last run's tree and logs. The tests get a copy of their own,
    since some of them change it (the first boot's identity, the server's data)."""
    if os.geteuid() != 0:
        pytest.fail("the chroot run needs root (CI runs as root)")
    need("debootstrap", "unshare", "chroot", "ansible-playbook", "systemctl")
    wheel = chroot.wheel(tmp_path_factory.mktemp("dist"))
    arch = chroot.provision_arch()
    layer = chroot.layer(f"provisioned-{arch}", provisioned_key(wheel, arch),
                         lambda work: provision(work, wheel), max_age_s=chroot.FETCHED_MAX_AGE_S)
    # One tree per test process: two runs at once (a developer's and CI's) never share it.
    with chroot.scratch_copy(layer / "tree", chroot.run_dir()) as root:
        yield root, (layer / "first.log").read_text(), (layer / "second.log").read_text()


def recap(out: str) -> tuple[int, ...]:
    found = RECAP.findall(out)
    assert len(found) == 1, out[-3000:]
    return tuple(map(int, found[0]))


def test_first_run_changes_and_second_run_changes_nothing(tree):
    _, first, second = tree
    assert recap(first)[1] > 20
    ok, changed, unreachable, failed = recap(second)
    tasks = [name for name, body in re.findall(r"^TASK \[(.+?)\] \**\n((?:(?!TASK \[).*\n)*)",
                                               second, re.M)
             if re.search(r"^changed: ", body, re.M)]  # the tasks that changed, by name
    assert (changed, unreachable, failed) == (0, 0, 0), (tasks, second[-6000:])


def in_root(root: Path, *cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["chroot", str(root), *cmd], capture_output=True, text=True,
                          env=clean_env())


def test_units_are_enabled_and_the_box_boots_to_the_kiosk(tree):
    root, _, _ = tree
    units = ["svoyak.service", "svoyak-kiosk.service", "svoyak-box-setup.service",
             "svoyak-wifi-request.path", "NetworkManager.service", "avahi-daemon.service",
             "svoyak-wifi-radio.service", "svoyak-kiosk-watch.timer"]
    r = subprocess.run(["systemctl", f"--root={root}", "is-enabled", *units],
                       capture_output=True, text=True)
    assert r.stdout.split() == ["enabled"] * len(units), r.stdout + r.stderr
    r = subprocess.run(["systemctl", f"--root={root}", "get-default"], capture_output=True,
                       text=True)
    assert r.stdout.strip() == "graphical.target"
    # NetworkManager starts with the radio on (Raspberry Pi OS Lite may ship it off).
    assert "WirelessEnabled=true" in (
        root / "var/lib/NetworkManager/NetworkManager.state").read_text().splitlines()


def unit(root: Path, name: str) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    cp.read_string((root / "etc/systemd/system" / name).read_text())
    return cp


def test_service_runs_svoyak_serve_as_its_own_user_with_a_watchdog(tree):
    root, _, _ = tree
    svc = unit(root, "svoyak.service")["Service"]
    assert svc["ExecStart"].split() == [
        "/opt/svoyak/venv/bin/svoyak", "serve", "--data", "/var/lib/svoyak",
        "--host", "0.0.0.0", "--port", "80"]
    assert (root / "opt/svoyak/venv/bin/svoyak").exists()
    assert svc["User"] == "svoyak" and svc["Type"] == "notify"
    assert svc["NotifyAccess"] == "all"  # gunicorn's worker feeds the watchdog
    assert svc["Restart"] == "on-failure" and int(svc["WatchdogSec"]) > 0
    assert svc["AmbientCapabilities"] == "CAP_NET_BIND_SERVICE"
    # lgpio's notification pipe: made in LG_WD, opened relative to the working directory;
    # both must be the (writable) state directory, never the read-only root.
    assert svc["WorkingDirectory"] == "/var/lib/svoyak"
    assert "LG_WD=/var/lib/svoyak" in svc["Environment"].split()
    assert svc["StateDirectory"] == "svoyak svoyak/tmp" and svc["ProtectSystem"] == "strict"
    assert svc["RuntimeDirectory"] == "svoyak"  # gunicorn's heartbeat: RAM, not the card
    # Uploads are staged on the data partition, never on the small (or RAM) root.
    assert "TMPDIR=/var/lib/svoyak/tmp" in svc["Environment"].split()
    passwd = (root / "etc/passwd").read_text()
    assert re.search(r"^svoyak:x:\d+:\d+:.*:/usr/sbin/nologin$", passwd, re.M)
    group = (root / "etc/group").read_text()
    assert re.search(r"^gpio:x:\d+:.*\bsvoyak\b", group, re.M)
    data = (root / "var/lib/svoyak").stat()
    assert stat.S_IMODE(data.st_mode) == 0o750
    assert re.search(r"^LABEL=svoyak-data\s+/var/lib/svoyak\s+ext4\s+\S*nofail",
                     (root / "etc/fstab").read_text(), re.M)


def test_service_exposure_is_at_most_3(tree):
    """systemd's own review of the unit's sandbox (offline, on the provisioned tree)."""
    root, _, _ = tree
    r = subprocess.run(["systemd-analyze", "security", "--offline=true", f"--root={root}",
                        "--threshold=30", "--no-pager", "svoyak.service"],
                       capture_output=True, text=True)
    m = re.search(r"Overall exposure level for svoyak\.service: (\d+\.\d)", r.stdout)
    assert m, r.stdout + r.stderr
    assert float(m[1]) <= 3.0 and r.returncode == 0, r.stdout
    svc = unit(root, "svoyak.service")["Service"]
    assert svc["DevicePolicy"] == "closed" and svc["DeviceAllow"] == "char-gpiochip rw"


def test_svoyak_help_runs_in_the_virtualenv(tree):
    root, _, _ = tree
    r = chroot.run_in_namespace(root, f"chroot '{root}' /opt/svoyak/venv/bin/svoyak --help",
                                capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "usage: svoyak" in r.stdout and "serve" in r.stdout


def test_installed_server_says_ready_and_answers_probes(tree):
    """The unit is Type=notify: the installed server must send READY=1 on NOTIFY_SOCKET.
    Then a phone's probe under a foreign name is sent to the portal (not followed: the
    portal address is the box's, not this machine's)."""
    root, _, _ = tree
    sock_path = root / "run/svoyak-test-notify.sock"
    sock_path.unlink(missing_ok=True)
    port = localserver.free_port()
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(sock_path))
        notify.settimeout(90)
        cmd = (f"exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "
               f"NOTIFY_SOCKET=/run/svoyak-test-notify.sock chroot '{root}' "
               f"/opt/svoyak/venv/bin/svoyak serve --simulate --data /tmp/svoyak-test-data "
               f"--host 127.0.0.1 --port {port}")
        proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "bash", "-c",
             chroot.mount_script(root) + "\n" + cmd],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert notify.recv(256).startswith(b"READY=1")
            answers = {}
            for _ in range(60):
                try:
                    for path in ("/generate_204", "/hotspot-detect.html", "/captive"):
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                        conn.request("GET", path, headers={"Host": "probe.example.org"})
                        r = conn.getresponse()
                        answers[path] = (r.status, r.getheader("Location"), r.read())
                        conn.close()
                    break
                except OSError:
                    time.sleep(1)
        finally:
            proc.terminate()
            out = proc.communicate(timeout=60)[0]
            sock_path.unlink(missing_ok=True)
    assert answers, out[-3000:]
    assert answers["/generate_204"][:2] == (302, "http://10.42.0.1/captive")
    assert answers["/hotspot-detect.html"][:2] == (302, "http://10.42.0.1/captive")
    assert answers["/captive"][0] == 200 and "Своя игра" in answers["/captive"][2].decode()


def test_no_hotspot_keyfile_before_the_first_boot(tree):
    """The image holds only the keyfile's template (no password of any kind); the
    access point exists once the box has its own identity."""
    root, _, _ = tree
    template = root / "etc/svoyak/svoyak-hotspot.nmconnection.in"
    keys = [line.split("=", 1)[0] for line in template.read_text().splitlines()]
    assert "psk" not in keys and "ssid" not in keys and "mode" in keys
    assert not (root / "etc/NetworkManager/system-connections/svoyak-hotspot.nmconnection"
                ).exists()


def test_first_boot_identity_inside_the_tree(tree):
    root, _, _ = tree
    svc = unit(root, "svoyak-box-setup.service")["Service"]["ExecStart"].split()
    r = in_root(root, *svc)
    assert r.returncode == 0, r.stderr
    box = json.loads((root / "var/lib/svoyak/box.json").read_text())
    path = root / "etc/NetworkManager/system-connections/svoyak-hotspot.nmconnection"
    st = path.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0
    key = nm_parse(path.read_text())  # NetworkManager's own parser, as the box's will read it
    assert key["connection"]["type"] == "wifi"
    assert key["wifi"]["mode"] == "ap" and key["wifi"]["band"] == "bg"
    assert key["wifi"]["channel"] == "6"
    assert key["wifi"]["ssid"] == box["wifi"]["ssid"]
    assert key["wifi-security"]["psk"] == box["wifi"]["password"]
    assert key["wifi-security"]["key-mgmt"] == "wpa-psk"
    assert key["wifi-security"]["proto"] == "rsn;"  # NetworkManager writes lists with ";"
    assert key["ipv4"]["method"] == "shared" and key["ipv4"]["address1"] == "10.42.0.1/24"
    # avahi will announce the box's own name (svoyak-7k2m.local), not the image's.
    assert re.fullmatch(r"svoyak-[a-z2-9]{4}", box["hostname"])
    assert f"host-name={box['hostname']}" in (
        root / "etc/avahi/avahi-daemon.conf").read_text().splitlines()
    settings = root / "var/lib/svoyak/settings.json"
    uid = int(re.search(r"^svoyak:x:(\d+):", (root / "etc/passwd").read_text(), re.M)[1])
    assert settings.stat().st_uid == uid and stat.S_IMODE(settings.stat().st_mode) == 0o600
    r = subprocess.run(["systemctl", f"--root={root}", "is-enabled",
                        "svoyak-network-fallback.service"], capture_output=True, text=True)
    assert r.stdout.split() == ["enabled"], r.stdout + r.stderr


def test_dns_answers_every_name_with_the_box(tree):
    root, _, _ = tree
    conf = (root / "etc/NetworkManager/dnsmasq-shared.d/svoyak-captive.conf").read_text()
    assert re.search(r"^address=/#/10\.42\.0\.1$", conf, re.M)
    assert (root / "usr/sbin/NetworkManager").exists() and (root / "usr/bin/nmcli").exists()


def test_kiosk_shows_the_board(tree):
    root, _, _ = tree
    svc = unit(root, "svoyak-kiosk.service")
    # Beside the server: After=svoyak.service would wait for its READY=1.
    text = (root / "etc/systemd/system/svoyak-kiosk.service").read_text()
    assert "svoyak.service" in unit_list(text, "Wants")
    assert "svoyak.service" not in unit_list(text, "After")
    assert svc["Service"]["ExecStart"].startswith("/usr/bin/cage ")
    # The last connected output: a TV on either HDMI port, never one board on two screens.
    assert svc["Service"]["ExecStart"].split()[1:5] == ["-d", "-s", "-m", "last"]
    assert svc["Service"]["Restart"] == "always" and svc["Service"]["User"] == "svoyak-kiosk"
    assert svc["Service"]["PAMName"] == "svoyak-kiosk"
    assert (root / "etc/pam.d/svoyak-kiosk").exists()
    assert (root / "usr/bin/cage").exists() and (root / "usr/bin/chromium").exists()
    assert (root / "usr/bin/Xwayland").exists()  # cage 0.1.4 will not start without it
    launcher = root / "usr/local/bin/svoyak-kiosk-browser"
    text = launcher.read_text()
    assert "url='http://localhost/board'" in text
    assert "file:///usr/local/share/svoyak-kiosk/starting.html?patience=40&url=" in text
    assert "curl" not in text  # no waiting on a black screen
    for flag in ("--kiosk", "--noerrdialogs", "--disable-session-crashed-bubble"):
        assert flag in text
    r = subprocess.run(["shellcheck", str(launcher)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    assert (root / "usr/local/share/svoyak-kiosk/starting.html").read_text() == (
        PROV / "roles/kiosk/files/starting.html").read_text()
    rule = (root / "etc/udev/rules.d/70-svoyak-kiosk-hotplug.rules").read_text()
    assert 'SUBSYSTEM=="drm"' in rule and "svoyak-kiosk-hotplug.service" in rule
    hotplug = unit(root, "svoyak-kiosk-hotplug.service")["Service"]
    assert "try-restart svoyak-kiosk.service" in (
        root / "etc/systemd/system/svoyak-kiosk-hotplug.service").read_text()
    assert hotplug["Type"] == "oneshot"
    # The watch: a browser with no connection to the server (as the kiosk user, to the
    # box's port) after 90 s of both running is started again (booted: tests/box).
    watch = (root / "usr/local/sbin/svoyak-kiosk-watch").read_text()
    assert 'grace="${SVOYAK_KIOSK_GRACE:-90}"' in watch and "dport = :80" in watch
    assert "id -u svoyak-kiosk" in watch and "restart svoyak-kiosk.service" in watch
    assert os.access(root / "usr/local/sbin/svoyak-kiosk-watch", os.X_OK)
    assert unit(root, "svoyak-kiosk-watch.service")["Service"]["ExecStart"] == (
        "/usr/local/sbin/svoyak-kiosk-watch")


def test_base_settings(tree):
    root, _, _ = tree
    assert (root / "etc/hostname").read_text() == "svoyak\n"
    assert os.readlink(root / "etc/localtime") == "/usr/share/zoneinfo/Europe/Moscow"
    assert "LANG=ru_RU.UTF-8" in (root / "etc/default/locale").read_text()
    assert "Storage=volatile" in (root / "etc/systemd/journald.conf.d/svoyak.conf").read_text()
    assert "RuntimeWatchdogSec=15" in (
        root / "etc/systemd/system.conf.d/svoyak-watchdog.conf").read_text()
    # avahi announces the box's own name, written by its first boot (the identity test),
    # never one name for every box.
    avahi = (root / "etc/avahi/avahi-daemon.conf").read_text()
    names = re.findall(r"^host-name=(.*)$", avahi, re.M)
    box = root / "var/lib/svoyak/box.json"
    assert names == ([json.loads(box.read_text())["hostname"]] if box.exists() else []), names
    # The clock never goes back across reboots: fake-hwclock restores it, saved hourly.
    assert (root / "sbin/fake-hwclock").exists()
    r = subprocess.run(["systemctl", f"--root={root}", "is-enabled", "fake-hwclock.service",
                        "svoyak-clock-save.timer"], capture_output=True, text=True)
    assert r.stdout.split() == ["enabled", "enabled"], r.stdout + r.stderr


def test_firmware_files_edited_once(tree):
    root, _, _ = tree
    config = (root / "boot/firmware/config.txt").read_text()
    assert config.count("dtparam=watchdog=on") == 1
    cmdline = (root / "boot/firmware/cmdline.txt").read_text()
    assert cmdline.count("\n") == 1, "cmdline.txt must stay one line"
    params = cmdline.split()
    assert params.count("cfg80211.ieee80211_regdom=RU") == 1
    assert not any(p.startswith("cfg80211.ieee80211_regdom=GB") for p in params)
    # No forced HDMI connector by default: it would hide a TV on the other port.
    assert not any(p.startswith("video=HDMI-A-") for p in params)
    assert params[:3] == ["console=serial0,115200", "console=tty1", "root=PARTUUID=0a1b2c3d-02"]


def test_overlay_root_keeps_the_data_partition(tree):
    """overlayroot with recurse=0 overlays / only: the data partition (its fstab line
    stays) is mounted as is, so games and the box identity survive a power-off."""
    root, _, _ = tree
    params = (root / "boot/firmware/cmdline.txt").read_text().split()
    assert [p for p in params if p.startswith("overlayroot=")] == ["overlayroot=tmpfs:recurse=0"]
    conf = (root / "etc/overlayroot.conf").read_text()
    assert re.findall(r"^overlayroot=.*$", conf, re.M) == ['overlayroot="tmpfs:recurse=0"']
    assert (root / "usr/share/initramfs-tools/scripts/init-bottom/overlayroot").exists()
    assert "auto_initramfs=1" in (root / "boot/firmware/config.txt").read_text().split()
    assert re.search(r"^LABEL=svoyak-data\s+/var/lib/svoyak\s", (root / "etc/fstab").read_text(),
                     re.M)
