// The host's tablet, laid out per phase: the question with its answer on the left; on the
// right the answerer's name, then one primary action in the same place with its key, the
// other legal actions, the race, the corrections (each a dialog that shows the current
// value and confirms the change), the scores and the simulator's buttons. Every button is
// one of the engine's legal actions: the screen never offers what the rules forbid.
"use strict";

const $ = (id) => document.getElementById(id);
const toast = $("toast");
let keymap = {};
let state = null;
const socket = connect({role: "host"}, render);

function fire(cmd) { return send(socket, "command", cmd, toast); }

// Corrections and rare moves: a row of buttons, each opening a dialog.
const RARE = ["undo", "set_score", "rejudge", "set_chooser", "reopen", "remove_question",
  "replace_question", "end_round", "skip", "finish", "end_game"];
// While someone answers, the verdict is the one thing to do: it goes first.
const FIRST = ["judge", "pick_chooser", "give", "cat_price"];

// While the lamp is on presses may still come: closing the question is not what the host
// does now, so it never takes the primary place then.
const NOT_WHILE_LAMP = ["close"];

function split(actions, lamp) {
  const main = [], rare = [], presses = [];
  let hand = null;
  for (const a of actions || []) {
    if (a.by !== "host" && a.type === "press") presses.push(a);
    else if (a.type === "hand_over") hand = a;  // its own banner (renderLatePress)
    else if (RARE.includes(a.type)) rare.push(a);
    else main.push(a);
  }
  const rank = (a) => (FIRST.includes(a.type) ? 1 : 0) - (lamp && NOT_WHILE_LAMP.includes(a.type) ? 1 : 0);
  main.sort((a, b) => rank(b) - rank(a));
  return {main, rare, presses, hand};
}

function themeName(v) {
  if (!v) return "";
  if (typeof v.theme === "string") return v.theme;
  return (v.theme && v.theme.name) || "";
}

function phaseText(data, v) {
  if (data.game == null) return "";
  if (gameOver(data)) return t("host.finished");
  if (!v.phase) return "";
  const key = "phase." + v.phase;
  return t(key) !== key ? t(key) : (v.phase_ru || "");
}

function render(data) {
  state = data;
  const v = norm(data.view);
  // After the end no round is being played: the bar names the format and «Игра окончена».
  const round = gameOver(data) ? "" : v.shootout ? t("round.shootout") : v.round && v.round.name ? roundName(v.round.name) : "";
  // The round first: in a narrow top bar the format is what gets cut, not the round.
  $("where").textContent = data.game == null ? t("host.no_game")
    : [round, t("rules." + data.rules)].filter((x) => x !== "" && x != null).join(" · ");
  renderRoundBanner(v, data);
  renderTourneyCaption(data);
  $("phase").textContent = phaseText(data, v);
  renderLamp(v, data);
  $("short-word").hidden = !(v.short_word && ["open", "answering"].includes(v.phase));
  $("short-word").classList.toggle("compact", v.answering != null);
  $("second-host").hidden = !((data.hosts || 1) > 1);
  const hw = (data.hardware && data.hardware.warnings) || [];
  const stuck = ((data.hardware && data.hardware.seats) || []).filter((s) => s.stuck).map((s) => playerName(v, s.seat));
  const fault = data.hardware && data.hardware.fault;
  const logFault = data.loop_fault ? [label(data.loop_fault)] : [];
  const warn = logFault.concat(fault ? [t("host.hw_fault." + fault.kind, fault)] : [], hw,
    stuck.length ? [t("host.stuck", {who: stuck.join(", ")})] : []);
  $("hw-warnings").hidden = warn.length === 0
    || (data.hardware && data.hardware.simulated && stuck.length === 0 && logFault.length === 0);
  $("hw-warnings").textContent = warn.join(" · ");

  renderQuestion(v, data);
  $("timer-row").hidden = $("question").hidden;
  renderAnswerer(v);
  renderRace(v);
  renderScores(v);
  runTimer($("timer"), data.timers);
  runClock(data.timers);
  renderResult(data, v);

  const all = (data.actions || []).map((a) => unansweredFirst(a, v));
  const {main, rare, presses, hand} = split(all.filter((a) => a.type !== "choose" || !v.board), v.lamp);
  renderLatePress(v, hand);
  const choose = all.find((a) => a.type === "choose" && v.board);
  renderBoardPick(v, choose);
  // The primary action: the verdict, the next step, or the board to pick from; at the end
  // of play, finishing the game (one tap: nothing else is left to do).
  let primary = main.slice(0, 1), rest = main.slice(1);
  if (v.lamp && primary.length && NOT_WHILE_LAMP.includes(primary[0].type)) { rest = main; primary = []; }
  if (choose) { rest = main; primary = []; }
  const names = players(v).map((p) => p.name).join();
  keymap = {
    ...renderActions($("primary"), primary, fire, {names}),
    ...renderActions($("actions"), rest, fire, {primary: false, names}),
  };
  // Nothing to do but wait (the lamp is on): the primary place says so, at the same size,
  // so the page does not jump when the next step appears.
  const waiting = primary.length === 0 && !choose && v.lamp && !gameOver(data);
  if (waiting) {
    $("primary").replaceChildren(el("div", {class: "waiting", role: "status", text: t("host.waiting_presses")}));
    $("primary")._sig = null;
  }
  // After the end the next thing a host does is the next game: «Новая игра» takes the
  // primary place (the game's events are in the log already; starting the next one stores
  // its result, and «Завершить игру» among the corrections does that alone).
  const over = data.game != null && gameOver(data) && primary.length === 0 && !choose;
  if (over) {
    // A tournament's battle: the next thing is the tournament's next battle, started on
    // the director's page; the tap first ends this battle's game, which hands its result
    // to the tournament (appliance/tournament/director.py).
    const battle = tourneyBattle(data);
    const again = el("button", {class: "btn primary act-new_game", type: "button", id: "again", dataset: {primary: "1"}},
      el("span", {class: "label", text: battle ? t("host.next_battle") : t("host.new_game")}), el("kbd", {text: "n"}));
    again.addEventListener("click", battle ? () => nextBattle(data) : openNewGame);
    $("primary").replaceChildren(again);
    $("primary")._sig = null;
    keymap.n = again;
  }
  $("primary").hidden = primary.length === 0 && !waiting && !over;
  markOrder(v);
  $("actions").hidden = rest.length === 0;
  Object.assign(keymap, renderCorrections(v, rare.filter((a) => !(primary[0] && primary[0].type === a.type))));
  if (hand && !$("late-press").hidden) keymap[(hand.key || "h").toLowerCase()] = $("late-hand");
  renderProposal(v, choose, data);
  renderSim(v, presses, data);
  // The race view and the pause belong to play: not offered before a game or after its end.
  const playing = data.game != null && !gameOver(data);
  $("race-toggle").hidden = !playing;
  $("pause-toggle").hidden = !playing;
  $("race-toggle").classList.toggle("on", !!data.ui.race_shown);
  $("pause-toggle").classList.toggle("on", !!data.ui.paused);
  $("race-toggle").textContent = data.ui.race_shown ? t("host.hide_race") : t("host.show_race");
  $("pause-toggle").textContent = data.ui.paused ? t("host.resume") : t("host.pause");
  const otherLang = !!(data.box && data.box.language && data.box.language !== S.lang);
  $("box-lang").hidden = !otherLang;
  $("ng-box-lang").hidden = !otherLang;
  $("ng-lobby").textContent = data.ui.lobby.length ? t("host.lobby", {names: data.ui.lobby.join(", ")}) : "";
  if (data.game == null && $("new-game-dialog").hidden && !window._askedNewGame) {
    window._askedNewGame = true;
    openNewGame();
  }
}

// The final's written answers: «Записать ответ» offers first those who have not answered
// yet, so its default is the next one to record, not someone already recorded.
function unansweredFirst(a, v) {
  const w = v.question && v.question.written;
  if (a.type !== "write" || !w || !Array.isArray(a.args && a.args.player)) return a;
  const done = new Set(w.rows.filter((r) => r.has_answer || r.answer != null).map((r) => r.player));
  const player = [...a.args.player].sort((x, y) => done.has(x.value) - done.has(y.value));
  return {...a, args: {...a.args, player}};
}

// The shootout («перестрелка») or an extra theme, named as the rules name it, with who
// plays it (the others sit out).
function renderRoundBanner(v, data) {
  const box = $("round-banner");
  const names = (seats) => seats.map((s) => playerName(v, s)).join(", ");
  let text = "";
  if (data.game != null && !gameOver(data)) {
    // The final is played by those with a score above zero: the host is told who is out
    // before the themes and the bets.
    const out = v.tv && v.stage === "final" && v.final
      ? players(v).map((p) => p.seat).filter((s) => !(v.final.players || []).includes(s)) : [];
    if (v.tv && v.shootout) text = t("board.shootout", {names: names(v.shootout.players)});
    else if (out.length) text = t("host.out_of_final", {names: names(out)});
    else if (!v.tv && v.theme && v.theme.extra) {
      text = t("host.extra_theme", {names: names(players(v).filter((p) => p.playing !== false).map((p) => p.seat))});
    }
  }
  box.hidden = !text;
  box.textContent = text;
}

// A press with an earlier tick reached the box after the answerer was committed: the host
// sees who and by how much, and hands the answer over with one button (the engine's
// `hand_over`, offered only while it is legal).
function msWords(x) {
  const n = Math.round(x * 10) / 10;
  return S.lang === "ru" ? String(n).replace(".", ",") : String(n);
}

function renderLatePress(v, hand) {
  const box = $("late-press");
  const late = v.late_press;
  box.hidden = !(late && hand);
  if (box.hidden) return;
  $("late-text").textContent = t("host.late_press", {name: late.name, ms: msWords(late.earlier_by_ms)});
  $("late-now").textContent = t("host.late_now", {who: playerName(v, late.winner)});
  $("late-hand-label").textContent = t("host.hand_over", {name: late.name});
  $("late-hand-key").textContent = hand.key || "h";
  $("late-hand").onclick = () => fire({type: "hand_over", player: late.player});
}

// The lamp: a big coloured sign with an icon and a word (readable without colour).
function renderLamp(v, data) {
  const lamp = $("lamp");
  let mode = "off";
  if (v.lamp) mode = "on";
  else if (v.answering != null) mode = "answering";
  lamp.dataset.lamp = mode;
  $("lamp-icon").textContent = mode === "on" ? "●" : mode === "answering" ? "◆" : "○";
  $("lamp-word").textContent = mode === "on" ? t("lamp.on") : mode === "answering"
    ? t("host.answering", {who: playerName(v, v.answering)}) : t("lamp.off");
  lamp.hidden = data.game == null || gameOver(data);
}

// A countdown in big seconds beside the lamp (the bar under the actions empties with it).
function runClock(timers) {
  const clock = $("clock");
  clearInterval(clock._tick);
  const entry = timers && Object.values(timers)[0];
  clock.hidden = !entry;
  if (!entry) return;
  const until = performance.now() + entry.ms;
  const tick = () => {
    const left = Math.max(0, until - performance.now());
    clock.textContent = t("host.seconds", {n: Math.ceil(left / 1000)});
    clock.classList.toggle("low", left < 3000);
    if (left <= 0) clearInterval(clock._tick);
  };
  tick();
  clock._tick = setInterval(tick, 200);
}

const QUESTION_PHASES = ["open", "answering", "closed", "reading", "buttons", "after_wrong",
  "cat_give", "cat_price", "auction", "bets", "writing", "ready"];

function renderQuestion(v, data) {
  const q = v.question || {};
  const card = $("question");
  card.hidden = data.game == null || gameOver(data) || !QUESTION_PHASES.includes(v.phase);
  const head = [themeName(v), v.kind === "final" ? null : v.value].filter((x) => x !== "" && x != null).join(" — ");
  const kind = v.kind && v.kind !== "normal" ? " · " + t("kind." + v.kind) : "";
  $("q-head").textContent = head + kind;
  // A sport red theme: its questions are worth double, said in words beside the theme.
  if (!v.tv && v.theme && v.theme.red) $("q-head").append(el("span", {class: "red-mark", id: "red-mark", text: t("host.red_theme")}));
  $("q-text").textContent = v.text || "";
  const accepted = acceptedAnswers(v);
  $("q-answer-text").textContent = accepted[0] || v.answerText || "";
  $("q-answer").hidden = !v.answerText && !accepted.length;
  const also = $("q-also");
  also.replaceChildren(...accepted.slice(1).map((x) => el("li", {text: x})));
  $("q-also-box").hidden = accepted.length < 2;
  const extra = [v.comment, (v.wrongAnswers || []).length ? t("host.not_accepted") + ": " + v.wrongAnswers.join(", ") : ""];
  $("q-comment").textContent = extra.filter(Boolean).join(" · ");
  const details = $("q-details");
  details.replaceChildren();
  if (q.auction) details.append(auctionView(v, q.auction, data.actions));
  if (q.written) details.append(writtenView(v, q.written));
  if (v.final && v.phase === "final_remove") details.append(finalThemes(v));
  if (v.final && ["final_remove", "final_order"].includes(v.phase)) card.hidden = false;
  if (v.phase === "cat_give" && q.opener != null) {
    details.append(el("p", {class: "note", text: t("host.cat_from", {who: playerName(v, q.opener)})}));
  }
}

// The right answer first, then each accepted alternative on its own line: the TV view
// lists them; the sport question carries them in one text, as the package joined them
// («; », appliance/rules/battle/setup.py).
function acceptedAnswers(v) {
  const q = v.question || {};
  let list;
  if (v.tv) list = [...((q.answer && q.answer.right) || [])];
  else list = String(q.answer || "").split(/\s*;\s*/);
  list = list.map((x) => x.trim()).filter(Boolean);
  const text = v.tv && q.answer && q.answer.text ? q.answer.text.trim() : "";
  if (text && !list.includes(text)) list.push(text);
  return list;
}

// The auction as the host runs it: the bid, whose word it is, the words so far (the box's
// automatic bid and passes explained), the order of the word (the rule's or the host's)
// and, when the only moves left are all-in or pass, why there is no bid field.
function auctionView(v, a, actions) {
  const box = el("div", {class: "auction"});
  box.append(el("div", {text: t("auction.bid") + ": " + (a.bid != null ? num(a.bid) : "—") + (a.leader != null ? " · " + playerName(v, a.leader) : "") + (a.all_in ? " · " + t("auction.all_in") : "")}));
  if (a.turn != null) box.append(el("div", {class: "turn", text: t("auction.turn") + ": " + playerName(v, a.turn)}));
  const lines = bidLines(v, a, 8, true);
  if (lines.length) box.append(el("ol", {class: "bids"}, lines.map((x) => el("li", {text: x}))));
  if (a.turn == null) return box;
  const types = new Set((actions || []).map((x) => x.type));
  const who = playerName(v, a.turn);
  if (a.leader == null && a.turn === a.opener) box.append(el("p", {class: "note", text: t("auction.opener_first", {who})}));
  if (!types.has("bid") && types.has("all_in")) {
    const p = players(v)[a.turn];
    box.append(el("p", {class: "note", id: "auction-why", text: t("auction.only_all_in",
      {who, score: num(p ? p.score : 0), bid: num(a.bid || a.value), step: num(a.step || 100)})}));
  }
  const order = (a.order || []).length ? a.order.map((p) => playerName(v, p)).join(" → ") : "";
  box.append(el("p", {class: "note", id: "auction-order", text: order ? t("auction.order_host", {order}) : t("auction.order_rule")}));
  return box;
}

// The bidding order the host set shows as the pressed choice.
function markOrder(v) {
  const a = v.question && v.question.auction;
  const chosen = a && (a.order || []).length ? JSON.stringify(a.order) : null;
  document.querySelectorAll(".action-group[data-action=bid_order] button.choice").forEach((b) => {
    b.setAttribute("aria-pressed", String(b.dataset.value === chosen));
  });
}

function writtenView(v, w) {
  const table = el("table", {class: "race written"});
  table.append(el("tr", {}, el("th", {scope: "col", text: t("stats.player")}),
    el("th", {scope: "col", text: w.needs_bets ? t("arg.bet") : ""}),
    el("th", {scope: "col", text: t("arg.answer")}), el("th", {scope: "col", text: t("arg.verdict")})));
  for (const r of w.rows) {
    table.append(el("tr", {class: r.verdict || ""},
      el("td", {text: playerName(v, r.player)}),
      el("td", {text: w.needs_bets ? (r.bet != null ? num(r.bet) : (r.has_bet ? "✓" : "…")) : ""}),
      el("td", {text: r.answer != null ? r.answer : (r.has_answer ? "✓" : "…")}),
      el("td", {text: r.verdict ? t("verdict." + r.verdict) : ""})));
  }
  return table;
}

function finalThemes(v) {
  const list = el("ul", {class: "final-themes"});
  for (const th of v.final.themes) {
    list.append(el("li", {class: th.removed_by != null ? "removed" : ""}, th.name,
      th.removed_by != null ? " — " + playerName(v, th.removed_by) : ""));
  }
  return list;
}

// The answering player's name, large, beside the verdict; the queue in order below it.
function renderAnswerer(v) {
  const box = $("answerer-box");
  box.hidden = v.answering == null;
  if (box.hidden) return;
  $("answerer-name").textContent = playerName(v, v.answering);
  // The answer's countdown ran out: the rules leave the verdict to the host, who is told.
  $("answerer-time").hidden = !(v.question && v.question.time_up);
  const list = $("queue");
  list.replaceChildren();
  const order = [v.answering, ...(v.queue || [])];
  list.hidden = order.length < 2;
  order.forEach((seat, i) => list.append(el("li", {class: i === 0 ? "current" : "", dataset: {seat},
    "aria-current": i === 0 ? "true" : null, text: playerName(v, seat)})));
}

// The TV board to choose from: the chooser names theme and value, the host taps the cell.
// Any SIQ board (up to 10 values a theme) keeps each value under its own theme.
function renderBoardPick(v, choose) {
  const box = $("board-pick");
  box.hidden = !choose || !v.board;
  if (box.hidden) { box.replaceChildren(); box._sig = null; return; }
  const sig = JSON.stringify([choose.args.cell, v.board, v.chooser]);
  if (box._sig === sig) return;
  box._sig = sig;
  box.replaceChildren();
  const open = new Set(choose.args.cell.map((c) => c.value));
  box.append(el("h2", {class: "pick-title"}, t("host.choose"),
    v.chooser != null ? el("span", {class: "chooser", text: " · " + t("board.chooses", {who: playerName(v, v.chooser)})}) : null));
  const cols = Math.max(...v.board.themes.map((th) => th.cells.length));
  const kinds = new Set();
  const grid = el("div", {class: "pick-grid", dataset: {primary: "1"}});
  grid.style.setProperty("--cols", cols);
  grid.style.setProperty("--rows", v.board.themes.length);
  for (const th of v.board.themes) {
    grid.append(el("div", {class: "pick-theme", text: th.name}));
    for (let n = 0; n < cols; n++) {
      const c = th.cells[n];
      if (!c) { grid.append(el("div", {class: "pick-gap"})); continue; }
      const id = `${c.theme}:${c.question}`;
      const special = c.kind && c.kind !== "normal";
      // The accessible name holds the visible text (value and mark) and the kind in words.
      const mark = special && open.has(id) ? t("kind.mark." + c.kind) : "";
      const b = el("button", {class: "btn cell" + (special ? " special" : ""), type: "button",
                              dataset: {cell: id}, "aria-label": `${th.name}, ${c.value}` + (mark ? ` ${mark} (${t("kind." + c.kind)})` : special ? ", " + t("kind." + c.kind) : "")},
                   open.has(id) ? String(c.value) : "");
      b.disabled = !open.has(id);
      // The kind in a word on the cell (a tablet cannot hover over an aria-label).
      if (mark) b.append(" ", el("span", {class: "kind-mark", dataset: {kind: c.kind}, text: mark}));
      if (special) kinds.add(c.kind);
      b.addEventListener("click", () => fire({type: "choose", cell: id}));
      grid.append(b);
    }
  }
  box.append(grid);
  box.append(kindLegend(kinds));
}

// What each cell's mark means, for the kinds on this board.
function kindLegend(kinds) {
  const list = el("p", {class: "kind-legend", id: "kind-legend"});
  list.hidden = !kinds.size;
  if (kinds.size) list.append(el("span", {text: t("host.legend") + " "}));
  for (const k of kinds) {
    list.append(el("span", {class: "legend-item"}, el("span", {class: "kind-mark", dataset: {kind: k}, text: t("kind.mark." + k)}),
      " — " + t("kind." + k)));
  }
  return list;
}

// The chooser picked a question on the phone: the host confirms it with one tap (Enter) or
// turns it down; any other cell may still be tapped.
function renderProposal(v, choose, data) {
  const box = $("proposal");
  const p = data.ui && data.ui.proposal;
  const c = p && choose ? (choose.args.cell || []).find((x) => x.value === p.cell) : null;
  box.hidden = !c;
  if (!c) return;
  $("proposal-text").textContent = t("host.proposal", {who: playerName(v, p.seat), what: choiceLabel(c)});
  $("proposal-ok").onclick = () => fire({type: "choose", cell: c.value});
  $("proposal-no").onclick = () => send(socket, "ui", {proposal: false}, toast);
  keymap.enter = $("proposal-ok");
}

// The presses grouped by the signal they belong to, each timed from its own signal: after a
// re-signal («Снова сигнал») the first signal's presses and the second's are captioned apart,
// as the board does, and a press made while the lamp was off counts as a false start before
// the next signal (a minus time), not as a late press after the previous one.
function raceGroups(v) {
  const race = v.race || [];
  const lamps = (v.tv && v.question && v.question.race && v.question.race.lamps) || null;
  const groups = new Map();
  const put = (n, r, ms) => {
    if (!groups.has(n)) groups.set(n, []);
    groups.get(n).push({...r, ms});
  };
  for (const r of race) {
    if (lamps && lamps.length && r.lamp != null) {
      const early = ["false_start", "early"].includes(r.status);
      if (early) put(r.lamp + 1, r, r.lamp < lamps.length ? (r.t_ns - lamps[r.lamp]) / 1e6 : null);
      else put(Math.max(r.lamp, 1), r, r.ms_after_lamp);
    } else {
      // Without the signals' ticks (sport): the signal is the press's tick less its offset.
      const lamp = r.ms_after_lamp == null ? null : Math.round(r.t_ns / 1e6 - r.ms_after_lamp);
      const key = [...groups.keys()].find((k) => lamp != null && k !== "none" && Math.abs(k - lamp) < 1);
      put(key ?? (lamp == null ? "none" : lamp), r, r.ms_after_lamp);
    }
  }
  const keys = [...groups.keys()].sort((a, b) => (a === "none" ? -1 : b === "none" ? 1 : a - b));
  return keys.map((k) => groups.get(k));
}

function renderRace(v) {
  const race = v.race || [];
  $("race-card").hidden = race.length === 0;
  const table = $("race");
  table.replaceChildren();
  // A player who false-started and now answers has served the block: the mark goes.
  const shown = (r) => !(r.player === v.answering && ["false_start", "blocked"].includes(r.status));
  const groups = raceGroups(v).map((g) => g.filter(shown)).filter((g) => g.length);
  groups.forEach((g, i) => {
    const body = el("tbody", {dataset: {signal: i + 1}});
    if (groups.length > 1) {
      body.append(el("tr", {class: "signal"}, el("th", {scope: "rowgroup", colspan: 4,
        text: t("board.race_signal", {n: i + 1})})));
    }
    for (const r of g) {
      const msText = r.ms == null ? "—" : (r.ms >= 0 ? "+" : "\u2212") + Math.abs(Math.round(r.ms)) + " " + t("common.ms");
      const current = r.player === v.answering && ["winner", "queued", "candidate"].includes(r.status);
      body.append(el("tr", {class: r.status + (current ? " current" : "")},
        el("td", {text: playerName(v, r.player)}),
        el("td", {class: "num", text: msText}),
        el("td", {text: current ? t("race.answering") : t("race." + r.status)}),
        el("td", {class: "muted", text: r.by && r.by !== "button" ? t("race.by." + r.by) : ""})));
    }
    table.append(body);
  });
}

function renderScores(v) {
  const box = $("scores");
  box.replaceChildren();
  for (const p of players(v)) {
    const cls = ["score-row", p.seat === v.answering ? "answering" : "", p.playing === false ? "out" : "",
      p.seat === v.chooser && v.phase === "choose" ? "chooser" : ""].join(" ");
    box.append(el("div", {class: cls, dataset: {seat: p.seat}},
      el("span", {class: "name", text: p.name}), el("span", {class: "score", text: num(p.score)})));
  }
}

function renderResult(data, v) {
  const box = $("result");
  const over = gameOver(data);
  box.hidden = !over;
  $("stats-card").hidden = !over;
  if (!over) return;
  const r = results(data);
  const names = r.winners.map((s) => playerName(v, s));
  box.replaceChildren(el("div", {class: "label", text: names.length > 1 ? t("host.winners") : t("board.winner")}),
    el("div", {class: "who", text: names.join(", ") || "—"}));
  const list = el("ol", {class: "standings"});
  for (const st of r.standings) list.append(el("li", {}, el("span", {text: `${st.place}. ${st.name}`}), el("span", {class: "score", text: num(st.score)})));
  box.append(list);
  if (r.finalAnswer) box.append(el("p", {class: "final-answer", text: t("board.final_answer") + ": " + r.finalAnswer}));
  // Whether the game is recorded, in words: closed with its result stored, or over with
  // every decision in the log (the last one may still be undone until the next game).
  const battle = tourneyBattle(data);
  const won = !!(data.summary && data.summary.winner != null) || !!(v.winner != null);
  const recorded = battle
    ? (data.finished ? t(won ? "host.battle_recorded" : "host.battle_stopped", {n: battle.number})
      : t("host.battle_over", {n: battle.number}))
    : data.finished ? t("host.recorded", {n: data.game}) : t("host.recorded_open", {n: data.game});
  box.append(el("p", {class: "recorded", id: "recorded", role: "status", text: recorded}));
  const stats = statsView(data);
  $("stats").replaceChildren(stats);
  $("stats").hidden = !stats.childElementCount;
  $("protocol-link").href = "/protocol/" + data.game;
}

// The current game as a battle of the tournament (its place comes with the frame), or null.
function tourneyBattle(data) {
  const tb = data.tourney;
  return tb && tb.battle && data.rules === "battle" ? tb : null;
}

// «1/27 финала · Бой 12» beside the phase during a tournament's battle.
function renderTourneyCaption(data) {
  const tb = tourneyBattle(data);
  const box = $("tourney-caption");
  box.textContent = tb ? t("tournament.stage_battle", {stage: label(tb.stage_label), n: tb.number}) : "";
  box.hidden = !tb;
}

// The battle's game is ended (its result goes to the tournament), then the director's page,
// where the next battle is started.
async function nextBattle(data) {
  if (!data.finished) {
    const res = await fire({type: "end_game"});
    if (!res.ok) return;
  }
  location.href = "/admin/tournament/";
}

// ---- corrections: readable buttons, each a dialog with the current value ----------------
const FIX_LABEL = {undo: "fix.undo", set_score: "fix.set_score", rejudge: "fix.rejudge",
  set_chooser: "fix.set_chooser", reopen: "fix.reopen", end_round: "fix.end_round", skip: "fix.skip",
  finish: "fix.finish", end_game: "fix.end_game", remove_question: "fix.remove_question",
  replace_question: "fix.replace_question"};

function fixTitle(a) { return FIX_LABEL[a.type] ? t(FIX_LABEL[a.type]) : label(a); }

// Grouped by what they touch: the question in play, the scores and turns, the whole game
// (the destructive ones, apart, styled as such, confirmed with a «Да, …» button); each with
// a line saying what it does, since a tablet has no hover.
const FIX_GROUPS = [
  ["score", ["undo", "set_score", "rejudge", "set_chooser"]],
  ["question", ["skip", "remove_question", "replace_question", "reopen"]],
  ["game", ["end_round", "finish", "end_game"]],
];
const DESTRUCTIVE = ["remove_question", "replace_question", "end_round", "finish", "end_game"];

function renderCorrections(v, rare) {
  const box = $("corrections");
  $("corrections-card").hidden = rare.length === 0;
  const sig = JSON.stringify(rare);
  if (box._sig === sig) return box._keys;
  box._sig = sig;
  box._keys = {};
  box.replaceChildren();
  const byType = new Map(rare.map((a) => [a.type, a]));
  const grouped = new Set(FIX_GROUPS.flatMap(([, types]) => types));
  const groups = FIX_GROUPS.map(([name, types]) => [name, types.filter((x) => byType.has(x)).map((x) => byType.get(x))])
    .concat([["other", rare.filter((a) => !grouped.has(a.type))]]);
  for (const [name, acts] of groups) {
    if (!acts.length) continue;
    const section = el("section", {class: "fix-group " + name, dataset: {group: name}},
      name === "other" ? null : el("h3", {text: t("fix.group." + name)}));
    for (const a of acts) {
      const b = el("button", {class: "btn fix" + (DESTRUCTIVE.includes(a.type) ? " danger" : ""), type: "button",
        dataset: {fix: a.type}}, el("span", {class: "fix-name", text: fixTitle(a)}));
      if (a.key) b.append(el("kbd", {text: a.key}));
      const key = "fix.line." + a.type;
      const line = t(key) !== key ? t(key) : "";
      if (line) b.append(el("span", {class: "fix-line", text: line}));
      b.addEventListener("click", () => openFix(a));
      section.append(b);
      if (a.key) box._keys[a.key] = b;
    }
    box.append(section);
  }
  return box._keys;
}

function currentOf(a, v, picked) {
  if (a.type === "set_score") {
    if (picked.player == null) return t("fix.scores_now", {scores: players(v).map((p) => `${p.name} ${num(p.score)}`).join(", ")});
    return t("fix.score_now", {who: playerName(v, picked.player), score: num(players(v)[picked.player].score)});
  }
  if (a.type === "set_chooser") return v.chooser != null ? t("fix.chooser_now", {who: playerName(v, v.chooser)}) : "";
  if (a.type === "undo") return v.undo_to ? t("fix.undo_what") : t("fix.undo_help");
  if (a.type === "end_game") return t("fix.end_game_help");
  if (a.type === "finish") return t("fix.finish_help");
  if (a.type === "end_round") return t("fix.end_round_help");
  if (a.type === "skip") return t("fix.skip_help");
  if (a.type === "reopen") return t("fix.reopen_help");
  if (a.type === "rejudge") return t("fix.rejudge_help");
  if (a.type === "remove_question") return [flawedName(v).replace(t("fix.replaces_word"), t("fix.removes_word")), t("fix.remove_question_help")].filter(Boolean).join(" ");
  if (a.type === "replace_question") return [flawedName(v), t("fix.replace_question_help")].filter(Boolean).join(" ");
  return "";
}

// The question a removal or a replacement acts on: the one in play, or the one just closed.
function flawedName(v) {
  const q = v.phase === "choose" ? v.last : v.question;
  if (!q || !q.theme) return "";
  const kind = q.kind && q.kind !== "normal" ? ` (${t("kind." + q.kind)})` : "";
  return t("fix.replaces", {what: `«${q.theme}», ${num(q.value)}${kind}`});
}

function changeOf(a, v, picked, choices) {
  const name = (arg) => {
    const c = (choices[arg] || []).find((x) => JSON.stringify(x.value) === JSON.stringify(picked[arg]));
    return c ? choiceLabel(c) : picked[arg];
  };
  if (a.type === "set_score" && picked.player != null && picked.score != null && !Number.isNaN(picked.score)) {
    return t("fix.score_change", {who: playerName(v, picked.player), from: num(players(v)[picked.player].score), to: num(picked.score)});
  }
  if (a.type === "set_chooser" && picked.player != null) return t("fix.chooser_change", {who: name("player")});
  if (a.type === "rejudge" && picked.ref != null && picked.verdict != null) {
    return [t("fix.rejudge_change", {what: name("ref"), verdict: name("verdict")}), ...rejudgeLines(v, picked)].join("\n");
  }
  if (a.type === "reopen" && picked.cell != null) return t("fix.reopen_change", {what: name("cell")});
  if (a.type === "replace_question" && picked.cell != null) return t("fix.replace_change", {what: name("cell")});
  const missing = Object.keys(a.args || {}).some((k) => picked[k] == null);
  return missing ? "" : t("host.confirm", {what: fixTitle(a)});
}

// What an undo takes back, from where the engine says it returns (`undo_to`): the verdicts
// given since, each score that changes back, the phase and question it returns to.
function judgementText(v, j) {
  const pts = j.points ?? j.delta;
  return `${playerName(v, j.player)} — ${t("verdict." + j.verdict)}` + (pts != null ? ` (${signed(pts)})` : "");
}

function undoLines(v) {
  const to = v.undo_to;
  if (!to) return [];
  const lines = [];
  const js = v.judgements || [];
  const total = v.judgements_total ?? js.length;
  const gone = Math.min(js.length, Math.max(0, total - to.judgements));
  for (const j of js.slice(js.length - gone)) lines.push(t("fix.undo_verdict", {what: judgementText(v, j)}));
  players(v).forEach((p, i) => {
    if (to.scores[i] != null && to.scores[i] !== p.score) {
      lines.push(t("fix.score_change", {who: p.name, from: num(p.score), to: num(to.scores[i])}));
    }
  });
  const key = "phase." + to.phase;
  const phase = t(key) !== key ? t(key) : to.phase;
  const q = to.question;
  lines.push(q && q.theme ? t("fix.undo_back_question", {phase, theme: q.theme, value: q.value ?? ""})
    : t("fix.undo_back", {phase}));
  return lines;
}

// A judgement to change, as the host reads it: the engine's own label for the latest ones;
// older ones come a page at a time from the host's history of the view.
function refLabel(v, j) {
  // One format for both engines: number, theme and value, who and the verdict with its points
  // (a real minus sign); the sport engine's label already names its question.
  const pts = j.points ?? j.delta;
  if (j.label_ru && S.lang === "ru") return j.label_ru + (pts ? ` (${signed(pts)})` : "");
  const where = j.theme ? `${j.theme}, ${j.value ?? ""}: ` : "";
  return `${j.ref + 1}. ${where}${judgementText(v, j)}`;
}

// The judgement a ref names, from the view (the latest) or the dialog's fetched history.
function judgementOf(v, ref) {
  return (v.judgements || []).concat(openFix.older || []).find((j) => j.ref === ref) || null;
}

// What a changed verdict does to the score, where the engine's figures tell it (TV: a right
// answer earns the value, a wrong one loses it, no answer changes nothing).
function rejudgeLines(v, picked) {
  const j = judgementOf(v, picked.ref);
  if (!j || picked.verdict == null || picked.verdict === j.verdict) return [];
  const lines = [];
  if (v.tv && j.delta != null && j.value != null) {
    const size = Math.abs(j.value);
    const next = picked.verdict === "right" ? size : picked.verdict === "wrong" ? -size : 0;
    const p = players(v)[j.player];
    if (p) lines.push(t("fix.score_change", {who: p.name, from: signed(p.score), to: signed(p.score - j.delta + next)}));
  }
  // Two right answers to one question: the engine allows it, the host is warned.
  if (!v.tv && picked.verdict === "right" && j.label_ru) {
    // The engine's label names the question as «N. theme, value: …» (N is the verdict's).
    const question = (x) => x.split(":")[0].replace(/^\d+\.\s*/, "");
    const other = (v.judgements || []).concat(openFix.older || []).find((o) => o.ref !== j.ref && !o.voided
      && o.verdict === "right" && o.label_ru && question(o.label_ru) === question(j.label_ru));
    if (other) lines.push(t("fix.two_right", {who: playerName(v, other.player)}));
  }
  return lines;
}

function earlierJudgements(v, set, spec, add) {
  const shown = () => Math.min(...spec.map((c) => c.value));
  if (!spec.length || !(shown() > 0)) return;
  const more = el("button", {class: "btn small more", type: "button", id: "fix-earlier"}, t("fix.earlier"));
  more.addEventListener("click", async () => {
    const first = shown();
    const offset = Math.max(0, first - 20);
    const res = await send(socket, "history", {key: "judgements", offset, limit: first - offset}, toast);
    if (!res.ok) return;
    const older = res.items.filter((j) => !j.voided && j.ref < first).reverse();
    openFix.older = (openFix.older || []).concat(older);
    for (const j of older) {
      const c = {value: j.ref, ru: refLabel(v, j), en: refLabel(v, j)};
      spec.unshift(c);
      more.after(add(c));
    }
    if (offset === 0 || !older.length) more.remove();
  });
  set.insertBefore(more, set.querySelector("button"));
}

function openFix(a) {
  const v = norm(state.view);
  const picked = {}, choices = {};
  openFix.older = [];
  const fields = $("fix-fields");
  fields.replaceChildren();
  $("fix-title").textContent = fixTitle(a);
  const undo = a.type === "undo" ? undoLines(v) : [];
  $("fix-undo").hidden = !undo.length;
  $("fix-undo").replaceChildren(...(undo.length ? [el("ul", {}, undo.map((x) => el("li", {text: x})))] : []));
  const refresh = () => {
    $("fix-now").textContent = currentOf(a, v, picked);
    const change = changeOf(a, v, picked, choices);
    $("fix-change").textContent = change;
    $("fix-ok").disabled = !change;
  };
  for (let [name, spec] of Object.entries(a.args || {})) {
    const argLabel = t("arg." + name);
    if (Array.isArray(spec)) {
      spec = [...spec];
      if (a.type === "rejudge" && name === "ref") {
        spec = spec.map((c) => { const j = judgementOf(v, c.value); return j ? {...c, ru: refLabel(v, j), en: refLabel(v, j)} : c; });
      }
      choices[name] = spec;
      const set = el("fieldset", {class: "fix-choices"}, el("legend", {text: argLabel}));
      const add = (c) => {
        const b = el("button", {class: "btn choice" + (c.kind ? " special" : ""), type: "button", "aria-pressed": "false",
          dataset: {value: JSON.stringify(c.value)}}, choiceLabel(c));
        b.addEventListener("click", () => {
          picked[name] = c.value;
          set.querySelectorAll("button.choice").forEach((o) => o.setAttribute("aria-pressed", String(o === b)));
          if (a.type === "set_score" && name === "player") {
            const inp = fields.querySelector("input[name=score]");
            if (inp) { inp.value = players(v)[c.value].score; picked.score = players(v)[c.value].score; }
          }
          refresh();
        });
        return b;
      };
      for (const c of spec) set.append(add(c));
      if (a.type === "rejudge" && name === "ref") earlierJudgements(v, set, spec, add);
      if (spec.length === 1) { picked[name] = spec[0].value; set.querySelector("button.choice").setAttribute("aria-pressed", "true"); }
      fields.append(set);
    } else {
      const id = "fix-" + name;
      const inp = el("input", {id, name, type: spec.type === "int" ? "number" : "text", inputmode: spec.type === "int" ? "numeric" : null,
        min: spec.min, max: spec.max, step: spec.step || (spec.type === "int" ? 1 : null), autocomplete: "off"});
      inp.addEventListener("input", () => { picked[name] = spec.type === "int" ? parseInt(inp.value, 10) : inp.value; refresh(); });
      fields.append(el("label", {for: id, text: argLabel}), inp);
    }
  }
  refresh();
  // A destructive correction says so on its button: «Да, завершить игру».
  const danger = DESTRUCTIVE.includes(a.type);
  $("fix-ok").classList.toggle("danger", danger);
  $("fix-ok").textContent = danger ? t("fix.confirm_danger", {what: fixTitle(a).toLowerCase()}) : t("host.apply");
  const form = $("fix-form");
  form.onsubmit = async (e) => {
    e.preventDefault();
    const res = await fire({type: a.type, ...picked});
    if (res.ok) $("fix-dialog").hidden = true;
  };
  $("fix-dialog").hidden = false;
  ($("fix-fields").querySelector("button, input") || $("fix-ok")).focus();
}
$("fix-cancel").addEventListener("click", () => { $("fix-dialog").hidden = true; });

function renderSim(v, presses, data) {
  const area = $("sim");
  const box = $("sim-buttons");
  box.replaceChildren();
  const a = presses[0];
  area.hidden = !(S.box.simulate && data.game != null && !data.finished);
  const playing = a ? a.args.player.map((c) => c.value) : [];
  players(v).forEach((p) => {
    const b = el("button", {class: "btn", type: "button", dataset: {seat: p.seat}, onclick: () => send(socket, "press", {player: p.seat}, toast)},
      p.name, el("kbd", {text: String(p.seat + 1)}));
    b.classList.toggle("armed", playing.includes(p.seat));  // a press before the lamp is a false start: never disabled
    box.append(b);
  });
}

// ---- keyboard shortcuts for a laptop host -------------------------------------------------
document.addEventListener("keydown", (e) => {
  const target = e.target instanceof Element ? e.target : null;
  if ((target && target.closest("input, select, textarea")) || e.ctrlKey || e.metaKey || e.altKey) return;
  if (!$("fix-dialog").hidden || !$("new-game-dialog").hidden || !$("lang-dialog").hidden) {
    if (e.key === "Escape") {
      $("fix-dialog").hidden = true;
      $("lang-dialog").hidden = true;
      if (state && state.game != null) $("new-game-dialog").hidden = true;
    }
    return;
  }
  const k = e.key === " " ? "space" : e.key === "=" ? "+" : e.key.toLowerCase();
  // With a Russian layout the A key sends «ф»: fall back to the key's place on the keyboard.
  const place = /^Key([A-Z])$/.exec(e.code || "");
  const b = keymap[k] || (place ? keymap[place[1].toLowerCase()] : undefined);
  if (b) { e.preventDefault(); b.click(); return; }
  if (S.box.simulate && /^[1-9]$/.test(e.key)) {
    e.preventDefault();
    send(socket, "press", {player: parseInt(e.key, 10) - 1}, toast);
  }
});

$("race-toggle").addEventListener("click", () => send(socket, "ui", {race_shown: !state.ui.race_shown}, toast));
$("pause-toggle").addEventListener("click", () => send(socket, "ui", {paused: !state.ui.paused}, toast));

// ---- the start screen: the format, a package (the demos first), the names -----------------
function rulesChosen() { return document.querySelector("input[name=rules]:checked").value; }

function openNewGame() {
  const names = (state && state.ui.lobby) || [];
  const current = players((state && state.view) || {}).map((p) => p.name);
  const inputs = document.querySelectorAll("#ng-players input");
  inputs.forEach((inp, i) => { if (!inp.value) inp.value = current[i] || names[i] || ""; });
  if (state && state.rules) document.querySelector(`input[name=rules][value=${state.rules}]`).checked = true;
  syncPackages();
  $("ng-cancel").hidden = !(state && state.game != null);
  disarmStart();
  $("new-game-dialog").hidden = false;
}

// A game still running is ended by a new one: the start screen names it, and «Начать»
// asks once more before ending it.
function runningGame() {
  // A game over by its rules is not "running": the next game stores its result.
  if (!state || state.game == null || state.finished || gameOver(state)) return "";
  const v = state.view || {};
  const who = players(v).map((p) => `${p.name} ${num(p.score)}`).join(", ");
  return [t("rules." + state.rules), v.package ? `«${v.package}»` : "", who].filter(Boolean).join(" · ");
}

function disarmStart() {
  const running = runningGame();
  $("ng-running").hidden = !running;
  $("ng-running").textContent = running ? t("host.running_game", {what: running}) : "";
  $("ng-start").classList.remove("confirming");
  $("ng-start").textContent = t("host.start");
  $("ng-start")._armed = false;
}
function syncPackages() {
  const rules = rulesChosen();
  // As many name fields as the format seats (a battle is of 2–3).
  let most = parseInt(document.querySelector("input[name=rules]:checked").dataset.playersMax, 10) || 99;
  // The chosen rule-set may seat fewer («Как на ТВ»: 3 players).
  const preset = document.querySelector(`[data-rules-box="${CSS.escape(rules)}"] [data-option=preset]`);
  const seats = preset && parseInt(preset.selectedOptions[0]?.dataset.playersMax, 10);
  if (seats) most = Math.min(most, seats);
  for (const inp of document.querySelectorAll("#ng-players input")) {
    const off = parseInt(inp.dataset.seat, 10) >= most;
    inp.hidden = off;
    inp.disabled = off;
  }
  for (const box of document.querySelectorAll("[data-rules-box]")) box.hidden = box.dataset.rulesBox !== rules;
  let first = null;
  for (const o of $("ng-package").options) {
    const ok = !o.dataset.rules || o.dataset.rules === rules;
    o.hidden = !ok;
    o.disabled = !ok;
    if (ok && !first) first = o;
  }
  if ($("ng-package").selectedOptions[0]?.hidden && first) $("ng-package").value = first.value;
}
function newGameOptions(rules) {
  // The options each engine describes (SETUP_SPEC), by name; a blank one keeps the default.
  const options = {};
  const box = document.querySelector(`[data-rules-box="${CSS.escape(rules)}"]`);
  for (const inp of box ? box.querySelectorAll("[data-option]") : []) {
    if (inp.value === "") continue;
    options[inp.dataset.option] = inp.type === "number" ? parseFloat(inp.value) : inp.value;
  }
  return options;
}
document.querySelectorAll("input[name=rules]").forEach((r) => r.addEventListener("change", syncPackages));
document.querySelectorAll("[data-option=preset]").forEach((p) => p.addEventListener("change", syncPackages));
$("new-game").addEventListener("click", openNewGame);
$("ng-cancel").addEventListener("click", () => { $("new-game-dialog").hidden = true; disarmStart(); });
$("new-game-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const start = $("ng-start");
  if (runningGame() && !start._armed) {
    start._armed = true;
    start.classList.add("confirming");
    start.textContent = t("host.start_confirm");
    return;
  }
  const rules = rulesChosen();
  const names = [...document.querySelectorAll("#ng-players input:not([disabled])")].map((i) => i.value.trim()).filter(Boolean);
  const res = await send(socket, "new_game", {rules, package: $("ng-package").value, players: names,
    options: newGameOptions(rules)}, toast);
  if (res.ok) $("new-game-dialog").hidden = true;
  disarmStart();
});

// ---- the box's language from the host page -----------------------------------------------
// The host reads this page in a language of its own (/lang/…): it may make it the box's
// default, confirmed, so the TV and the phones that picked none follow it (settings.json).
for (const id of ["box-lang", "ng-box-lang"]) {
  $(id).addEventListener("click", () => {
    $("lang-dialog").hidden = false;
    $("lang-ok").focus();
  });
}
$("lang-cancel").addEventListener("click", () => { $("lang-dialog").hidden = true; });
$("lang-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  let res = {ok: false};
  try {
    const r = await fetch("/admin/language", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({language: S.lang})});
    res = await r.json();
  } catch (_) { res = {ok: false, refused: {ru: t("common.offline"), en: t("common.offline")}}; }
  $("lang-dialog").hidden = true;
  showToast(toast, res.ok ? t("host.box_lang_done") : label(res.refused));
});

// ---- the package list, pushed by the box after an upload or a delete in admin ---------------
socket.on("packages", (data) => {
  const select = $("ng-package");
  const chosen = select.value;
  select.replaceChildren(...(data.packages || []).map((p) => {
    const prefix = p.demo && !p.name.startsWith(t("start.demo")) ? t("start.demo") + ": " : "";
    return el("option", {value: p.id, dataset: {rules: p.rules || ""}}, prefix + p.name);
  }));
  if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
  syncPackages();
});
