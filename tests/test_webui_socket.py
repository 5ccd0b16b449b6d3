"""Every Socket.IO handler through Flask-SocketIO's test client, over a real game loop, the
real sport engine and a real SQLite file."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from webui_kit import Kit, make_kit, views

PLAYERS = ["Анна", "Борис", "Вера"]


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path)
    yield k
    k.close()


@pytest.fixture
def game(kit: Kit) -> int:
    return kit.games.start("battle", PLAYERS, "demo:battle", {"stage": "qualification"})


def wait_view(client: Any, pred: Callable[[dict[str, Any]], bool],
              timeout: float = 3.0) -> dict[str, Any]:
    """The first view (received from now on) that satisfies `pred`."""
    end = time.monotonic() + timeout
    seen: list[dict[str, Any]] = []
    while time.monotonic() < end:
        for v in views(client):
            seen.append(v)
            if pred(v):
                return v
        time.sleep(0.02)
    raise AssertionError(f"no matching view among {len(seen)}: {seen[-1:]}")


# --- connect ---------------------------------------------------------------------------------

def test_host_socket_needs_the_pin_login(kit: Kit) -> None:
    anonymous = kit.client("host")
    assert not anonymous.is_connected()
    host = kit.host()
    assert host.is_connected()


def test_unknown_role_is_refused(kit: Kit) -> None:
    assert not kit.client("admin").is_connected()


def test_every_connect_gets_the_full_view_for_its_role(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    hv, bv = views(host)[0], views(board)[0]
    assert hv["game"] == bv["game"] == game
    assert hv["rules"] == "battle" and hv["role"] == "host"
    assert "question" in hv["view"] and "question" not in bv["view"]
    assert [a["type"] for a in hv["actions"]][0] == "announce"
    assert "actions" not in bv
    # A reconnect (a tablet waking up) gets the current state again, not a stale one.
    assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
    again = kit.host()
    assert views(again)[0]["view"]["phase"] == "open"


def test_no_game_payload(kit: Kit) -> None:
    board = kit.client("board")
    v = views(board)[0]
    assert v["game"] is None and "view" not in v


# --- command -------------------------------------------------------------------------------

def test_host_command_is_submitted_and_fanned_out(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    views(board)
    res = host.emit("command", {"type": "announce"}, callback=True)
    assert res == {"ok": True, "events": 1}
    v = wait_view(board, lambda v: v["view"]["phase"] == "open")
    assert v["view"]["lamp"] is True
    assert "lamp_on" in v["cues"]


def test_refused_command_comes_back_with_both_messages(kit: Kit, game: int) -> None:
    host = kit.host()
    res = host.emit("command", {"type": "judge", "verdict": "right"}, callback=True)
    assert res["ok"] is False
    assert res["refused"]["ru"] and res["refused"]["en"]


def test_malformed_command(kit: Kit, game: int) -> None:
    host = kit.host()
    assert host.emit("command", "announce", callback=True)["refused"]["code"] == "malformed"
    assert host.emit("command", {"no": "type"}, callback=True)["ok"] is False


def test_host_actions_from_a_board_or_player_socket_are_refused_and_logged(
        kit: Kit, game: int, caplog: pytest.LogCaptureFixture) -> None:
    board, phone = kit.client("board"), kit.client("player", seat=0)
    for sock in (board, phone):
        for name, data in (("command", {"type": "announce"}),
                           ("new_game", {"rules": "battle", "players": PLAYERS}),
                           ("ui", {"race_shown": True})):
            res = sock.emit(name, data, callback=True)
            assert res["ok"] is False and res["refused"]["code"] == "forbidden", (name, res)
    assert kit.loop.snapshot()[1].phase == "ready"  # nothing happened
    assert kit.hub.ui.race_shown is False
    assert sum("refused host-only" in r.getMessage() for r in caplog.records) == 6


def test_commands_are_stamped_by_the_server_not_the_client(kit: Kit, game: int) -> None:
    host = kit.host()
    before = kit.loop.now()
    host.emit("command", {"type": "announce", "t_ns": 5, "by": "player:0"}, callback=True)
    event = kit.store.events(game)[-1]
    assert event.t_ns >= before


# --- press ---------------------------------------------------------------------------------

def test_board_key_press_in_simulator_mode(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    host.emit("command", {"type": "announce"}, callback=True)
    assert board.emit("press", {"player": 1}, callback=True)["ok"]
    v = wait_view(host, lambda v: v["view"]["answering"] == 1)
    assert v["view"]["race"][0]["by"] == "key"
    assert v["view"]["short_word"] is True  # pressed before "reading finished"


def test_bad_press_arguments(kit: Kit, game: int) -> None:
    board = kit.client("board")
    assert board.emit("press", {"player": "x"}, callback=True)["refused"]["code"] == "malformed"
    assert board.emit("press", {}, callback=True)["ok"] is False


def test_phone_press_is_for_its_own_seat_and_marked_as_phone(kit: Kit, game: int) -> None:
    host = kit.host()
    phone = kit.client("player", seat=2)
    host.emit("command", {"type": "announce"}, callback=True)
    assert phone.emit("press", {"player": 0}, callback=True)["ok"]  # seat 2 regardless
    v = wait_view(host, lambda v: v["view"]["answering"] is not None)
    assert v["view"]["answering"] == 2
    assert v["view"]["race"][0]["by"] == "phone"


def test_phone_without_seat_cannot_press(kit: Kit, game: int) -> None:
    phone = kit.client("player")
    assert phone.emit("press", {}, callback=True)["refused"]["code"] == "forbidden"


def test_without_simulator_keys_are_off_and_phones_on_unless_the_admin_says_no(
        tmp_path: Path) -> None:
    k = make_kit(tmp_path, simulate=False)
    try:
        assert k.services.settings.get()["casual_buzzer"] is True  # phones buzz by default
        k.services.settings.update({"casual_buzzer": False})
        k.games.start("battle", PLAYERS, "demo:battle", {})
        host, board = k.host(), k.client("board")
        phone = k.client("player", seat=0)
        host.emit("command", {"type": "announce"}, callback=True)
        assert board.emit("press", {"player": 0}, callback=True)["refused"]["code"] == "forbidden"
        assert phone.emit("press", {}, callback=True)["refused"]["code"] == "forbidden"
        assert views(phone)[0]["box"]["phone_buzzer"] is False
        k.services.settings.update({"casual_buzzer": True})
        assert phone.emit("press", {}, callback=True)["ok"]
    finally:
        k.close()


def test_press_with_no_game(kit: Kit) -> None:
    board = kit.client("board")
    assert board.emit("press", {"player": 0}, callback=True)["refused"]["code"] == "no_game"


# --- seat, lobby, player commands ---------------------------------------------------------------

def test_seat_joins_the_player_room_and_gets_the_player_view(kit: Kit, game: int) -> None:
    phone = kit.client("player")
    first = views(phone)[0]
    assert first["seat"] is None and "seat" not in first["view"]
    res = phone.emit("seat", {"seat": 1}, callback=True)
    assert res == {"ok": True, "seat": 1}
    v = views(phone)[-1]
    assert v["seat"] == 1 and v["view"]["name"] == "Борис" and v["view"]["score"] == 0


def test_bad_seat_and_non_player_seat(kit: Kit, game: int) -> None:
    phone, board = kit.client("player"), kit.client("board")
    assert phone.emit("seat", {"seat": -1}, callback=True)["refused"]["code"] == "malformed"
    assert board.emit("seat", {"seat": 0}, callback=True)["refused"]["code"] == "forbidden"


def test_lobby_names_reach_the_host_and_leave_on_disconnect(kit: Kit) -> None:
    host = kit.host()
    phone = kit.client("player")
    assert phone.emit("seat", {"seat": None, "name": "Гоша"}, callback=True)["ok"]
    wait_view(host, lambda v: v["ui"]["lobby"] == ["Гоша"])
    phone.disconnect()
    wait_view(host, lambda v: v["ui"]["lobby"] == [])


def test_player_command_needs_a_seat_and_a_listed_action(kit: Kit, game: int) -> None:
    unseated = kit.client("player")
    res = unseated.emit("player_command", {"type": "judge"}, callback=True)
    assert res["refused"]["code"] == "no_seat"
    phone = kit.client("player", seat=0)
    # The sport engine lists no action for players: a phone cannot judge or announce.
    for cmd in ({"type": "judge", "verdict": "right"}, {"type": "announce"}, "x"):
        res = phone.emit("player_command", cmd, callback=True)
        assert res["ok"] is False and res["refused"]["code"] in ("not_now", "malformed")
    assert kit.loop.snapshot()[1].phase == "ready"


def test_player_command_with_no_game(kit: Kit) -> None:
    phone = kit.client("player", seat=0)
    assert phone.emit("player_command", {"type": "bet"}, callback=True)["refused"]["code"] == \
        "no_game"


# --- new game, ui, unknown ------------------------------------------------------------------

def test_new_game_from_the_host(kit: Kit) -> None:
    host, board = kit.host(), kit.client("board")
    res = host.emit("new_game", {"rules": "battle", "players": ["A", "B"],
                                 "package": "demo:battle", "options": {"stage": "1/3"}},
                    callback=True)
    assert res["ok"] and res["game"] == kit.loop.current
    v = wait_view(board, lambda v: v["game"] == res["game"])
    assert [p["name"] for p in v["view"]["players"]] == ["A", "B"]
    assert len(v["view"]["themes"]) == 6


def test_new_game_refusals(kit: Kit) -> None:
    host = kit.host()
    assert host.emit("new_game", {"rules": "chess", "players": ["A", "B"]},
                     callback=True)["refused"]["code"] == "unknown_rules"
    res = host.emit("new_game", {"rules": "battle", "players": ["A"]}, callback=True)
    assert res["ok"] is False and res["refused"]["code"] == "bad_setup"
    res = host.emit("new_game", {"rules": "battle", "players": ["A", "B"],
                                 "package": "demo:nope"}, callback=True)
    assert res["refused"]["code"] == "no_package"
    assert kit.loop.current is None


def test_ui_switches_reach_every_screen(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    assert host.emit("ui", {"race_shown": True, "paused": True}, callback=True)["ok"]
    v = wait_view(board, lambda v: v["ui"]["paused"])
    assert v["ui"]["race_shown"] is True
    # The race overlay closes by itself when the lamp lights for the next question.
    host.emit("command", {"type": "announce"}, callback=True)
    wait_view(board, lambda v: v["ui"]["race_shown"] is False)


def test_unknown_message_is_refused(kit: Kit) -> None:
    board = kit.client("board")
    assert board.emit("hack", {}, callback=True)["refused"]["code"] == "unknown"


def test_end_game_shows_the_summary(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    assert any(a["type"] == "end_game" for a in views(host)[0]["actions"])
    assert host.emit("command", {"type": "end_game"}, callback=True)["ok"]
    v = wait_view(board, lambda v: v.get("finished"))
    assert [s["name"] for s in v["summary"]["standings"]] == PLAYERS


# --- confidentiality, end to end ---------------------------------------------------------------

def test_recorded_frames_never_carry_an_answer_before_it_is_revealed(kit: Kit, game: int) -> None:
    """Record every frame the board and two phones receive while a question is read,
    pressed, judged wrong, queued and judged right; no answer string may appear until the
    question is closed. The host's frames do carry it (so the check can fail)."""
    host = kit.host()
    board, p0, lobby = kit.client("board"), kit.client("player", seat=0), kit.client("player")
    rules, state = kit.loop.snapshot()
    spec = state.themes[0].question(0)
    secret = spec.answer.split(";")[0].strip()
    assert secret
    steps = [{"type": "announce"}, ("press", 1), {"type": "reset_signal"}, ("press", 2),
             {"type": "judge", "verdict": "wrong"}]
    for step in steps:
        if isinstance(step, tuple):
            assert board.emit("press", {"player": step[1]}, callback=True)["ok"]
            time.sleep(0.05)  # past the settle window
            kit.loop.wake()
        else:
            res = host.emit("command", step, callback=True)
            assert res["ok"], (step, res)
    time.sleep(0.3)
    frames = {name: json.dumps(views(c), ensure_ascii=False)
              for name, c in (("board", board), ("player", p0), ("lobby", lobby))}
    host_frames = json.dumps(views(host), ensure_ascii=False)
    assert secret in host_frames
    for name, text in frames.items():
        assert secret not in text, name
        assert spec.text[:30] not in text, name  # sport: the text is heard, not shown
    # After the question closes the answer is public: it may now reach the board.
    assert host.emit("command", {"type": "judge", "verdict": "right"}, callback=True)["ok"]
    v = wait_view(board, lambda v: v["view"]["phase"] == "closed")
    assert secret in json.dumps(v, ensure_ascii=False)


def test_final_bets_and_written_answers_from_phones_stay_secret(kit: Kit) -> None:
    """TV final: each phone bets and writes for its own seat only; the board and the other
    phones see that a bet or answer exists, never its content, until the host judges it."""
    kit.games.start("tv", PLAYERS, "demo:tv", {})
    host = kit.host()
    board, p0, p1 = kit.client("board"), kit.client("player", seat=0), kit.client("player", seat=1)
    for seat, score in ((0, 1000), (1, 500), (2, 300)):
        assert host.emit("command", {"type": "set_score", "player": seat, "score": score},
                         callback=True)["ok"]
    for _ in range(40):  # drive to the final's bets: end rounds, pick, remove themes
        rules, state = kit.loop.snapshot()
        if state.phase == "bets":
            break
        acts = {a.type: a for a in kit.loop.legal_actions()}
        for kind in ("end_round", "pick_chooser", "pick_remover", "remove_theme"):
            if kind in acts:
                a = acts[kind]
                args = {k: v[0]["value"] for k, v in a.args.items()}
                assert host.emit("command", {"type": kind, **args}, callback=True)["ok"]
                break
        else:
            raise AssertionError(f"stuck in {state.phase}: {list(acts)}")
    assert kit.loop.snapshot()[1].phase == "bets"
    mine = wait_view(p0, lambda v: any(a["type"] == "bet" for a in v.get("actions", [])))
    bets = [a for a in mine["actions"] if a["type"] == "bet"]
    assert len(bets) == 1 and bets[0]["args"]["player"] == [
        {"value": 0, "ru": "Анна", "en": "Анна"}]
    # A phone cannot bet for another seat: the seat is forced to its own.
    assert p0.emit("player_command", {"type": "bet", "player": 1, "amount": 777},
                   callback=True)["ok"]
    _, state = kit.loop.snapshot()
    assert dict(state.play.written.bets) == {0: 777}
    assert p1.emit("player_command", {"type": "bet", "amount": 444}, callback=True)["ok"]
    assert p1.emit("player_command", {"type": "write", "text": "x"},
                   callback=True)["refused"]["code"] == "not_now"
    host.emit("command", {"type": "bet", "player": 2, "amount": 299}, callback=True)
    wait_view(board, lambda v: v["view"]["phase"] == "writing")
    assert p0.emit("player_command", {"type": "write", "text": "Тайный ответ Анны"},
                   callback=True)["ok"]
    assert p1.emit("player_command", {"type": "press"}, callback=True)["refused"]["code"] == \
        "not_now"  # presses never take the player_command path
    time.sleep(0.3)
    board_views, p1_views = views(board), views(p1)
    host_frames = json.dumps(views(host), ensure_ascii=False)
    assert "Тайный ответ Анны" in host_frames

    def rows(vs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for v in vs if v.get("view") and (v["view"].get("question") or {}).get(
            "written") for r in v["view"]["question"]["written"]["rows"]]

    assert rows(board_views) and rows(p1_views)
    for vs in (board_views, p1_views):
        assert "Тайный ответ Анны" not in json.dumps(vs, ensure_ascii=False)
        assert all(r["bet"] is None and r["answer"] is None for r in rows(vs) if r["player"] == 0)
    assert any(r["bet"] == 444 for r in rows(p1_views) if r["player"] == 1)  # its own bet
    assert all(r["bet"] is None for r in rows(board_views))
    assert any(r["has_bet"] for r in rows(board_views) if r["player"] == 0)
    # Judging Анна's answer reveals it (and her bet) to everyone.
    assert host.emit("command", {"type": "judge", "player": 0, "verdict": "right"},
                     callback=True)["ok"]
    v = wait_view(board, lambda v: "Тайный ответ Анны" in json.dumps(v, ensure_ascii=False))
    assert [r["bet"] for r in v["view"]["question"]["written"]["rows"] if r["player"] == 0] == [777]


def test_a_state_replaced_within_the_settle_window_is_held_but_never_lost(
        kit: Kit, game: int) -> None:
    """A press waiting out the settle window is not fanned out (the answerer follows in a
    few ms); if no newer state came, a timer sends the held one with its cues."""
    from appliance.rules.protocol import Event
    from appliance.runtime.loop import Update

    board = kit.client("board")
    views(board)
    rules, state = kit.loop.snapshot()

    class Soon:
        """The sport engine, with a deadline 5 ms ahead that will bring nothing."""

        def __getattr__(self, name: str) -> Any:
            return getattr(rules, name)

        def next_deadline(self, _state: Any) -> int:
            return kit.loop.now() + 5_000_000

    kit.hub._on_update(Update(game, Soon(), state, [Event("probe", 0)], current=True))
    assert views(board) == []
    time.sleep(0.3)
    got = views(board)
    # At least the held one (a broadcast of the box's own, e.g. the buttons' status, may
    # land in the same 0.3 s on a loaded machine: seen once as two views).
    assert got and got[-1]["game"] == game


def test_sound_cues_lamp_press_and_time_up(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    views(board)
    host.emit("command", {"type": "announce"}, callback=True)
    assert "lamp_on" in wait_view(board, lambda v: bool(v.get("cues")))["cues"]
    board.emit("press", {"player": 0}, callback=True)
    assert "press" in wait_view(board, lambda v: v["view"]["answering"] == 0)["cues"]
    host.emit("command", {"type": "judge", "verdict": "right"}, callback=True)
    host.emit("command", {"type": "next"}, callback=True)
    host.emit("command", {"type": "announce"}, callback=True)
    host.emit("command", {"type": "reading_done"}, callback=True)  # the 7 s window starts
    v = wait_view(board, lambda v: v["view"]["reading_done"] and v["view"]["lamp"])
    assert 6_000 < v["timers"]["window"]["ms"] <= 7_000  # the countdown bar's length
    # Nobody presses: the loop's timeout closes the question: "time up".
    v = wait_view(board, lambda v: "time_up" in (v.get("cues") or []), timeout=10)
    assert v["view"]["phase"] == "closed"


def test_a_phone_with_a_seat_the_game_lacks_sees_the_board(kit: Kit, game: int) -> None:
    host, board = kit.host(), kit.client("board")
    stale = kit.client("player", seat=5)  # kept from an earlier four-player game
    v = views(stale)[0]
    assert v["seat"] is None and "name" not in v["view"]
    host.emit("command", {"type": "announce"}, callback=True)
    # The fan-out goes on for everyone, the stale phone included.
    wait_view(board, lambda v: v["view"]["phase"] == "open")
    wait_view(stale, lambda v: v["view"]["phase"] == "open")


def test_timers_from_view_deadlines() -> None:
    from webui.hub import timers

    view = {"window_ends_ns": 9_000_000_000, "deadline_ns": 5, "lamp": True,
            "question": {"answer_deadline_ns": 3_500_000_000, "t_ns": 1}}
    assert timers(view, 2_000_000_000) == {
        "window": {"ms": 7000, "ends": 9_000_000_000},
        "answer": {"ms": 1500, "ends": 3_500_000_000}}
    assert timers(view, 10_000_000_000) == {}  # passed deadlines are no countdowns


def test_new_game_with_a_preset_and_timers(kit: Kit) -> None:
    host = kit.host()
    # The TV preset is for three players; the club preset takes four.
    res = host.emit("new_game", {"rules": "tv", "players": ["A", "B", "C", "D"],
                                 "package": "demo:tv", "options": {"preset": "tv"}},
                    callback=True)
    assert res["ok"] is False
    res = host.emit("new_game", {"rules": "tv", "players": ["A", "B", "C", "D"],
                                 "package": "demo:tv",
                                 "options": {"preset": "club", "timers": {"answer_s": 5}}},
                    callback=True)
    assert res["ok"], res
    settings = kit.loop.snapshot()[1].settings
    assert settings.preset == "club" and settings.answer_s == 5.0
    res = host.emit("new_game", {"rules": "battle", "players": ["A", "B"], "package":
                                 "demo:battle", "options": {"stage": "qualification",
                                                            "timers": {"window_s": 3}}},
                    callback=True)
    assert res["ok"], res
    state = kit.loop.snapshot()[1]
    assert state.settings.window_ns == 3_000_000_000 and len(state.themes) == 4


def test_a_second_host_screen_is_counted_for_every_host(kit: Kit, game: int) -> None:
    """Two host tablets (or tabs) would both judge: each host screen learns how many there
    are, so it can warn; the count drops again when one leaves. Other roles never see it."""
    first = kit.host()
    assert views(first)[-1]["hosts"] == 1
    second = kit.host()
    assert views(second)[-1]["hosts"] == 2
    assert views(first)[-1]["hosts"] == 2
    board = kit.client("board")
    assert "hosts" not in views(board)[-1]
    second.disconnect()
    assert views(first)[-1]["hosts"] == 1


def test_a_phone_acts_only_for_the_seat_the_rules_give_the_move(kit: Kit) -> None:
    """The auction's word, the cat's giver: the same engine command the host sends, from
    the phone of the seat the engine names (`Action.seat`), refused from any other."""
    kit.games.start("tv", ["Анна", "Борис", "Вера"], "demo:tv", {})
    host = kit.host()
    for cmd in ({"type": "pick_chooser", "player": 0},
                {"type": "choose", "cell": "1:2"}):  # the demo's cat in the bag
        assert host.emit("command", cmd, callback=True)["ok"]
    assert kit.loop.snapshot()[1].phase == "cat_give"
    anna, boris = kit.client("player", seat=0), kit.client("player", seat=1)
    res = boris.emit("player_command", {"type": "give", "player": 2}, callback=True)
    assert res["refused"]["code"] == "not_now"
    assert kit.loop.snapshot()[1].phase == "cat_give"
    # The giver's phone names the receiver (the "player" is not the phone's own seat here).
    assert anna.emit("player_command", {"type": "give", "player": 2}, callback=True)["ok"]
    state = kit.loop.snapshot()[1]
    assert state.phase == "cat_price" and state.play.answerer == 2
    res = anna.emit("player_command", {"type": "cat_price", "value": 300}, callback=True)
    assert res["refused"]["code"] == "not_now"
    vera = kit.client("player", seat=2)
    assert vera.emit("player_command", {"type": "cat_price", "value": 300}, callback=True)["ok"]
    assert kit.loop.snapshot()[1].play.value == 300
