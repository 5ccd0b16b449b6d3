// The host's tablet: the question with its answer, exactly the engine's legal actions as big
// buttons (with keyboard shortcuts), the scoreboard, the race, and the simulator's buttons.
"use strict";

const $ = (id) => document.getElementById(id);
const toast = $("toast");
let keymap = {};
let state = null;
const socket = connect({role: "host"}, render);

function fire(cmd) { return send(socket, "command", cmd, toast); }

// Corrections and rare moves go one level down and ask for confirmation.
const RARE = ["undo", "set_score", "rejudge", "set_chooser", "reopen", "end_round", "skip",
  "finish", "end_game"];

function split(actions) {
  const main = [], rare = [], presses = [];
  for (const a of actions || []) {
    if (a.by !== "host" && a.type === "press") presses.push(a);
    else if (a.confirm || RARE.includes(a.type)) rare.push({...a, confirm: true});
    else main.push(a);
  }
  return {main, rare, presses};
}

function themeName(v) {
  if (!v) return "";
  if (typeof v.theme === "string") return v.theme;
  return (v.theme && v.theme.name) || "";
}

function render(data) {
  state = data;
  const v = norm(data.view);
  $("where").textContent = data.game == null ? t("host.no_game")
    : [t("rules." + data.rules), themeName(v), v.value].filter((x) => x !== "" && x != null).join(" · ");
  $("phase").textContent = data.finished ? t("host.finished")
    : (S.lang === "ru" && v.phase_ru) || (v.phase ? t("phase." + v.phase) : "");
  const lamp = $("lamp");
  lamp.classList.toggle("on", !!v.lamp);
  lamp.textContent = v.lamp ? t("lamp.on") : t("lamp.off");
  $("short-word").hidden = !(v.short_word && ["open", "answering"].includes(v.phase));
  const hw = (data.hardware && data.hardware.warnings) || [];
  const stuck = ((data.hardware && data.hardware.seats) || []).filter((s) => s.stuck).map((s) => playerName(v, s.seat));
  const fault = data.hardware && data.hardware.fault;
  const warn = (fault ? [t("host.hw_fault." + fault.kind, fault)] : []).concat(hw,
    stuck.length ? [t("host.stuck", {who: stuck.join(", ")})] : []);
  $("hw-warnings").hidden = warn.length === 0 || (data.hardware && data.hardware.simulated && stuck.length === 0);
  $("hw-warnings").textContent = warn.join(" · ");

  renderQuestion(v, data);
  renderRace(v);
  renderScores(v);
  renderTimer(data);
  renderResult(data);

  const {main, rare, presses} = split((data.actions || []).filter((a) => a.type !== "choose" || !v.board));
  renderBoardPick(v, data.actions || []);
  keymap = {...renderActions($("actions"), main, fire), ...renderActions($("rare"), rare, fire)};
  $("more").hidden = rare.length === 0;
  renderSim(v, presses, data);
  $("race-toggle").classList.toggle("primary", !!data.ui.race_shown);
  $("pause-toggle").classList.toggle("primary", !!data.ui.paused);
  $("race-toggle").textContent = data.ui.race_shown ? t("host.hide_race") : t("host.show_race");
  $("pause-toggle").textContent = data.ui.paused ? t("host.resume") : t("host.pause");
  $("ng-lobby").textContent = data.ui.lobby.length ? t("host.lobby", {names: data.ui.lobby.join(", ")}) : "";
  if (data.game == null && $("new-game-dialog").hidden && !window._askedNewGame) {
    window._askedNewGame = true;
    openNewGame();
  }
}

const QUESTION_PHASES = ["open", "answering", "closed", "reading", "buttons", "after_wrong",
  "cat_give", "cat_price", "auction", "bets", "writing"];

function renderQuestion(v, data) {
  const q = v.question || {};
  const card = $("question");
  card.hidden = data.game == null || !(QUESTION_PHASES.includes(v.phase) || v.phase === "ready");
  const head = [themeName(v), v.value].filter((x) => x !== "" && x != null).join(" — ");
  const kind = v.kind && v.kind !== "normal" ? " · " + t("kind." + v.kind) : "";
  $("q-head").textContent = head + kind;
  $("q-text").textContent = v.text || "";
  $("q-answer").textContent = v.answerText || "";
  $("q-answer").hidden = !v.answerText;
  const extra = [v.comment, (v.wrongAnswers || []).length ? t("host.not_accepted") + ": " + v.wrongAnswers.join(", ") : ""];
  $("q-comment").textContent = extra.filter(Boolean).join(" · ");
  const details = $("q-details");
  details.replaceChildren();
  if (q.auction) details.append(auctionView(v, q.auction));
  if (q.written) details.append(writtenView(v, q.written, true));
  if (v.final && v.phase === "final_remove") details.append(finalThemes(v));
}

function auctionView(v, a) {
  const box = el("div", {class: "auction"});
  box.append(el("div", {text: t("auction.bid") + ": " + (a.bid ?? "—") + (a.leader != null ? " · " + playerName(v, a.leader) : "") + (a.all_in ? " · " + t("auction.all_in") : "")}));
  if (a.turn != null) box.append(el("div", {text: t("auction.turn") + ": " + playerName(v, a.turn)}));
  if (a.passed.length) box.append(el("div", {class: "muted", text: t("auction.passed") + ": " + a.passed.map((p) => playerName(v, p)).join(", ")}));
  return box;
}

function writtenView(v, w, host) {
  const table = el("table", {class: "race written"});
  for (const r of w.rows) {
    table.append(el("tr", {class: r.verdict || ""},
      el("td", {text: playerName(v, r.player)}),
      el("td", {text: w.needs_bets ? (r.bet != null ? t("written.bet") + " " + r.bet : (r.has_bet ? "✓ " + t("written.bet") : "…")) : ""}),
      el("td", {text: r.answer != null ? r.answer : (r.has_answer ? "✓ " + t("written.answer") : "…")}),
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

// The TV board to choose from: the chooser names theme and value, the host taps the cell.
function renderBoardPick(v, actions) {
  const box = $("board-pick");
  const choose = actions.find((a) => a.type === "choose");
  box.hidden = !choose || !v.board;
  box.replaceChildren();
  if (box.hidden) return;
  const open = new Set(choose.args.cell.map((c) => c.value));
  box.append(el("h3", {text: t("host.choose") + (v.chooser != null ? ": " + playerName(v, v.chooser) : "")}));
  const grid = el("div", {class: "pick-grid"});
  for (const th of v.board.themes) {
    const row = el("div", {class: "pick-row"}, el("div", {class: "pick-theme", text: th.name}));
    for (const c of th.cells) {
      const id = `${c.theme}:${c.question}`;
      const b = el("button", {class: "btn cell" + (c.kind && c.kind !== "normal" ? " special" : ""), type: "button",
                              dataset: {cell: id}, title: c.kind && c.kind !== "normal" ? t("kind." + c.kind) : null},
                   open.has(id) ? String(c.value) : "");
      b.disabled = !open.has(id);
      b.addEventListener("click", () => fire({type: "choose", cell: id}));
      row.append(b);
    }
    grid.append(row);
  }
  box.append(grid);
}

function renderRace(v) {
  const race = v.race || [];
  $("race-card").hidden = race.length === 0;
  const table = $("race");
  table.replaceChildren();
  for (const r of race) {
    const ms = r.ms_after_lamp == null ? "—" : (r.ms_after_lamp >= 0 ? "+" : "") + Math.round(r.ms_after_lamp) + " " + t("common.ms");
    table.append(el("tr", {class: r.status},
      el("td", {text: playerName(v, r.player)}),
      el("td", {text: ms}),
      el("td", {text: t("race." + r.status)}),
      el("td", {text: r.by && r.by !== "button" ? t("race.by." + r.by) : ""})));
  }
}

function renderScores(v) {
  const box = $("scores");
  box.replaceChildren();
  for (const p of players(v)) {
    const cls = ["score-row", p.seat === v.answering ? "answering" : "", p.playing === false ? "out" : ""].join(" ");
    box.append(el("div", {class: cls, dataset: {seat: p.seat}},
      el("span", {class: "name", text: p.name}), el("span", {class: "score", text: p.score})));
  }
}

function renderTimer(data) { runTimer($("timer"), data.timers); }

function renderResult(data) {
  const box = $("result");
  const s = data.summary;
  box.hidden = !data.finished || !s;
  if (box.hidden) return;
  box.replaceChildren(el("h3", {text: t("host.result")}));
  for (const st of s.standings || []) {
    box.append(el("div", {class: "score-row"}, el("span", {text: `${st.place}. ${st.name}`}), el("span", {class: "score", text: st.score})));
  }
}

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
    b.classList.toggle("primary", playing.includes(p.seat));  // a press before the lamp is a false start: never disabled
    box.append(b);
  });
}

// ---- keyboard shortcuts for a laptop host -------------------------------------------------
document.addEventListener("keydown", (e) => {
  if (e.target.closest("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key === " " ? "space" : e.key === "=" ? "+" : e.key.toLowerCase();
  const b = keymap[k];
  if (b) { e.preventDefault(); b.click(); return; }
  if (S.box.simulate && /^[1-9]$/.test(e.key)) {
    e.preventDefault();
    send(socket, "press", {player: parseInt(e.key, 10) - 1}, toast);
  }
});

$("race-toggle").addEventListener("click", () => send(socket, "ui", {race_shown: !state.ui.race_shown}, toast));
$("pause-toggle").addEventListener("click", () => send(socket, "ui", {paused: !state.ui.paused}, toast));

// ---- new game -------------------------------------------------------------------------
function openNewGame() {
  const names = (state && state.ui.lobby) || [];
  const current = players((state && state.view) || {}).map((p) => p.name);
  const inputs = document.querySelectorAll("#ng-players input");
  inputs.forEach((inp, i) => { if (!inp.value) inp.value = current[i] || names[i] || ""; });
  if (state && state.rules) $("ng-rules").value = state.rules;
  syncPackages();
  $("new-game-dialog").hidden = false;
}
function syncPackages() {
  const rules = $("ng-rules").value;
  $("ng-stage-box").hidden = rules !== "battle";
  $("ng-battle-timers").hidden = rules !== "battle";
  $("ng-tv-box").hidden = rules !== "tv";
  let first = null;
  for (const o of $("ng-package").options) {
    const ok = !o.dataset.rules || o.dataset.rules === rules;
    o.hidden = !ok;
    if (ok && !first) first = o;
  }
  if ($("ng-package").selectedOptions[0]?.hidden && first) $("ng-package").value = first.value;
}
function newGameOptions(rules) {
  const box = rules === "battle" ? $("ng-battle-timers") : $("ng-tv-box");
  const timers = {};
  for (const inp of box.querySelectorAll("[data-timer]")) if (inp.value) timers[inp.dataset.timer] = parseFloat(inp.value);
  return rules === "battle" ? {stage: $("ng-stage").value, timers} : {preset: $("ng-preset").value, timers};
}
$("ng-rules").addEventListener("change", syncPackages);
$("new-game").addEventListener("click", openNewGame);
$("ng-cancel").addEventListener("click", () => { $("new-game-dialog").hidden = true; });
$("new-game-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const names = [...document.querySelectorAll("#ng-players input")].map((i) => i.value.trim()).filter(Boolean);
  const res = await send(socket, "new_game", {rules: $("ng-rules").value, package: $("ng-package").value, players: names,
    options: newGameOptions($("ng-rules").value)}, toast);
  if (res.ok) $("new-game-dialog").hidden = true;
});
