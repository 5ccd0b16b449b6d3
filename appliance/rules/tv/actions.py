"""The TV game's legal actions: exactly the host buttons (and player inputs) allowed now,
each with complete arguments, so a generic UI never offers what the rules forbid."""

from __future__ import annotations

from itertools import permutations
from typing import Any

from appliance.rules import kit, undo
from appliance.rules.protocol import Action
from appliance.rules.tv import auction as auc
from appliance.rules.tv import final as fin
from appliance.rules.tv.board import cat_price_choices, playable
from appliance.rules.tv.corrections import flawed
from appliance.rules.tv.state import Phase, Stage, State, late_press

VERDICT = kit.verdict_choices()


def _players(state: State, seats: Any) -> list[dict[str, Any]]:
    return [{"value": p, "ru": state.players[p], "en": state.players[p]} for p in seats]


KIND_WORDS = {"cat": ("кот в мешке", "cat in the bag"), "auction": ("аукцион", "auction"),
              "no_risk": ("без риска", "no risk"), "for_all": ("для всех", "for all"),
              "stake_all": ("ставки всех", "stakes for all")}


def _cells(state: State, ids: Any, kinds: bool = False) -> list[dict[str, Any]]:
    """Board cells as choices «theme, value»; with `kinds`, a special question says its kind
    (the host's replacement list: never on choices a phone gets, where it would give away
    the cat and the auction)."""
    out = []
    for r, t, q in ids:
        c = state.board.rounds[r].cells[t][q]
        name = state.board.rounds[r].themes[t]
        ru = en = f"{name}, {c.value}"
        word = KIND_WORDS.get(str(c.kind)) if kinds else None
        if word:
            ru, en = f"{ru} — {word[0]}", f"{en} — {word[1]}"
        choice: dict[str, Any] = {"value": f"{t}:{q}", "ru": ru, "en": en}
        if word:
            choice["kind"] = str(c.kind)
        out.append(choice)
    return out


def _int(low: int, high: int, step: int = 1) -> dict[str, Any]:
    return {"type": "int", "min": low, "max": high, "step": step}


def legal_actions(state: State) -> list[Action]:
    if state.stage == Stage.OVER:
        return undo.actions(state)
    acts = _phase_actions(state)
    acts += undo.actions(state)
    acts.append(Action("set_score", "Исправить счёт", "Set a score",
                       args={"player": _players(state, range(state.seats)),
                             "score": {"type": "int", "min": -kit.SCORE_LIMIT,
                                       "max": kit.SCORE_LIMIT, "step": 1}}))
    if any(not j.voided for j in state.judgements):
        refs = [{"value": j.ref, "ru": f"№{j.ref + 1}: {state.players[j.player]}, "
                 f"{kit.VERDICT_LABELS[j.verdict][0].lower()} ({j.delta:+d})",
                 "en": f"#{j.ref + 1}: {state.players[j.player]}, {j.verdict} ({j.delta:+d})"}
                for j in state.judgements if not j.voided]
        acts.append(Action("rejudge", "Изменить оценку", "Replace a judgement",
                           args={"ref": refs, "verdict": VERDICT}))
    if flawed(state) is not None:
        acts.append(Action("remove_question", "Снять вопрос (ошибка в вопросе)",
                           "Remove the question (it is flawed)", confirm=True))
        if state.open_cells():
            acts.append(Action("replace_question", "Заменить вопрос", "Replace the question",
                               confirm=True,
                               args={"cell": _cells(state, state.open_cells(), kinds=True)}))
    if state.stage == Stage.ROUND and state.phase != Phase.PICK_CHOOSER:
        others = [p for p in range(state.seats) if p != state.chooser]
        acts.append(Action("set_chooser", "Сменить выбирающего", "Change the chooser",
                           args={"player": _players(state, others)}))
    acts.append(Action("finish", "Подвести итоги сейчас", "Finish play now", confirm=True))
    return acts


def _phase_actions(state: State) -> list[Action]:
    ph, play = state.phase, state.play
    acts: list[Action] = []
    if ph == Phase.PICK_CHOOSER:
        acts.append(Action("pick_chooser", "Кто выбирает", "Who chooses",
                           args={"player": _players(state, state.candidates)}))
        acts.append(Action("end_round", "Закончить раунд", "End the round", confirm=True))
    elif ph == Phase.CHOOSE:
        acts.append(Action("choose", "Выбрать вопрос", "Choose a question",
                           args={"cell": _cells(state, state.open_cells())},
                           seat=state.chooser))
        played = [c.id for c in state.board.rounds[state.round].all_cells()
                  if playable(c) and c.id in state.played]
        if played:
            acts.append(Action("reopen", "Вернуть вопрос на табло", "Reopen a question",
                               args={"cell": _cells(state, played)}, confirm=True))
        acts.append(Action("end_round", "Закончить раунд", "End the round", confirm=True))
    elif ph in (Phase.READING, Phase.AFTER_WRONG):
        ru, en = ("Сигнал", "Lamp") if ph == Phase.READING else ("Снова сигнал", "Re-arm")
        acts.append(Action("lamp", ru, en, key="space"))
        acts.append(Action("close", "Никто не ответил", "Nobody answered", key="n"))
    elif ph == Phase.BUTTONS:
        assert play is not None and play.race is not None
        race = play.race
        eligible = sorted(race.playing - race.answered)
        acts.append(Action("press", "Нажатие", "Press", by="player",
                           args={"player": _players(state, eligible)}))
        acts.append(Action("close", "Никто не ответил", "Nobody answered", key="n"))
    elif ph == Phase.ANSWERING:
        acts.append(Action("judge", "Оценить ответ", "Judge the answer",
                           args={"verdict": VERDICT}))
        late = late_press(state)
        if late is not None:
            acts.append(Action("hand_over", f"{late['ru']} — передать ответ",
                               f"{late['en']} — hand the answer over", key="h",
                               args={"player": _players(state, [late["player"]])}))
    elif ph == Phase.CAT_GIVE:
        assert play is not None
        cat = play.question.cat if play.question else None
        keep = state.settings.cat_to_self or bool(cat and cat.may_keep)
        seats = [p for p in range(state.seats) if keep or p != play.opener]
        acts.append(Action("give", "Отдать кота", "Give the cat",
                           args={"player": _players(state, seats)}, seat=play.opener))
    elif ph == Phase.CAT_PRICE:
        assert play is not None and play.cell is not None
        price = cat_price_choices(state.board.cell(play.cell))
        spec: Any = ([{"value": v, "ru": str(v), "en": str(v)} for v in price]
                     if isinstance(price, list) else price)
        acts.append(Action("cat_price", "Стоимость кота", "The cat's value",
                           args={"value": spec}, seat=play.answerer))
    elif ph == Phase.AUCTION:
        acts += _auction_actions(state)
    elif ph == Phase.BETS:
        assert play is not None and play.written is not None
        for p in play.written.players:
            low, high = fin.bet_range(state.scores[p])
            acts.append(Action("bet", f"Ставка: {state.players[p]}",
                               f"Bet: {state.players[p]}",
                               args={"player": _players(state, [p]), "amount": _int(low, high)}))
    elif ph == Phase.WRITING:
        assert play is not None and play.written is not None
        left = play.written.unjudged()
        # Only a written answer can be judged (and revealed): the others are recorded first.
        written = dict(play.written.answers)
        ready = [p for p in left if p in written]
        if ready:
            acts.append(Action("judge", "Оценить (и открыть) ответ",
                               "Judge (and reveal) an answer",
                               args={"player": _players(state, ready), "verdict": VERDICT}))
        acts.append(Action("write", "Записать ответ", "Record a written answer",
                           args={"player": _players(state, left), "text": {"type": "text"}}))
    elif ph == Phase.FINAL_ORDER:
        acts.append(Action("pick_remover", "Кто убирает тему следующим",
                           "Who removes a theme next",
                           args={"player": _players(state, state.candidates)}))
    elif ph == Phase.FINAL_REMOVE:
        f, final = state.final, state.board.final
        assert f is not None and final is not None
        by = fin.remover(f.order, len(f.removed))
        themes = [{"value": t, "ru": final.themes[t], "en": final.themes[t]}
                  for t in f.remaining(len(final.themes))]
        acts.append(Action("remove_theme", f"Убирает тему: {state.players[by]}",
                           f"Theme removed by {state.players[by]}", args={"theme": themes}))
    elif ph == Phase.SHOOTOUT_THEME:
        choices = [{"value": f"{r}:{t}",
                    "ru": f"{state.board.rounds[r].themes[t]} ({state.board.rounds[r].name})",
                    "en": f"{state.board.rounds[r].themes[t]} ({state.board.rounds[r].name})"}
                   for r, t in state.shootout_sources()]
        choices.append({"value": "host", "ru": "Вопросы ведущего", "en": "The host's questions"})
        acts.append(Action("shootout_theme", "Тема перестрелки", "Shootout theme",
                           args={"theme": choices}))
    if state.stage != Stage.FINAL and ph in (
            Phase.READING, Phase.BUTTONS, Phase.ANSWERING, Phase.AFTER_WRONG, Phase.CAT_GIVE,
            Phase.CAT_PRICE, Phase.AUCTION, Phase.BETS, Phase.WRITING):
        acts.append(Action("skip", "Снять вопрос", "Skip the question", confirm=True))
    return acts


def _auction_actions(state: State) -> list[Action]:
    play = state.play
    assert play is not None and play.auction is not None
    a = play.auction
    if a.turn is None:
        return []
    p, who = a.turn, _players(state, [a.turn])
    acts = []
    rng = auc.bid_range(a, p, state.settings.auction_step, state.scores)
    if rng is not None:
        acts.append(Action("bid", f"Ставка: {state.players[p]}", f"Bid: {state.players[p]}",
                           args={"player": who,
                                 "amount": _int(rng[0], rng[1], state.settings.auction_step)},
                           seat=p))
    if auc.can_beat(a, p, state.scores):
        score = state.scores[p]
        acts.append(Action("all_in", f"Ва-банк ({score})", f"All-in ({score})",
                           args={"player": who}, seat=p))
    if not (a.leader is None and p == a.opener):
        acts.append(Action("pass", "Пас", "Pass", args={"player": who}, seat=p))
    orders = [list(o) for o in permutations(range(state.seats)) if o[0] == a.opener]
    # Not a correction to confirm: the host sets the order and the auction view shows it.
    acts.append(Action("bid_order", "Порядок торгов", "Bidding order", args={
        "order": [{"value": o, "ru": " → ".join(state.players[p] for p in o),
                   "en": " → ".join(state.players[p] for p in o)} for o in orders]}))
    return acts

