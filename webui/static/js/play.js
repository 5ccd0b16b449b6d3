// A player's phone: seat and name, own score big, a status that follows the game in both
// formats (wait, press, false start, blocked, «Ваш ответ!»), the buzzer where the box
// allows it, the final's bet and answer forms for this seat only (they replace the buzzer),
// and the results at the end.
"use strict";

const $ = (id) => document.getElementById(id);
const toast = $("toast");
const stored = localStorage.getItem("svoyak.seat");
let seat = stored === null ? null : parseInt(stored, 10);
// The game the seat was taken in: the box gives the seat back only in that game (a
// reconnect); at a new game the phone confirms or picks its player again.
let seatGame = parseInt(localStorage.getItem("svoyak.seat_game") || "", 10);
if (Number.isNaN(seatGame)) seatGame = null;
// The name given in the lobby (or of the seat last taken): when the host starts a game with
// it, this phone takes that seat by itself (one choice, not two), also when the next game
// seats the same people in another order. Once a game: not again after «Сменить место».
let myName = localStorage.getItem("svoyak.name") || "";
let last = null;
let sentType = null;
let prevState = null;
const socket = connect(() => ({role: "player", seat, game: seatGame}), render);

// What this seat may do or has just done: from the engine's view, never guessed.
function myState(v, data) {
  if (gameOver(data)) return "over";
  if (outOfFinal(v)) return "out_final";
  if (v.answering === seat) return "answer";
  if (v.answering != null && (v.queue || []).includes(seat)) return "queued";
  const mine = (v.race || []).filter((r) => r.player === seat);
  const lastPress = mine[mine.length - 1];
  const mayPress = v.may_press ?? (!!v.lamp && (v.playing || []).includes(seat) && !(v.answered || []).includes(seat));
  // A false start's block still running: a press now would only restart it.
  const block = data.timers && data.timers.block;
  if (mayPress && block && block.ms > 0 && performance.now() < (render.at || 0) + block.ms) return "blocked";
  if (mayPress) return "press";
  if (v.answering != null) return "other";
  if (lastPress && ["false_start", "blocked"].includes(lastPress.status)) return lastPress.status;
  if ((v.answered || []).includes(seat) && ["buttons", "open", "after_wrong"].includes(v.phase)) return "answered";
  return "wait";
}

// The TV final is played only by those with a score above zero (the view lists them).
function outOfFinal(v) {
  return !!(v.tv && v.stage === "final" && v.final && !(v.final.players || []).includes(seat));
}

// A line under the status that tells this player what concerns them alone: the cat given
// to them (theme and price), or the battle's extra theme they play or wait through.
function myNote(v, data) {
  const q = v.question || {};
  // The moves the rules give this player, made on this phone (the host can still enter them).
  const a = q.auction;
  if (v.tv && v.phase === "auction" && a && a.turn === seat) {
    return a.leader == null ? t("play.auction_open", {value: num(a.value)}) : t("play.auction_yours", {bid: num(a.bid)});
  }
  if (v.tv && v.phase === "cat_give" && q.opener === seat) return t("play.cat_give_yours");
  const p = data && data.ui && data.ui.proposal;
  if (v.tv && v.phase === "choose" && v.chooser === seat) {
    return p && p.seat === seat ? t("play.pick_sent") : t("play.choose_yours");
  }
  if (v.tv && v.kind === "cat" && q.answerer === seat && ["cat_price", "answering"].includes(v.phase)) {
    // The price is this phone's to pick when it holds the choice, else the host's.
    const mine = ((data && data.actions) || []).some((x) => x.type === "cat_price");
    return q.value != null ? t("play.cat_yours", {theme: q.theme || "", value: num(q.value)})
      : t(mine ? "play.cat_yours_pick" : "play.cat_yours_theme", {theme: q.theme || ""});
  }
  if (!v.tv && ((v.theme && v.theme.extra) || v.phase === "tie")) {
    const inIt = v.phase === "tie" ? (v.tied || []) : players(v).filter((p) => p.playing !== false).map((p) => p.seat);
    const names = inIt.map((s) => playerName(v, s)).join(", ");
    return inIt.includes(seat) ? t("play.extra_yours", {names}) : t("play.extra_wait", {names});
  }
  return "";
}

const STATUS = {answer: "play.you_answer", out_final: "play.out_final", queued: "play.queued", press: "lamp.press", false_start: "play.false_start",
  blocked: "play.blocked", answered: "play.answered", other: "play.other_answers", wait: "lamp.wait", over: "play.over"};

// The buzzer says its state in a word and an icon, each state its own colour and border.
const BUZZ = {press: ["●", "play.buzz_press"], wait: ["○", "play.buzz_wait"], false_start: ["✕", "play.buzz_false_start"],
  blocked: ["✕", "play.buzz_blocked"], answer: ["▶", "play.buzz_answer"], other: ["…", "play.buzz_other"],
  // Already answered: a neutral dash (a check mark would read as «верно»).
  answered: ["—", "play.buzz_answered"], queued: ["…", "play.buzz_queued"], over: ["○", "play.buzz_wait"]};

function render(data, again = false) {
  last = data;
  if (!again) {
    render.at = performance.now();
    // The block ends while nothing else changes: look again then.
    clearTimeout(render.blockTimer);
    const block = data.timers && data.timers.block;
    if (block && block.ms > 0) render.blockTimer = setTimeout(() => render(data, true), block.ms + 30);
  }
  const v = norm(data.view || {});
  if (data.seat !== seat) {
    seat = data.seat;
    if (seat == null) localStorage.removeItem("svoyak.seat");  // a seat this game lacks
  }
  const seated = seat != null && data.game != null;
  $("choose").hidden = seated;
  $("me").hidden = !seated;
  $("change-seat").hidden = !seated;
  renderSeats(v, data);
  const st = seated ? myState(v, data) : "wait";
  const status = $("my-status");
  const forms = seated && (data.actions || []).some((a) => a.type !== "press");
  status.hidden = !seated || st === "over" || (forms && st === "wait");
  status.dataset.state = st;
  const place = (v.queue || []).indexOf(seat) + 1;
  status.textContent = st === "other" ? t("play.other_answers", {who: playerName(v, v.answering)})
    : st === "queued" ? t("play.queued", {n: place}) : t(STATUS[st]);
  const note = seated && st !== "over" ? myNote(v, data) : "";
  $("my-note").textContent = note;
  $("my-note").hidden = !note;
  if (seated) {
    $("my-seat").textContent = v.name || playerName(v, seat);
    $("my-score").textContent = num(v.score ?? (players(v)[seat] || {}).score ?? "");
    if (st === "answer" && prevState !== "answer" && navigator.vibrate) navigator.vibrate([60, 40, 60]);
  }
  prevState = st;
  const acts = seated ? (data.actions || []).filter((a) => a.type !== "press") : [];
  $("my-actions").hidden = acts.length === 0;
  renderActions($("actions"), acts, sendMine, {sendLabel: t("play.send")});
  betRange(acts);
  renderSent(v, acts);
  const buzz = $("buzzer");
  // During the final and after the game the forms and the results take the buzzer's place.
  buzz.hidden = !(seated && data.box.phone_buzzer && !gameOver(data) && acts.length === 0 && st !== "out_final");
  $("buzzer-note").hidden = buzz.hidden;
  buzz.classList.toggle("armed", st === "press");
  buzz.dataset.state = st;
  const [icon, word] = BUZZ[st] || BUZZ.wait;
  $("buzzer-icon").textContent = icon;
  $("buzzer-word").textContent = t(word, {who: v.answering != null ? playerName(v, v.answering) : "", n: place});
  renderResult(v, data, seated);
  const box = $("scores");
  box.replaceChildren();
  for (const p of players(v)) {
    box.append(el("div", {class: "score-row" + (p.seat === seat ? " mine" : "") + (p.seat === v.answering ? " answering" : "")},
      el("span", {class: "name", text: p.name}), el("span", {class: "score", text: num(p.score)})));
  }
}

// The final's bet: the allowed range under the field, «Отправить» the primary action, and a
// bet out of range refused by the box's own words (not the browser's, in its own language).
function betRange(acts) {
  const a = acts.find((x) => x.type === "bet");
  const form = document.querySelector("#actions [data-action=bet] form");
  if (!a || !form || form.dataset.ranged) return;
  const spec = (a.args || {}).amount || {};
  const input = form.querySelector("[name=amount]");
  if (!input || spec.min == null || spec.max == null) return;
  form.dataset.ranged = "1";
  form.noValidate = true;
  const range = el("p", {class: "bet-range", id: "bet-range", text: t("play.bet_range", {min: num(spec.min), max: num(spec.max)})});
  const error = el("p", {class: "bet-error", id: "bet-error", role: "alert", hidden: true});
  input.setAttribute("aria-describedby", "bet-range bet-error");
  input.closest("label").after(range, error);
  const submit = form.querySelector("button[type=submit]");
  if (submit) submit.classList.add("primary");
  // Capture: before the form's own handler sends the bet.
  form.addEventListener("submit", (ev) => {
    const x = Number(input.value);
    const ok = input.value.trim() !== "" && Number.isInteger(x) && x >= spec.min && x <= spec.max;
    error.hidden = ok;
    error.textContent = ok ? "" : t("play.bet_out_of_range", {min: num(spec.min), max: num(spec.max)});
    input.setAttribute("aria-invalid", ok ? "false" : "true");
    if (!ok) { ev.preventDefault(); ev.stopImmediatePropagation(); input.focus(); }
  }, {capture: true});
}

// The confirmation belongs to its form: what the engine holds for this seat (after a
// reload too), else the last form this phone sent, while that form is still shown.
function renderSent(v, acts) {
  const node = $("sent");
  const q = v.question || {};
  const row = q.written ? q.written.rows.find((r) => r.player === seat) : null;
  let text = "";
  const showing = (type) => acts.some((a) => a.type === type);
  if (row && showing("write") && row.has_answer) text = t("play.answer_taken") + (row.answer != null ? ": " + row.answer : "");
  else if (row && showing("bet") && row.has_bet) text = t("play.bet_taken") + (row.bet != null ? ": " + num(row.bet) : "");
  else if (sentType && showing(sentType)) text = t("play.sent");
  node.textContent = text;
  node.hidden = !text;
}

function renderResult(v, data, seated) {
  const box = $("my-result");
  box.hidden = !(seated && gameOver(data));
  if (box.hidden) return;
  const r = results(data);
  const mine = r.standings.find((s) => s.seat === seat);
  const won = r.winners.includes(seat);
  const names = r.winners.map((s) => playerName(v, s)).join(", ");
  $("my-place").textContent = won ? t("play.you_won") : [mine ? t("play.your_place", {n: mine.place}) : "",
    names ? t("play.winner_is", {names}) : ""].filter(Boolean).join(" · ");
  const stats = r.stats.find((s) => s.seat === seat);
  const list = el("dl", {class: "my-stats"});
  if (stats) {
    for (const [k, key] of [["right", "stats.right"], ["wrong", "stats.wrong"], ["no_answer", "stats.no_answer"],
      ["false_starts", "stats.false_starts"]]) {
      if (stats[k] != null) list.append(el("dt", {text: t(key)}), el("dd", {text: String(stats[k])}));
    }
    list.append(el("dt", {text: t("stats.mean")}), el("dd", {text: ms(stats.mean)}),
      el("dt", {text: t("stats.best")}), el("dd", {text: ms(stats.best)}));
  }
  if (r.finalAnswer) list.append(el("dt", {text: t("board.final_answer")}), el("dd", {text: r.finalAnswer}));
  $("my-stats").replaceChildren(list);
}

async function sendMine(cmd) {
  const res = await send(socket, "player_command", cmd, toast);
  if (res.ok) { sentType = cmd.type; if (last) render(last); }
}

const sameName = (a, b) => a.split(/\s+/).join(" ").toLowerCase() === b.split(/\s+/).join(" ").toLowerCase();

// Before a game: the name for the host (the lobby). In a game: one button per seat with its
// player's name; the seat of the name given in the lobby is taken without asking.
function renderSeats(v, data) {
  const box = $("seats");
  const ps = players(v);
  const lobby = !(data.game != null && ps.length > 0);
  $("lobby-form").hidden = !lobby;
  $("choose-title").textContent = lobby ? t("play.lobby_title") : t("play.choose_seat");
  const sig = JSON.stringify([lobby, ps.map((p) => p.name), myName]);
  if (box._sig !== sig) {
    box._sig = sig;
    box.replaceChildren();
    if (!lobby) {
      for (const p of ps) {
        box.append(el("button", {class: "btn seat" + (myName && sameName(p.name, myName) ? " mine" : ""), type: "button",
          dataset: {seat: p.seat}, onclick: () => takeSeat(p.seat)},
          el("span", {class: "seat-name", text: p.name}), el("span", {class: "seat-n", text: t("play.seat_n", {n: p.seat + 1})})));
      }
    }
  }
  // A new game: the phone asks. The player of the name this phone had is offered first
  // («Это вы?»), one tap; any other seat may be picked. Never taken without a tap.
  const match = !lobby && myName ? ps.filter((p) => sameName(p.name || "", myName)) : [];
  $("confirm-me").hidden = !(match.length === 1 && seat == null);
  if (match.length === 1) {
    $("confirm-me-btn").textContent = t("play.confirm_me", {name: match[0].name});
    $("confirm-me-btn").onclick = () => takeSeat(match[0].seat);
  }
}

async function takeSeat(s) {
  const res = await send(socket, "seat", {seat: s}, toast);
  if (res.ok) {
    seat = s;
    seatGame = last ? last.game : null;
    localStorage.setItem("svoyak.seat", String(s));
    if (seatGame != null) localStorage.setItem("svoyak.seat_game", String(seatGame));
    const p = last && players(last.view || {})[s];
    if (p && p.name) { myName = p.name; localStorage.setItem("svoyak.name", p.name); }
  }
}

$("change-seat").addEventListener("click", () => {
  seat = null;
  localStorage.removeItem("svoyak.seat");
  send(socket, "seat", {seat: null}, toast);
});

$("lobby-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const name = $("my-name").value.trim();
  if (!name) return;
  const res = await send(socket, "seat", {seat: null, name}, toast);
  if (res.ok) {
    myName = name;
    localStorage.setItem("svoyak.name", name);
    $("lobby-sent").textContent = t("play.joined_as", {name});
  }
  $("lobby-sent").hidden = !res.ok;
});
if (myName) $("my-name").value = myName;

$("buzzer").addEventListener("pointerdown", (e) => {
  e.preventDefault();
  if (navigator.vibrate) navigator.vibrate(40);
  send(socket, "press", {}, toast);
});
