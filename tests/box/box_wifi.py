"""The box's Wi-Fi on virtual radios (mac80211_hwsim): its access point on its own radio
(wlan0, as a Pi's built-in chip), phones as wpa_supplicant clients on the other radios, each
in its own network namespace inside the VM (radios.sh, phone.py). A fresh card's radio is
off (NetworkManager.state WirelessEnabled=false, rfkill blocked): the box must turn it on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from club import Host, Screen, phase
from report import record
from vm import Box, BoxError

BOOT_TIMEOUT = 900
PHONE = "/usr/local/lib/svoyak-test/phone.py"
PHONES = "/usr/local/lib/svoyak-test/phones.sh"
CROWD = 20
BOX_ADDRESS = "10.42.0.1"


def on_phone(box: Box, n: int, *args: str, timeout: float = 240) -> dict[str, Any]:
    quoted = " ".join(json.dumps(a) for a in args)
    out = box.sh(f"ip netns exec phone{n} python3 {PHONE} {quoted}", timeout=timeout)
    return dict(json.loads(out.strip().splitlines()[-1]))


def box_wifi(box: Box) -> dict[str, str]:
    return dict(json.loads(box.sh("cat /var/lib/svoyak/box.json"))["wifi"])


@pytest.fixture(scope="module")
def access_point(box: Box) -> dict[str, str]:
    """The box's access point, up: NetworkManager's hotspot connection active on wlan0;
    two phones ready (their radios in their own network namespaces)."""
    box.wait_board(BOOT_TIMEOUT)
    box.sh(f"{PHONES} 2")
    try:
        box.wait_for("nmcli -t -f NAME,DEVICE connection show --active | "
                     "grep -q ':wlan0$' && iw dev wlan0 info | grep -q 'type AP'",
                     300, "the access point on wlan0")
    except BoxError as e:
        state = box.sh("rfkill list; nmcli radio; nmcli -t device; cat "
                       "/var/lib/NetworkManager/NetworkManager.state; journalctl -b "
                       "--no-pager -n 60 -u NetworkManager -u svoyak-box-setup", check=False)
        raise BoxError(f"{e}\n{state}") from None
    record("box_wifi.ap_up_s", round(box.since_start(), 1))
    return box_wifi(box)


def test_a_phone_joins_with_the_box_password_and_gets_an_address(
        box: Box, access_point: dict[str, str]) -> None:
    lease = on_phone(box, 1, "join", "phone1", access_point["ssid"], access_point["password"])
    record("box_wifi.phone1", lease)
    assert lease["ip"].startswith("10.42.0.") and lease["ip"] != BOX_ADDRESS
    assert lease["router"] == BOX_ADDRESS


def test_a_wrong_password_does_not_join(box: Box, access_point: dict[str, str]) -> None:
    with pytest.raises(BoxError, match="not associated"):
        on_phone(box, 2, "join", "phone2", access_point["ssid"], "not the password", "45",
                 timeout=90)
    on_phone(box, 2, "leave", "phone2")


def test_the_captive_portal_probe_is_sent_to_the_box(box: Box,
                                                     access_point: dict[str, str]) -> None:
    # Any name resolves to the box (its dnsmasq); the probe's answer sends to the portal.
    got = on_phone(box, 1, "probe", "phone1", "captive-probe.test", "/generate_204")
    assert got["address"] == BOX_ADDRESS, got
    assert (got["status"], got["location"]) == (302, f"http://{BOX_ADDRESS}/captive"), got


def test_the_box_name_resolves_through_avahi(box: Box, access_point: dict[str, str]) -> None:
    """Every box announces its own name (svoyak-XXXX.local, from box.json), so two boxes
    on one network never answer for each other."""
    name = json.loads(box.sh("cat /var/lib/svoyak/box.json"))["hostname"]
    assert name.startswith("svoyak-"), name
    got = on_phone(box, 1, "mdns", f"{name}.local")
    assert got["address"] == BOX_ADDRESS, got


def test_a_phone_plays_a_question_over_the_air(box: Box, access_point: dict[str, str]) -> None:
    """A phone on the box's Wi-Fi takes seat 3 and presses from its page's socket; the host
    (from outside) and the board see its press answer."""
    host = Host(box.base_url(), box.pin())
    board = Screen(box.base_url(), {"role": "board"})
    try:
        host.settings(buzzer_form="1", casual_buzzer="on")  # phones as buzzers (admin page)
        host.send("new_game", {"rules": "tv", "players": ["Анна", "Борис", "Вера"],
                               "package": "demo:tv"})
        host.act("pick_chooser", player=0)
        host.act("choose")
        host.act("lamp")
        board.wait(lambda v: phase(v) == "buttons", 30, "the lamp")
        got = on_phone(box, 1, "press", BOX_ADDRESS, "2")
        record("box_wifi.phone1_press", got)
        v = board.wait(lambda v: phase(v) == "answering", 30, "the phone's press")
        assert v["view"]["question"]["answerer"] == 2
    finally:
        host.close()
        board.close()


def test_twenty_phones_join_and_play_a_question(box: Box, access_point: dict[str, str]) -> None:
    """A room's worth of phones on the box's Wi-Fi at once: all associate and get addresses
    of their own, then all take part in one question (every phone's page connected as a
    player of seat 1..3 or a spectator) and the first to press answers."""
    box.sh(f"{PHONES} {CROWD}", timeout=300)
    ssid, psk = access_point["ssid"], access_point["password"]
    joins = "; ".join(
        f"(ip netns exec phone{k} python3 {PHONE} join phone{k} {json.dumps(ssid)} "
        f"{json.dumps(psk)} > /run/svoyak-test/join{k}.json 2>&1 &)"
        for k in range(1, CROWD + 1))
    box.sh(f"mkdir -p /run/svoyak-test; {joins}; wait", timeout=60)
    leases = box.wait_for(
        f"n=0; for k in $(seq 1 {CROWD}); do grep -q '\"ip\"' /run/svoyak-test/join$k.json "
        f"&& n=$((n + 1)); done; [ $n -eq {CROWD} ] && cat /run/svoyak-test/join*.json",
        600, f"{CROWD} phones joined")
    addresses = {json.loads(line)["ip"] for line in leases.splitlines() if '"ip"' in line}
    record("box_wifi.crowd_joined_s", round(box.since_start(), 1))
    assert len(addresses) == CROWD, leases
    stations = box.sh("iw dev wlan0 station dump | grep -c ^Station").strip()
    assert int(stations) >= CROWD, stations
    # The question: every phone's page in the room (seats 1-3 for three of them, the rest
    # spectators); phone 3 (Вера's) presses at the lamp; every phone hears who answers.
    host = Host(box.base_url(), box.pin())
    try:
        host.settings(buzzer_form="1", casual_buzzer="on")
        host.send("new_game", {"rules": "tv", "players": ["Анна", "Борис", "Вера"],
                               "package": "demo:tv"})
        host.act("pick_chooser", player=0)
        host.act("choose")
        plays = "; ".join(
            f"(ip netns exec phone{k} python3 {PHONE} play {BOX_ADDRESS} "
            f"{k - 1 if k <= 3 else -1} {1 if k == 3 else 0} > /run/svoyak-test/play{k}.json "
            f"2>&1 &)" for k in range(1, CROWD + 1))
        box.sh(f"{plays}; wait", timeout=60)
        box.wait_for(f"[ $(cat /run/svoyak-test/play*.json | grep -c ready) -eq {CROWD} ]",
                     300, "every phone's page in the room")
        host.act("lamp")
        out = box.wait_for(
            f"n=0; for k in $(seq 1 {CROWD}); do grep -q answerer /run/svoyak-test/play$k.json"
            f" && n=$((n + 1)); done; [ $n -eq {CROWD} ] && cat /run/svoyak-test/play*.json",
            300, "every phone hearing the answerer")
    finally:
        host.close()
    heard = [json.loads(line) for line in out.splitlines() if "answerer" in line]
    record("box_wifi.crowd_question_s", round(box.since_start(), 1))
    assert len(heard) == CROWD and {h["answerer"] for h in heard} == {2}, out
