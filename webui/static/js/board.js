// The TV board: read from 5 m. Shows only the board view (never an answer before it is
// revealed), the lamp as frame + icon + word, the answerer's name, timers, sounds.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null;
const socket = connect({role: "board"}, render);
const MAX_ROWS = 10;  // the SIQ format's most themes a round

function render(data) {
  current = data;
  const v = norm(data.view);
  for (const cue of data.cues || []) Sound.play(cue);
  if (data.box && data.box.sound) { Sound.volume = data.box.sound.volume; Sound.mute = data.box.sound.mute; }

  $("idle").hidden = data.game != null;
  // A first PIN shown to the box's own TV goes as soon as a host has logged in.
  if (data.box && !data.box.pin_on_board && $("idle-pin")) $("idle-pin").remove();
  if (data.box) $("disk-full").hidden = !data.box.disk_full;  // the card's room comes back
  $("paused").hidden = !data.ui.paused;
  // The lamp in words and an icon, not colour alone: on, someone answers (who), or wait.
  // After the end (a battle ended with the lamp on too) there is nothing to press.
  const over = gameOver(data);
  const lampOn = !!v.lamp && !over;
  const lamp = lampOn ? "on" : v.answering != null ? "answering" : "off";
  $("board").classList.toggle("lamp", lampOn);
  $("lamp").classList.toggle("on", lampOn);
  $("lamp").dataset.lamp = lamp;
  $("lamp-icon").textContent = {on: "●", answering: "▶", off: "○"}[lamp];
  $("lamp-word").textContent = lamp === "on" ? t("lamp.press")
    : lamp === "answering" ? t("board.lamp_answers", {who: playerName(v, v.answering)}) : t("lamp.wait");
  $("board").dataset.lamp = lamp === "on" ? "on" : "off";
  $("board").dataset.phase = v.phase || "";
  $("lamp").hidden = over;

  const theme = v.theme && typeof v.theme === "object" ? v.theme.name
    : (v.theme || (v.board && v.phase === "choose" ? v.board.name : "") || (v.final && v.stage === "final" ? v.final.name : ""));
  $("theme").textContent = theme;
  $("value").textContent = v.kind === "final" || v.value == null ? "" : num(v.value);

  renderStory(v, data);
  renderGrid(v);
  renderQuestion(v);
  renderAnswerer(v);
  renderScores(v);
  renderRace(v, data);
  renderWinner(v, data);
  runTimer($("timer"), data.timers);
  windowSeconds(data.timers);
}

// The sport window's seconds beside its bar: read from 5 m, a bar alone is not a number.
let windowTick = null;
function windowSeconds(timers) {
  const box = $("window-s");
  const w = timers && timers.window;
  if (windowTick) { clearInterval(windowTick); windowTick = null; }
  box.hidden = !w;
  if (!w) return;
  const ends = performance.now() + w.ms;
  const show = () => {
    box.textContent = t("board.window_s", {n: Math.max(0, Math.ceil((ends - performance.now()) / 1000))});
  };
  show();
  windowTick = setInterval(show, 200);
}

function cellValues(v, i, t) {
  if (Array.isArray(t.values)) return t.values;
  if (v.theme && v.theme.index === i && Array.isArray(v.theme.values)) return v.theme.values;
  const base = [10, 20, 30, 40, 50];
  return t.red ? base.map((x) => x * 2) : base;
}

// Rows: one per theme, the name then its values; a played cell is blank.
function renderGrid(v) {
  const grid = $("grid");
  grid.replaceChildren();
  const themes = (v.board && v.board.themes) || (v.tv ? [] : v.themes) || [];
  if (!themes.length) { $("board").classList.remove("dense"); return; }
  const cur = v.theme && typeof v.theme === "object" ? v.theme.index : null;
  const tvCell = v.tv && v.question && v.question.cell ? v.question.cell.slice(-2) : null;
  let start = 0;
  if (themes.length > MAX_ROWS && cur != null) start = Math.max(0, Math.min(cur - 1, themes.length - MAX_ROWS));
  const shown = themes.slice(start, start + MAX_ROWS);
  const open = ["open", "answering", "closed"].includes(v.phase);
  const cols = Math.max(...shown.map((th, k) => (th.cells ? th.cells.length : cellValues(v, start + k, th).length)));
  grid.style.setProperty("--rows", shown.length);
  grid.style.setProperty("--cols", cols);
  grid.dataset.rows = shown.length;
  $("board").classList.toggle("dense", shown.length >= 8);
  grid.dataset.cols = cols;
  shown.forEach((t, k) => {
    const i = start + k;
    const values = t.cells ? t.cells.map((c) => c.value) : cellValues(v, i, t);
    const row = el("div", {class: "row" + (t.red ? " red" : "") + (i === cur ? " current-theme" : ""),
                           dataset: {theme: i}});
    row.append(el("div", {class: "tname"}, el("span", {text: t.name})));
    values.forEach((val, n) => {
      let played, isCur = false;
      if (t.cells) {
        played = t.cells[n].played;
        isCur = !!tvCell && tvCell[0] === i && tvCell[1] === n;
      }
      else if (cur == null) played = false;
      else if (i < cur) played = true;
      else if (i > cur) played = false;
      else {
        isCur = n === v.number && open;
        played = n < v.number || (n === v.number && v.phase === "closed");
      }
      const cellVal = val && typeof val === "object" ? val.value : val;
      row.append(el("div", {class: "cell" + (played ? " played" : "") + (isCur ? " current" : "")},
                    el("span", {text: played ? "" : num(cellVal)})));
    });
    for (let n = values.length; n < cols; n++) row.append(el("div", {class: "cell gap"}));
    grid.append(row);
  });
}

// Question text appears when the board view carries it (while it is read and answered: a cat
// and an auction too, once given or won);
// a closed sport question shows its revealed text and answer. TV specials get a banner.
function renderQuestion(v) {
  const box = $("qscreen");
  // Media elements live across updates: a new view must not restart a playing sound.
  mediaCache.clear();
  box.querySelectorAll("[data-hash]").forEach((m) => mediaCache.set(m.dataset.hash, m));
  box.replaceChildren();
  const q = v.question || null;
  let shown = false;
  if (v.tv && q && !["choose", "pick_chooser"].includes(v.phase)) {
    shown = true;
    if (v.kind === "cat" || v.kind === "auction" || v.kind === "no_risk") {
      const k = t("kind." + v.kind);
      box.append(el("div", {class: "kind-banner", text: k.charAt(0).toUpperCase() + k.slice(1)}));
      if (v.kind === "cat" && v.phase === "cat_give") box.append(el("div", {class: "kind-note", text: t("board.cat_give", {who: playerName(v, q.opener)})}));
      if (v.kind === "cat" && v.phase !== "cat_give" && q.answerer != null) {
        box.append(el("div", {class: "kind-note", text: t("board.cat_to", {who: playerName(v, q.answerer)})}));
        box.append(el("div", {class: "kind-note muted", text: [q.theme, q.value != null ? num(q.value) : ""].filter(Boolean).join(" · ")}));
      }
    }
    if (q.auction) box.append(auctionBoard(v, q.auction));
    if (q.written) box.append(writtenBoard(v, q.written));
    if (v.text) box.append(el("div", {class: "text", text: v.text}));
    for (const m of q.media || []) box.append(media(m, (current.media_types || {})[m]));
  } else if (v.tv && v.final && v.phase === "final_remove") {
    shown = true;
    box.append(finalBoard(v));
  } else if (!v.tv) {
    const r = v.phase === "closed" && v.revealed ? v.revealed : null;
    if (r) {
      shown = true;
      if (r.text) box.append(el("div", {class: "text", text: r.text}));
      if (r.answer) box.append(answerBlock(r.answer));
    }
  }
  const last = $("last-answer");
  last.classList.toggle("final", false);
  if (v.tv && v.last && v.phase === "choose" && v.last.answer && answerOf(v.last.answer)) {
    last.replaceChildren(answerBlock(v.last.answer, t("board.last_answer")));
    last.hidden = false;
  } else if (v.tv && v.phase === "shootout_theme" && v.final && v.final.answer) {
    // The final's answer stays on the TV while the host picks the shootout's theme.
    last.replaceChildren(answerBlock(v.final.answer, t("board.final_answer")));
    last.classList.toggle("final", true);
    last.hidden = false;
  } else {
    last.hidden = true;
  }
  box.hidden = !shown;
  $("grid").hidden = shown || !$("grid").childElementCount;  // no board in a shootout
  $("red-legend").hidden = $("grid").hidden || !$("grid").querySelector(".row.red");
  if (shown) fit(box);
}

// A revealed answer: the main one large, the other accepted ones as a list under it
// (the sport view joins them with «;», the TV view lists them), then the host's text.
function answerParts(a) {
  if (!a) return {main: "", alts: [], text: ""};
  if (typeof a === "string") {
    const parts = a.split(/\s*;\s*/).map((x) => x.trim()).filter(Boolean);
    return {main: parts[0] || "", alts: parts.slice(1), text: ""};
  }
  const right = (a.right || []).filter(Boolean);
  const text = a.text && !right.includes(a.text) ? a.text : "";
  return {main: right[0] || text, alts: right.slice(1), text: right.length ? text : ""};
}

function answerBlock(a, caption) {
  const {main, alts, text} = answerParts(a);
  const box = el("div", {class: "answer"});
  box.append(el("div", {class: "answer-main"},
    caption ? el("span", {class: "label", text: caption + ": "}) : null, el("span", {class: "text", text: main})));
  if (text) box.append(el("div", {class: "answer-note", text}));
  if (alts.length) {
    box.append(el("div", {class: "answer-alts"}, el("span", {class: "label", text: t("board.also") + ":"}),
      el("ul", {}, alts.map((x) => el("li", {text: x})))));
  }
  return box;
}

function auctionBoard(v, a) {
  const box = el("div", {class: "board-auction"});
  box.append(el("div", {class: "bid", text: t("auction.bid") + ": " + (a.bid != null ? num(a.bid) : "—") + (a.leader != null ? " — " + playerName(v, a.leader) : "") + (a.all_in ? " · " + t("auction.all_in") : "")}));
  if (a.turn != null) box.append(el("div", {class: "muted", text: t("auction.turn") + ": " + playerName(v, a.turn)}));
  const lines = bidLines(v, a, 4);
  if (lines.length) box.append(el("ol", {class: "bids"}, lines.map((x) => el("li", {text: x}))));
  return box;
}

function writtenBoard(v, w) {
  const table = el("table", {class: "board-written"});
  table.append(el("tr", {}, el("th", {scope: "col", text: t("stats.player")}),
    el("th", {scope: "col", text: w.needs_bets ? t("arg.bet") : ""}),
    el("th", {scope: "col", text: t("arg.answer")}), el("th", {scope: "col", text: t("arg.verdict")})));
  for (const r of w.rows) {
    const bet = w.needs_bets ? (r.bet != null ? num(r.bet) : (r.has_bet ? "✓" : "…")) : "";
    const ans = r.answer != null ? r.answer : (r.has_answer ? "✓" : "…");
    table.append(el("tr", {class: r.verdict || ""}, el("td", {text: playerName(v, r.player)}),
      el("td", {text: bet}), el("td", {text: ans}), el("td", {text: r.verdict ? t("verdict." + r.verdict) : ""})));
  }
  return table;
}

// The final's themes laid out in columns so that even a long list fits; a removed theme
// stays, struck out, with the name of the player who removed it.
function finalBoard(v) {
  const box = el("div", {class: "board-final-box"});
  if (v.final.turn != null) box.append(el("div", {class: "turn-note", text: t("board.removes", {who: playerName(v, v.final.turn)})}));
  const list = el("ul", {class: "board-final"});
  const n = v.final.themes.length;
  list.style.setProperty("--fcols", n > 10 ? 3 : n > 5 ? 2 : 1);
  for (const th of v.final.themes) {
    list.append(el("li", {class: th.removed_by != null ? "removed" : ""}, el("span", {class: "fname", text: th.name}),
      th.removed_by != null ? el("span", {class: "by", text: playerName(v, th.removed_by)}) : null));
  }
  box.append(list);
  return box;
}

// One line that tells the story: who chooses, a shootout or an extra theme and who plays it.
function renderStory(v, data) {
  const box = $("story");
  let text = "", cls = "";
  const names = (seats) => seats.map((s) => playerName(v, s)).join(", ");
  if (data.game == null || gameOver(data)) text = "";
  else if (v.tv && v.shootout && v.phase === "shootout_theme") { text = t("board.shootout_choose", {names: names(v.shootout.players)}); cls = "banner"; }
  else if (v.tv && v.shootout) { text = t("board.shootout", {names: names(v.shootout.players)}); cls = "banner"; }
  else if (!v.tv && v.phase === "closed" && v.closed === "no_press") { text = t("board.time_out"); cls = "banner"; }
  else if (v.tv && v.stage === "final" && ["bets", "writing"].includes(v.phase) && v.question && v.question.written) {
    const w = v.question.written;
    const step = v.phase === "bets" ? "board.final_bets"
      : w.rows.every((r) => r.has_answer) ? "board.final_judging" : "board.final_writing";
    text = t(step); cls = "banner";
  }
  else if (!v.tv && v.phase === "tie") { text = t("board.tie", {names: names(v.tied || [])}); cls = "banner"; }
  else if (!v.tv && v.theme && v.theme.extra) {
    text = t("board.extra_theme", {names: names(players(v).filter((p) => p.playing !== false).map((p) => p.seat))}); cls = "banner";
  } else if (v.tv && v.phase === "choose" && v.chooser != null) text = t("board.chooses", {who: playerName(v, v.chooser)});
  else if (v.tv && v.phase === "pick_chooser") text = t("board.pick_chooser");
  else if (v.tv && v.phase === "final_order") text = t("board.final_order");
  box.textContent = text;
  box.className = "story " + cls;
  box.hidden = !text;
}

// Package media from the box's store; the content type says which element plays it.
const mediaCache = new Map();

function media(hash, mime) {
  if (mediaCache.has(hash)) return mediaCache.get(hash);
  const node = makeMedia(hash, mime);
  node.dataset.hash = hash;
  return node;
}

function makeMedia(hash, mime) {
  const src = "/media/" + encodeURIComponent(hash);
  const type = (mime || "image/").split("/")[0];
  if (type === "audio") return el("audio", {src, autoplay: true, controls: true});
  if (type === "video") return el("video", {src, autoplay: true});
  if (mime === "text/html") return el("iframe", {src, sandbox: "", class: "html-media"});
  return el("img", {src, alt: ""});
}

// Long questions must fit without scrolling: shrink the type until they do (not below 36px
// on a 1920×1080 TV, proportionally less on a smaller kiosk TV, never below 24px).
function fit(box) {
  let size = 64;
  const floor = Math.max(24, Math.round(36 * Math.min(innerWidth / 1920, innerHeight / 1080)));
  box.style.fontSize = size + "px";
  while (box.scrollHeight > box.clientHeight + 2 && size > floor) {
    size -= 4;
    box.style.fontSize = size + "px";
  }
}

function renderAnswerer(v) {
  const a = v.answering;
  $("answerer").hidden = a == null;
  if (a == null) return;
  // One player answers a question the room has not read yet (a cat, an auction, no risk):
  // the name goes above the question's text instead of covering it.
  const single = !!(v.tv && v.question && v.question.mode === "single" && v.text);
  $("answerer").classList.toggle("compact", single);
  $("answerer-name").textContent = playerName(v, a);
  $("answerer-time").hidden = !(v.question && v.question.time_up);
  // A cat or an auction: the answerer's overlay keeps the theme and the price in sight.
  const q = v.question || {};
  const line = v.tv && ["cat", "auction"].includes(v.kind) && q.value != null
    ? t("board." + v.kind + "_line", {theme: q.theme || "", value: num(q.value)}) : "";
  $("answerer-note").textContent = line;
  $("answerer-note").hidden = !line;
  const queue = (v.queue || []).map((s) => playerName(v, s));
  $("answerer-queue").textContent = queue.length ? t("board.queue", {names: queue.join(", ")}) : "";
}

function falseStarts(v) {
  const marks = {};
  // A player who false-started and now answers has served the block: no mark while answering.
  for (const r of v.race || []) if (r.status === "false_start" && r.player !== v.answering) marks[r.player] = (marks[r.player] || 0) + 1;
  return marks;
}

function renderScores(v) {
  const box = $("scores");
  box.replaceChildren();
  const marks = falseStarts(v);
  const inShootout = v.tv && v.shootout ? v.shootout.players : null;
  // The final is played only by those the view lists (a score above zero).
  const inFinal = v.tv && v.stage === "final" && v.final ? v.final.players || [] : null;
  // The cat's receiver, from the moment it is given (the price is chosen, then the answer).
  const q = v.question || {};
  const receiver = v.tv && v.kind === "cat" && v.phase === "cat_price" ? q.answerer : null;
  for (const p of players(v)) {
    const out = p.playing === false || (inShootout && !inShootout.includes(p.seat))
      || (inFinal && !inFinal.includes(p.seat));
    const cls = ["p", p.seat === v.answering ? "answering" : "", out ? "out" : "", p.seat === receiver ? "receiver" : "",
      v.phase === "choose" && p.seat === v.chooser ? "chooser" : ""].join(" ");
    box.append(el("div", {class: cls, dataset: {seat: p.seat}},
      el("div", {class: "name", text: p.name}),
      el("div", {class: "score", text: num(p.score)}),
      el("div", {class: "marks", text: marks[p.seat] ? "✕".repeat(marks[p.seat]) + " " + t("board.false_start") : ""})));
  }
}

// For the audience: names and milliseconds after the signal, in time order, false starts
// marked; no technical words (how a press arrived is the host's business). Presses after a
// re-armed signal (after a wrong answer, or the sport queue's reset) are a group of their
// own under a caption, so an earlier signal's times never mix with a later one's.
function raceGroups(race) {
  const rows = race.filter((r) => !["bounce", "closed"].includes(r.status)).map((r) => ({r,
    // The signal a press is measured from: its tick less its offset (both engines).
    lamp: r.ms_after_lamp == null ? -Infinity : r.t_ns / 1e6 - r.ms_after_lamp}));
  rows.sort((a, b) => a.lamp - b.lamp);
  const groups = [];
  for (const x of rows) {  // one signal: the same lamp, to float rounding (signals are far apart)
    const g = groups[groups.length - 1];
    if (g && (g.lamp === x.lamp || Math.abs(g.lamp - x.lamp) < 0.5)) g.rows.push(x.r);
    else groups.push({lamp: x.lamp, before: x.lamp === -Infinity, rows: [x.r]});
  }
  for (const g of groups) {
    g.rows.sort((a, b) => (a.ms_after_lamp ?? -Infinity) - (b.ms_after_lamp ?? -Infinity) || a.t_ns - b.t_ns);
  }
  return groups;
}

function renderRace(v, data) {
  const race = v.race || [];
  const show = data.ui.race_shown && race.length > 0;
  $("race-overlay").hidden = !show;
  if (!show) return;
  const table = $("race");
  table.replaceChildren(el("thead", {}, el("tr", {},
    el("th", {scope: "col", text: t("board.race_player")}),
    el("th", {scope: "col", class: "num", text: t("board.race_ms")}), el("td", {}))));
  const groups = raceGroups(race);
  let n = 0;
  for (const g of groups) {
    const body = el("tbody", {dataset: {signal: g.before ? 0 : ++n}});
    if (groups.length > 1) {
      body.append(el("tr", {class: "signal"}, el("th", {scope: "rowgroup", colspan: 3,
        text: g.before ? t("board.race_before") : t("board.race_signal", {n})})));
    }
    for (const r of g.rows) {
      const msText = r.ms_after_lamp == null ? "—" : (r.ms_after_lamp >= 0 ? "" : "\u2212") + Math.abs(Math.round(r.ms_after_lamp)) + " " + t("common.ms");
      const mark = r.status === "false_start" ? t("board.false_start") : r.status === "winner" ? t("board.first") : "";
      body.append(el("tr", {class: r.status}, el("td", {text: playerName(v, r.player)}), el("td", {class: "num", text: msText}),
        el("td", {text: mark})));
    }
    table.append(body);
  }
}

function renderWinner(v, data) {
  const done = gameOver(data) && players(v).length > 0;
  $("winner").hidden = !done;
  if (!done) return;
  const r = results(data);
  const names = r.winners.map((s) => playerName(v, s));
  $("winner-title").textContent = names.length > 1 ? t("host.winners") : t("board.winner");
  $("winner-name").textContent = names.join(", ");
  const finalAnswer = (v.final && v.final.answer) || r.finalAnswer;
  $("final-answer").hidden = !finalAnswer;
  $("final-answer").replaceChildren(finalAnswer ? answerBlock(finalAnswer, t("board.final_answer")) : "");
  const podium = $("winner-list");
  podium.replaceChildren();
  // The podium: second, first, third (the show's order), then the rest in a line.
  const top = r.standings.slice(0, 3);
  const order = top.length === 3 ? [top[1], top[0], top[2]] : top.length === 2 ? [top[1], top[0]] : top;
  for (const st of order) {
    podium.append(el("div", {class: "step place-" + Math.min(st.place, 3) + (st.place === 1 ? " first" : "")},
      el("div", {class: "pname", text: st.name}), el("div", {class: "pscore", text: num(st.score)}),
      el("div", {class: "block", text: String(st.place)})));
  }
  for (const st of r.standings.slice(3)) podium.append(el("div", {class: "rest", text: `${st.place}. ${st.name} — ${num(st.score)}`}));
  $("board-stats").replaceChildren(statsView(data));
}

// Simulated buttons: keys 1-4 press for seats 1-4 (simulator mode only).
document.addEventListener("keydown", (e) => {
  Sound.ensure();
  if (!S.box.simulate || !/^[1-9]$/.test(e.key)) return;
  socket.emit("press", {player: parseInt(e.key, 10) - 1});
});
document.addEventListener("click", () => Sound.ensure());
window.addEventListener("resize", () => { if (!$("qscreen").hidden) fit($("qscreen")); });
