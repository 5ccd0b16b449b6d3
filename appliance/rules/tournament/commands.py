"""Tournament commands: each validated against the state, answered with events or refused.

A refusal (`Refused`, Russian and English) changes nothing. Command types and their
arguments are listed in docs/tournament.md ("Commands and events").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from appliance.rules.protocol import Command, Event, Refused
from appliance.rules.tournament import draw as dr
from appliance.rules.tournament import entries as en
from appliance.rules.tournament import stages as st
from appliance.rules.tournament.state import (
    DONE,
    EXTRA_THEME,
    FINAL_TIES,
    PLAYING,
    PLAYOFF,
    READY,
    STOPPED,
    BattleState,
    Tournament,
)

MAX_SEED = 2**63 - 1


def no(ru: str, en_: str, code: str = "refused") -> Refused:
    return Refused(ru, en_, code)


def _entry_id(state: Tournament, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise no(f"Нет участника {v!r}.", f"There is no entry {v!r}.", "unknown_entry")
    try:
        state.player(v)
    except KeyError:
        raise no(f"Нет участника {v!r}.", f"There is no entry {v!r}.", "unknown_entry") from None
    return v


def _battle(state: Tournament, v: Any) -> BattleState:
    if not state.drawn:
        raise no("Жеребьёвки ещё не было.", "There has been no draw yet.", "not_drawn")
    b = state.battle(v) if isinstance(v, str) else None
    if b is None:
        raise no(f"Нет боя «{v}».", f"There is no battle '{v}'.", "unknown_battle")
    return b


def _label(b: BattleState) -> tuple[str, str]:
    return f"Бой {b.drawn.number} ({b.id})", f"Battle {b.drawn.number} ({b.id})"


def _before_draw(state: Tournament, what_ru: str, what_en: str) -> None:
    if state.drawn:
        raise no(f"{what_ru} можно только до жеребьёвки.", f"{what_en} only before the draw.",
                 "after_draw")


# -- settings and entries ----------------------------------------------------------------------
def configure(state: Tournament, c: Command) -> list[Event]:
    data: dict[str, Any] = {}
    if "title" in c.args:
        data["title"] = en.clean(c.args["title"])[:200]
    if "bracket" in c.args:
        _before_draw(state, "Размер сетки менять", "The bracket size can be changed")
        b = c.args["bracket"]
        if b is not None and (isinstance(b, bool) or not isinstance(b, int)
                              or b not in st.BRACKETS):
            raise no("Сетка должна быть степенью тройки (3, 9, 27, 81, 243, 729).",
                     "The bracket must be a power of 3 (3, 9, 27, 81, 243, 729).", "bad_bracket")
        data["bracket"] = b
    if "final_ties" in c.args:
        if c.args["final_ties"] not in FINAL_TIES:
            raise no("Равенство за 2–3 место: «shared» (делят место) или «extra_theme»"
                     " (дополнительная тема).",
                     "Ties for 2nd/3rd: 'shared' or 'extra_theme'.", "bad_setting")
        f = state.final
        if f is not None and f.result is not None:
            raise no("Финал уже сыгран.", "The final has been played.", "too_late")
        data["final_ties"] = c.args["final_ties"]
    if "final_red" in c.args:
        r = c.args["final_red"]
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= st.THEMES_FINAL:
            raise no(f"Красных тем в финале — от 0 до {st.THEMES_FINAL} (по регламенту 6).",
                     f"Red themes in the final: 0 to {st.THEMES_FINAL} (6 by the regulation).",
                     "bad_setting")
        f = state.final
        if f is not None and f.status != READY and f.status != "waiting":
            raise no("Финал уже начат.", "The final has started.", "too_late")
        data["final_red"] = r
    if not data:
        raise no("Нечего менять.", "Nothing to change.", "empty")
    return [Event("configured", c.t_ns, data)]


def _new_entries(state: Tournament, found: list[en.Entry], lines: list[int]) -> list[en.Entry]:
    taken = {en.key(p.entry.name): p for p in state.active()}
    problems = [(line, f"«{e.name}» уже заявлен (участник {taken[en.key(e.name)].id})",
                 f"'{e.name}' is already entered (entry {taken[en.key(e.name)].id})")
                for e, line in zip(found, lines, strict=True) if en.key(e.name) in taken]
    if problems:
        raise en.EntriesError(problems)
    if len(state.active()) + len(found) > en.MAX_ENTRIES:
        raise en.EntriesError([(0, f"больше {en.MAX_ENTRIES} заявок",
                                f"more than {en.MAX_ENTRIES} entries")])
    return found


def _added(state: Tournament, found: list[en.Entry], t: int) -> list[Event]:
    first = state.next_id
    return [Event("entry_added", t, {"entry": first + i, **e.to_json()})
            for i, e in enumerate(found)]


def add_entry(state: Tournament, c: Command) -> list[Event]:
    e = en.entry(c.args)
    return _added(state, _new_entries(state, [e], [0]), c.t_ns)


def import_entries(state: Tournament, c: Command) -> list[Event]:
    """``{"csv": text}`` (the file's text) or ``{"entries": [{name, team, city, rating}]}``."""
    if isinstance(c.args.get("csv"), str):
        found = en.parse_csv(c.args["csv"])
        lines = list(range(2, len(found) + 2))  # the parser refused any bad line already
    elif isinstance(c.args.get("entries"), list):
        found, problems = [], []
        for i, obj in enumerate(c.args["entries"], start=1):
            try:
                found.append(en.entry(obj if isinstance(obj, Mapping) else {}, i))
            except en.EntriesError as e:
                problems.extend(e.problems)
        if problems:
            raise en.EntriesError(problems)
        lines = list(range(1, len(found) + 1))
        en.check(found, lines)
    else:
        raise no("Нужен CSV-текст или список заявок.", "A CSV text or a list of entries is"
                 " needed.", "bad_import")
    return _added(state, _new_entries(state, found, lines), c.t_ns)


def edit_entry(state: Tournament, c: Command) -> list[Event]:
    eid = _entry_id(state, c.args.get("entry"))
    old = state.player(eid)
    merged = {**old.entry.to_json(), **{k: v for k, v in c.args.items() if k != "entry"}}
    new = en.entry(merged)
    for p in state.active():
        if p.id != eid and en.key(p.entry.name) == en.key(new.name):
            raise no(f"Имя «{new.name}» уже у участника {p.id}.",
                     f"The name '{new.name}' is already entry {p.id}'s.", "duplicate_name")
    if state.drawn and en.key(new.team) != en.key(old.entry.team):
        _check_team_rule(state, {eid: new.team}, touched={eid})
    return [Event("entry_edited", c.t_ns, {"entry": eid, **new.to_json()})]


def withdraw_entry(state: Tournament, c: Command) -> list[Event]:
    eid = _entry_id(state, c.args.get("entry"))
    _before_draw(state, "Снять заявку", "An entry can be withdrawn")
    if state.player(eid).withdrawn:
        raise no("Заявка уже снята.", "The entry is already withdrawn.", "withdrawn")
    return [Event("entry_withdrawn", c.t_ns, {"entry": eid})]


# -- the draw ----------------------------------------------------------------------------------
def draw(state: Tournament, c: Command) -> list[Event]:
    if state.any_started():
        raise no("Бои уже начались: новая жеребьёвка невозможна.",
                 "Battles have started: there can be no new draw.", "battles_started")
    seed = c.args.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise no("Жребий (seed) — целое число от 0 до 2^63−1.",
                 "The seed must be a whole number from 0 to 2^63-1.", "bad_seed")
    players = state.active()
    bracket = c.args.get("bracket", state.settings.bracket)
    if bracket is not None and (isinstance(bracket, bool) or not isinstance(bracket, int)):
        raise no("Размер сетки — целое число.", "The bracket size must be a whole number.",
                 "bad_bracket")
    seeded = c.args.get("seeded", False)
    if not isinstance(seeded, bool):
        raise no("«seeded» — да или нет.", "'seeded' must be true or false.", "bad_seeded")
    drawn = dr.draw([p.entry for p in players], seed, bracket, seeded)
    ids = [p.id for p in players]
    battles = []
    for b in drawn.battles:
        j = b.to_json()
        for s in j["seats"]:
            if s["entry"] is not None:
                s["entry"] = ids[s["entry"]]
        battles.append(j)
    plan = drawn.plan
    return [Event("drawn", c.t_ns, {
        "seed": seed, "entries": len(players), "bracket": plan.bracket,
        "stages": [{"key": x.key, "themes": x.themes, "sizes": list(x.sizes)}
                   for x in plan.stages],
        "byes": plan.byes, "seeded": seeded, "seeds": [ids[s] for s in drawn.seeds],
        "battles": battles})]


def tree_of(state: Tournament, battle_id: str) -> str:
    """The tree a battle before the bracket belongs to, named by the first-stage seat it
    feeds (``27.4:1``); a bracket battle is its own."""
    b = state.battle(battle_id)
    while b is not None and st.before_bracket(b.drawn.stage) and b.drawn.feeds:
        nxt = state.battle(b.drawn.feeds)
        if nxt is None or not st.before_bracket(nxt.drawn.stage):
            return f"{b.drawn.feeds}:{b.drawn.feeds_seat}"
        b = nxt
    return battle_id


def _check_team_rule(state: Tournament, teams: Mapping[int, str],
                     seats: Mapping[str, tuple[int | None, ...]] | None = None,
                     touched: set[int] | None = None) -> None:
    """Refuse if two players of one team would be in one qualification tree (a first-stage
    seat's battles before the 1/27: they could meet there). Preliminary battles of a small
    field keep the rule where the draw could and never refuse. Only the trees of the
    `touched` entries are checked (the rest is as the draw left it)."""
    trees: dict[str, set[int]] = {}
    for b in state.battles:
        if not st.is_qualification(b.drawn.stage):
            continue
        now = (seats or {}).get(b.id, b.seats)
        trees.setdefault(tree_of(state, b.id), set()).update(e for e in now if e is not None)
    for tree, members in trees.items():
        if touched is not None and not members & touched:
            continue
        seen: dict[str, int] = {}
        for e in sorted(members):
            team = teams.get(e, state.player(e).entry.team)
            k = en.key(team)
            if k in seen:
                first = next(x for x in state.battles if st.is_qualification(x.drawn.stage)
                             and tree_of(state, x.id) == tree and e in
                             (seats or {}).get(x.id, x.seats))
                ru, en_ = _label(first)
                raise no(f"{ru}: два игрока команды «{team}» в одной ветке квалификации"
                         f" (участники {seen[k]} и {e}) — они могли бы встретиться до 1/27"
                         " финала.",
                         f"{en_}: two players of team '{team}' in one qualification branch"
                         f" (entries {seen[k]} and {e}): they could meet before the 1/27"
                         " final.", "team_rule")
            seen[k] = e


# -- battles -----------------------------------------------------------------------------------
def start_battle(state: Tournament, c: Command) -> list[Event]:
    b = _battle(state, c.args.get("battle"))
    ru, en_ = _label(b)
    if b.status != READY:
        why = {"waiting": ("ещё не известны все игроки", "its players are not all known yet"),
               PLAYING: ("уже идёт", "it is already being played"),
               DONE: ("уже сыгран", "it has been played")}[b.status]
        raise no(f"{ru} начать нельзя: {why[0]}.", f"{en_} cannot start: {why[1]}.",
                 "not_ready")
    if len(b.present) < 2:
        raise no(f"{ru}: в бою меньше двух игроков.", f"{en_}: fewer than two players.",
                 "not_ready")
    themes = c.args.get("themes", [])
    if not isinstance(themes, list) or not all(isinstance(t, str) and t.strip() for t in themes):
        raise no("Темы — список названий.", "Themes must be a list of names.", "bad_themes")
    need = themes_of(state, b)
    if len(themes) != need:
        raise no(f"{ru} играется на {need} темах (регламент 3.4), а названо {len(themes)}.",
                 f"{en_} is played on {need} themes (regulation 3.4), not {len(themes)}.",
                 "theme_count")
    seen: set[str] = set()
    used = {en.key(t) for t in state.used_themes}
    for t in themes:
        k = en.key(t)
        if k in used:
            raise no(f"Тема «{t}» уже звучала в турнире.",
                     f"The theme '{t}' has already been played in the tournament.",
                     "theme_used")
        if k in seen:
            raise no(f"Тема «{t}» дважды в одном бою.", f"The theme '{t}' appears twice.",
                     "theme_used")
        seen.add(k)
    red = c.args.get("red", [])
    if not isinstance(red, list) or not all(isinstance(t, str) and en.key(t) in seen
                                            for t in red):
        raise no("Красные темы — список названий тем этого боя.",
                 "Red themes must be a list of this battle's theme names.", "bad_themes")
    want = state.settings.final_red if b.id == "F" else 0
    if len({en.key(t) for t in red}) != want:
        raise no(f"{ru}: красных тем должно быть {want}, а отмечено {len(red)}.",
                 f"{en_}: {want} red themes are needed, {len(red)} are marked.",
                 "theme_count")
    game = c.args.get("game")
    if game is not None and (isinstance(game, bool) or not isinstance(game, int)):
        raise no("Номер игры — целое число.", "The game must be a whole number.", "bad_game")
    room = c.args.get("room")
    if room is not None and not _name_ok(room):
        raise no("Зал — короткое имя.", "The room must be a short name.", "bad_room")
    data: dict[str, Any] = {"battle": b.id, "game": game,
                            "themes": [en.clean(t) for t in themes], "players": list(b.present)}
    if red:
        data["red"] = [en.clean(t) for t in red]
    if room is not None:
        data["room"] = room
    return [Event("battle_started", c.t_ns, data)]


SOURCE_KEYS = ("box", "game", "room")


def _name_ok(v: Any) -> bool:
    return isinstance(v, str) and 0 < len(v) <= 64 and v.isprintable()


def _source(c: Command) -> dict[str, Any] | None:
    """A result's ``source``: ``{"box", "game", "room"}`` (each optional), where it was
    played — the battle's game on this box, or a room box's game (the rooms link)."""
    v = c.args.get("source")
    if v is None:
        return None
    if not isinstance(v, Mapping) or not v or any(k not in SOURCE_KEYS for k in v) or any(
            not _name_ok(v[k]) for k in ("box", "room") if k in v) or (
            "game" in v and (isinstance(v["game"], bool) or not isinstance(v["game"], int)
                             or v["game"] < 0)):
        raise no("Источник результата — {box, game, room}: имя бокса, номер игры, зал.",
                 "A result's source is {box, game, room}: a box name, a game number, a room.",
                 "bad_source")
    return {k: v[k] for k in SOURCE_KEYS if k in v}


def themes_of(state: Tournament, b: BattleState) -> int:
    """Themes of a battle (3.4): its stage's as the draw planned them — 4, 6 for a battle
    whose winner goes to the final, 12 in the final; the final's playoff plays one."""
    if b.id == PLAYOFF:
        return 1
    return st.themes_for(state.plan.stages if state.plan else (), b.drawn.stage)


_LINE_INTS = ("score", "extra", "right", "wrong", "silent", "presses")


def _line(v: Any, entry: int) -> dict[str, Any]:
    if not isinstance(v, Mapping):
        raise no("Строка результата — словарь.", "A result line must be an object.",
                 "bad_result")
    out: dict[str, Any] = {"entry": entry}
    for k in _LINE_INTS:
        x = v.get(k, 0)
        if isinstance(x, bool) or not isinstance(x, int) or abs(x) > 1_000_000:
            raise no(f"«{k}» в результате — целое число.", f"'{k}' must be a whole number.",
                     "bad_result")
        out[k] = x
    for k in ("reaction_mean_ms", "reaction_best_ms"):
        x = v.get(k)
        if x is not None and (isinstance(x, bool) or not isinstance(x, int | float)
                              or not math.isfinite(x) or x < 0):
            raise no(f"«{k}» — неотрицательное число.", f"'{k}' must be a non-negative number.",
                     "bad_result")
        out[k] = x
    return out


def battle_result(state: Tournament, c: Command) -> list[Event]:
    """``{"battle", "winner": seat, "lines": [{score, extra, right, ...} per seat],
    "source": {box, game, room}}``: seats in the order of the players present when the
    battle started; ``source`` (optional) names where it was played and goes into the
    ``battle_finished`` event as it is."""
    b = _battle(state, c.args.get("battle"))
    ru, en_ = _label(b)
    if b.status != PLAYING:
        raise no(f"{ru} сейчас не играется: результата быть не может.",
                 f"{en_} is not in play: there can be no result for it.", "not_playing")
    present = b.present
    lines = c.args.get("lines")
    if not isinstance(lines, list) or len(lines) != len(present):
        raise no(f"{ru}: нужен результат каждого из {len(present)} игроков.",
                 f"{en_}: a result line for each of the {len(present)} players is needed.",
                 "bad_result")
    out = [_line(v, e) for v, e in zip(lines, present, strict=True)]
    w = c.args.get("winner")
    if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < len(present):
        raise no("Победитель — номер места игрока в бою.", "The winner must be a seat number.",
                 "bad_result")
    top = max(x["score"] + x["extra"] for x in out)
    if out[w]["score"] + out[w]["extra"] != top or [
            x["score"] + x["extra"] for x in out].count(top) != 1:
        raise no(f"{ru}: победитель должен один набрать больше всех (с дополнительными темами).",
                 f"{en_}: the winner must alone have the highest score (extra themes"
                 " included).", "bad_result")
    order = sorted(range(len(out)), key=lambda i: (i != w, -(out[i]["score"] + out[i]["extra"])))
    played = c.args.get("themes") or []
    if not isinstance(played, list) or not all(isinstance(t, str) for t in played):
        raise no("Сыгранные темы — список названий.", "Played themes must be a list of names.",
                 "bad_result")
    known = {en.key(t) for t in state.used_themes}
    extra_themes = [en.clean(t) for t in played if en.key(t) not in known and en.clean(t)]
    data: dict[str, Any] = {
        "battle": b.id, "winner": present[w], "lines": out, "walkover": False,
        "order": [present[i] for i in order], "extra_themes": extra_themes}
    if (source := _source(c)) is not None:
        data["source"] = source
    return [Event("battle_finished", c.t_ns, data)] + _after_final(state, b, out, c.t_ns)


def _after_final(state: Tournament, b: BattleState, lines: list[dict[str, Any]],
                 t: int) -> list[Event]:
    """Ties for 2nd/3rd in the final: with the extra-theme setting, a playoff battle."""
    if b.id != "F" or state.settings.final_ties != EXTRA_THEME or len(lines) < 3:
        return []
    totals = sorted((x["score"] + x["extra"] for x in lines), reverse=True)
    if totals[1] != totals[2]:
        return []
    tied = [x["entry"] for x in lines if x["score"] + x["extra"] == totals[1]]
    return [Event("playoff_drawn", t, {"players": tied})]


def walkover(state: Tournament, c: Command) -> list[Event]:
    """``{"battle", "absent": [entry ids]}``: players who did not come («неявка»); with one
    player left the battle is won by walkover, with two it is played by two."""
    b = _battle(state, c.args.get("battle"))
    ru, en_ = _label(b)
    if b.status != READY:
        raise no(f"{ru}: неявку отмечают до начала боя, когда известны все игроки.",
                 f"{en_}: a no-show is marked before the battle starts, with all players known.",
                 "not_ready")
    absent = c.args.get("absent")
    if not isinstance(absent, list) or not absent:
        raise no("Укажите, кто не явился.", "Name who did not come.", "bad_walkover")
    for e in absent:
        if e not in b.present:
            raise no(f"{ru}: участника {e!r} нет среди игроков боя.",
                     f"{en_}: entry {e!r} is not among its players.", "bad_walkover")
    left = [e for e in b.present if e not in absent]
    if not left:
        raise no(f"{ru}: хотя бы один игрок должен явиться.",
                 f"{en_}: at least one player must be present.", "bad_walkover")
    events = [Event("absent", c.t_ns, {"battle": b.id, "players": sorted(set(absent))})]
    if len(left) == 1:
        events.append(Event("battle_finished", c.t_ns, {
            "battle": b.id, "winner": left[0], "walkover": True, "order": left,
            "lines": [_line({}, left[0])]}))
    return events


def battle_stopped(state: Tournament, c: Command) -> list[Event]:
    """``{"battle", "scores": [per seat], "source"}``: the battle's game ended on the host
    (here or in a room: ``source`` as for `battle_result`) before the
    rules gave a winner (the host ended it early). Nobody goes on: the director decides —
    the leader as winner (`award_leader`) or a replay (`replay_battle`)."""
    b = _battle(state, c.args.get("battle"))
    ru, en_ = _label(b)
    if b.status != PLAYING:
        raise no(f"{ru} сейчас не играется.", f"{en_} is not in play.", "not_playing")
    scores = c.args.get("scores")
    if (not isinstance(scores, list) or len(scores) != len(b.present)
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in scores)):
        raise no(f"{ru}: нужны очки каждого из {len(b.present)} игроков.",
                 f"{en_}: a score for each of the {len(b.present)} players is needed.",
                 "bad_result")
    data: dict[str, Any] = {"battle": b.id, "scores": scores}
    if (source := _source(c)) is not None:
        data["source"] = source
    return [Event("battle_stopped", c.t_ns, data)]


def award_leader(state: Tournament, c: Command) -> list[Event]:
    """``{"battle", "reason"}``: the director records the leader of a battle that ended
    early as its winner, saying why (the event keeps the reason)."""
    b = _battle(state, c.args.get("battle"))
    ru, en_ = _label(b)
    if b.status != STOPPED or b.stopped is None:
        raise no(f"{ru} не остановлен досрочно: победителя определяет игра.",
                 f"{en_} was not ended early: its game decides the winner.", "not_stopped")
    reason = en.clean(c.args.get("reason") if isinstance(c.args.get("reason"), str) else "")
    if not reason:
        raise no("Укажите причину: почему победителем записан лидер.",
                 "Give the reason why the leader is recorded as the winner.", "no_reason")
    scores = list(b.stopped)
    top = max(scores)
    if scores.count(top) != 1:
        raise no(f"{ru}: лидеров несколько ({scores.count(top)} с {top} очками) — бой можно"
                 " только переиграть.",
                 f"{en_}: {scores.count(top)} players share the lead with {top}: the battle"
                 " can only be replayed.", "no_leader")
    w = scores.index(top)
    present = b.present
    lines = [_line({"score": x}, e) for x, e in zip(scores, present, strict=True)]
    order = sorted(range(len(scores)), key=lambda i: (i != w, -scores[i]))
    events = [Event("battle_finished", c.t_ns, {
        "battle": b.id, "winner": present[w], "lines": lines, "walkover": False,
        "order": [present[i] for i in order], "extra_themes": [], "awarded": reason[:300]})]
    return events + _after_final(state, b, lines, c.t_ns)


def replay_battle(state: Tournament, c: Command) -> list[Event]:
    """Play a battle again (a protest upheld, a broken button): its result is dropped and
    its winner taken back, as long as the next battle has not started."""
    b = _battle(state, c.args.get("battle"))
    ru, en_ = _label(b)
    if b.status not in (PLAYING, STOPPED, DONE):
        raise no(f"{ru} ещё не играли.", f"{en_} has not been played.", "not_played")
    nxt = state.battle(b.drawn.feeds) if b.drawn.feeds else None
    if nxt is not None and nxt.status in (PLAYING, STOPPED, DONE):
        rn, en2 = _label(nxt)
        raise no(f"{ru} не переиграть: {rn} уже начат.",
                 f"{en_} cannot be replayed: {en2} has started.", "too_late")
    if b.id == "F" and state.battle(PLAYOFF) is not None:
        p = state.battle(PLAYOFF)
        if p is not None and p.status in (PLAYING, STOPPED, DONE):
            raise no("Финал не переиграть: перестрелка за место уже начата.",
                     "The final cannot be replayed: the playoff has started.", "too_late")
    return [Event("battle_reset", c.t_ns, {"battle": b.id})]


def swap_players(state: Tournament, c: Command) -> list[Event]:
    """``{"a": entry, "b": entry}``: exchange two players' places in battles not started,
    or put an entry outside the bracket (a reserve) in a player's place."""
    if not state.drawn:
        raise no("До жеребьёвки менять некого.", "There is nothing to swap before the draw.",
                 "not_drawn")
    a = _entry_id(state, c.args.get("a"))
    b = _entry_id(state, c.args.get("b"))
    if a == b:
        raise no("Нужны два разных участника.", "Two different entries are needed.", "same")
    places = {e: _place(state, e) for e in (a, b)}
    if all(p is None for p in places.values()):
        raise no("Ни один из двух не стоит в сетке.", "Neither entry is in the bracket.",
                 "not_in_bracket")
    for e, p in places.items():
        if state.player(e).withdrawn:
            raise no(f"Заявка {e} снята.", f"Entry {e} is withdrawn.", "withdrawn")
        if p is not None and p.status not in (READY, "waiting"):
            ru, en_ = _label(p)
            raise no(f"{ru} уже начат: замена невозможна.",
                     f"{en_} has started: no swap is possible.", "too_late")
    seats: dict[str, tuple[int | None, ...]] = {}
    for e, p in places.items():
        if p is not None:
            other = b if e == a else a
            cur = seats.get(p.id, p.seats)
            seats[p.id] = tuple(other if s == e else s for s in cur)
    pa, pb = places[a], places[b]
    if pa is not None and pb is not None and pa.id == pb.id:
        raise no("Оба уже в одном бою.", "Both are already in the same battle.", "same")
    _check_team_rule(state, {}, seats, touched={a, b})
    return [Event("players_swapped", c.t_ns, {"a": a, "b": b})]


def _place(state: Tournament, entry: int) -> BattleState | None:
    """The battle this entry sits in now, if it was drawn there and has not played yet."""
    for bs in state.battles:
        for seat, e in enumerate(bs.seats):
            if e == entry and bs.drawn.seats[seat].entry is not None:
                return bs
    return None


HANDLERS: dict[str, Callable[[Tournament, Command], list[Event]]] = {
    "configure": configure,
    "add_entry": add_entry,
    "import_entries": import_entries,
    "edit_entry": edit_entry,
    "withdraw_entry": withdraw_entry,
    "draw": draw,
    "start_battle": start_battle,
    "battle_result": battle_result,
    "walkover": walkover,
    "battle_stopped": battle_stopped,
    "award_leader": award_leader,
    "replay_battle": replay_battle,
    "swap_players": swap_players,
}
