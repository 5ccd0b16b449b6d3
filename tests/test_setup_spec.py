"""The engines describe their own setup; the new-game dialog, the web UI's setups and
`svoyak new-game` are generated from that description (no rule knowledge in webui/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from webui_kit import Kit, make_kit

from appliance.rules import kit as rkit
from appliance.rules import registry
from appliance.rules.protocol import Refused
from webui.games import Games

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def kit(tmp_path: Path):
    k = make_kit(tmp_path)
    yield k
    k.close()


def test_both_engines_describe_their_setup():
    specs = registry.setups()
    assert set(specs) == {"battle", "tv"}  # the tournament runs from its own page
    assert (specs["battle"].players_min, specs["battle"].players_max) == (2, 3)
    assert (specs["tv"].players_min, specs["tv"].players_max) == (2, 4)
    for spec in specs.values():
        for o in spec.options:
            assert o.label_ru and o.label_en and o.path


def test_the_dialog_is_generated_from_the_descriptions(kit: Kit):
    c = kit.app.test_client()
    c.post("/login", data={"pin": kit.services.settings.pin})
    page = c.get("/host").get_data(as_text=True)
    for spec in registry.setups().values():
        assert f'id="ng-format-{spec.rules}"' in page
        for o in spec.options:
            assert f'id="ng-{o.name}"' in page and f'data-option="{o.name}"' in page
            if o.max is not None:
                assert f'max="{int(o.max)}"' in page
    assert 'id="ng-stage-box"' in page and 'value="club_timed"' in page


@pytest.mark.parametrize("rules, options, want", [
    ("battle", {"stage": "qualification", "timers": {"window_s": 5}},
     {"stage": "qualification", "window_s": 5.0}),
    ("battle", {"stage": "", "window_s": 9}, {"window_s": 9.0}),
    ("tv", {"preset": "club_timed", "timers": {"answer_s": 4}}, {"answer_s": 4.0}),
    ("tv", {}, {}),
])
def test_games_build_setups_as_before(kit: Kit, rules, options, want):
    setup = Games(kit.loop).setup(rules, ["А", "Б", "В"], None, options)
    assert setup["package"] == registry.setups()[rules].demo
    settings = dict(setup["settings"])
    assert settings.pop("settle_ms") > 0
    assert settings == want
    if rules == "tv":
        assert setup.get("preset", "tv") == (options.get("preset") or "tv")
    registry.get(rules).initial(setup)  # the engine accepts what its description built


@pytest.mark.parametrize("options", [{"window_s": 0}, {"window_s": "x"}, {"stage": "1/2"},
                                     {"colour": "red"}, {"window_s": float("nan")},
                                     {"window_s": 10**400}, {"window_s": "1e999"}])
def test_a_bad_option_is_refused_by_the_description(kit: Kit, options):
    with pytest.raises(Refused) as info:
        Games(kit.loop).setup("battle", ["А", "Б"], None, options)
    assert info.value.code == rkit.BAD_SETUP


def test_new_game_cli_prints_a_script_start_the_runner_accepts(tmp_path: Path):
    out = subprocess.run([sys.executable, "-m", "svoyak.cli", "new-game", "battle", "Аня",
                          "Борис", "--stage", "qualification", "--window-s", "5"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = json.loads(out.stdout)
    assert line["setup"]["settings"] == {"stage": "qualification", "window_s": 5.0}
    script = tmp_path / "s.jsonl"
    script.write_text(out.stdout + '{"type": "announce", "t_ns": 1000000000}\n', "utf-8")
    run = subprocess.run([sys.executable, "-m", "svoyak.cli", "replay", str(script),
                          "--strict"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    bad = subprocess.run([sys.executable, "-m", "svoyak.cli", "new-game", "tv", "А",
                          "--preset", "tv"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "3" in bad.stderr  # the TV preset needs 3 players


def test_the_rules_a_host_may_start_are_the_registrys(monkeypatch):
    """`new_game` from a screen accepts exactly the rules that describe their setup: the
    registry's list, not one kept in the web layer."""
    from types import SimpleNamespace

    from webui import inbound

    def accepted(rules):
        out = inbound.new_game({"rules": rules, "players": ["A", "B"]})
        return isinstance(out, tuple)

    assert accepted("battle") and accepted("tv")
    for refused in ("tournament", "chess", ["tv"], 3):  # no setup of its own; unknown; shapes
        out = inbound.new_game({"rules": refused, "players": ["A", "B"]})
        assert isinstance(out, dict) and out["refused"]["code"] in ("unknown_rules", "malformed")
    spec = registry.setups()["tv"]
    fake = SimpleNamespace(SETUP_SPEC=spec, **{f: (lambda *a: None) for f in registry._REQUIRED})
    monkeypatch.setitem(registry.REGISTRY, "club-night", fake)
    assert accepted("club-night")
