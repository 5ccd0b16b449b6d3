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
JOIN_S = 240  # one phone's association and DHCP, with the whole crowd joining
PLAY_S = 240  # one phone's page, in the room until the question is answered


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


def in_parallel(box: Box, name: str, commands: dict[int, str], timeout: float) -> dict[int, Any]:
    """Each phone's command at once, in the background inside the box, each under its own
    `timeout`; waits until every one has ended (its exit status written), then returns
    every phone's last line of output parsed (None for a phone whose command failed)."""
    run = "/run/svoyak-test"
    starts = " ".join(
        f"(timeout {timeout:.0f} {cmd} > {run}/{name}{k}.out 2> {run}/{name}{k}.err; "
        f"echo $? > {run}/{name}{k}.rc) >/dev/null 2>&1 &" for k, cmd in commands.items())
    box.sh(f"mkdir -p {run}; rm -f {run}/{name}*; {starts}", timeout=60)
    box.wait_for(f"[ $(ls {run}/{name}*.rc | wc -l) -eq {len(commands)} ]",
                 timeout + 60, f"every phone's {name}")
    got: dict[int, Any] = {}
    for k in commands:
        out = box.sh(f"cat {run}/{name}{k}.rc; tail -n 1 {run}/{name}{k}.out", check=False)
        rc, _, last = out.partition("\n")
        got[k] = json.loads(last) if rc.strip() == "0" and last.strip() else None
    return got


def failures(box: Box, name: str, got: dict[int, Any]) -> str:
    failed = [k for k, v in got.items() if not v]
    return "\n".join(f"phone{k}: " + box.sh(f"tail -c 600 /run/svoyak-test/{name}{k}.err",
                                             check=False) for k in failed[:5])


def test_twenty_phones_join_and_play_a_question(box: Box, access_point: dict[str, str]) -> None:
    """A room's worth of phones on the box's Wi-Fi at once: all associate and get addresses
    of their own, then all take part in one question (every phone's page connected as a
    player of seat 1..3 or a spectator) and the first to press answers. Fails, naming the
    phones, if fewer than all of them join or play."""
    box.sh(f"{PHONES} {CROWD}", timeout=300)
    ssid, psk = access_point["ssid"], access_point["password"]
    started = box.since_start()
    def join(k: int) -> str:
        return (f"ip netns exec phone{k} python3 {PHONE} join phone{k} {json.dumps(ssid)} "
                f"{json.dumps(psk)} {JOIN_S}")

    joined = in_parallel(box, "join", {k: join(k) for k in range(1, CROWD + 1)}, JOIN_S + 30)
    # A phone whose DHCP exchange went unanswered (udhcpc gives up after three requests of
    # an offered address) tries once more, as a phone's own Wi-Fi would.
    again = [k for k, v in joined.items() if not v]
    record("box_wifi.crowd_retried", again)
    if again:
        joined.update(in_parallel(box, "rejoin", {k: join(k) for k in again}, JOIN_S + 30))
    leases = {k: v for k, v in joined.items() if v}
    record("box_wifi.crowd_join_s", round(box.since_start() - started, 1))
    record("box_wifi.crowd_joined", len(leases))
    assert len(leases) == CROWD, f"{len(leases)} of {CROWD} joined\n" + failures(
        box, "rejoin", joined)
    addresses = {v["ip"] for v in leases.values()}
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
        started = box.since_start()
        run = "/run/svoyak-test"
        plays = " ".join(
            f"(ip netns exec phone{k} timeout {PLAY_S} python3 {PHONE} play {BOX_ADDRESS} "
            f"{k - 1 if k <= 3 else -1} {1 if k == 3 else 0} > {run}/play{k}.out "
            f"2> {run}/play{k}.err; echo $? > {run}/play{k}.rc) >/dev/null 2>&1 &"
            for k in range(1, CROWD + 1))
        box.sh(f"rm -f {run}/play*; {plays}", timeout=60)
        # Every page in the room (its first view) or ended (failed): then the lamp.
        box.wait_for(f"n=0; for k in $(seq 1 {CROWD}); do grep -q ready {run}/play$k.err "
                     f"|| [ -e {run}/play$k.rc ] && n=$((n + 1)); done; [ $n -eq {CROWD} ]",
                     PLAY_S, "every phone's page in the room")
        in_room = int(box.sh(f"cat {run}/play*.err | grep -c ready", check=False).strip()
                      or 0)
        record("box_wifi.crowd_in_room_s", round(box.since_start() - started, 1))
        assert in_room == CROWD, f"{in_room} of {CROWD} phones in the room"
        host.act("lamp")
        box.wait_for(f"[ $(ls {run}/play*.rc | wc -l) -eq {CROWD} ]", PLAY_S,
                     "every phone hearing the answerer")
    finally:
        host.close()
    played = {}
    for k in range(1, CROWD + 1):
        out = box.sh(f"cat {run}/play{k}.rc; tail -n 1 {run}/play{k}.out", check=False)
        rc, _, last = out.partition("\n")
        played[k] = json.loads(last) if rc.strip() == "0" and last.strip() else None
    heard = {k: v for k, v in played.items() if v and "answerer" in v}
    record("box_wifi.crowd_question_s", round(box.since_start() - started, 1))
    record("box_wifi.crowd_played", len(heard))
    assert len(heard) == CROWD, f"{len(heard)} of {CROWD} played\n" + failures(
        box, "play", played)
    assert {h["answerer"] for h in heard.values()} == {2}, heard
    assert heard[3]["pressed"], heard[3]
