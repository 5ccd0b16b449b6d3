// The TV board: read from 5 m. Shows only the board view (never an answer before it is
// revealed), the lamp as frame + icon + word, the answerer's name, timers, sounds.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null;
const socket = connect({role: "board"}, render);
const MAX_ROWS = 6;

function render(data) {
  current = data;
  const v = norm(data.view);
  for (const cue of data.cues || []) Sound.play(cue);
  if (data.box && data.box.sound) { Sound.volume = data.box.sound.volume; Sound.mute = data.box.sound.mute; }

  $("idle").hidden = data.game != null;
  $("paused").hidden = !data.ui.paused;
  const lampOn = !!v.lamp;
  $("board").classList.toggle("lamp", lampOn);
  $("lamp").classList.toggle("on", lampOn);
  $("lamp-icon").textContent = lampOn ? "●" : "○";
  $("lamp-word").textContent = lampOn ? t("lamp.press") : t("lamp.wait");
  $("board").dataset.lamp = lampOn ? "on" : "off";
  $("board").dataset.phase = v.phase || "";

  const theme = v.theme && typeof v.theme === "object" ? v.theme.name
    : (v.theme || (v.board && v.phase === "choose" ? v.board.name : "") || (v.final && v.stage === "final" ? v.final.name : ""));
  $("theme").textContent = theme;
  $("value").textContent = v.value ?? "";

  renderGrid(v);
  renderQuestion(v);
  renderAnswerer(v);
  renderScores(v);
  renderRace(v, data);
  renderWinner(v, data);
  runTimer($("timer"), data.timers);
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
  if (!themes.length) return;
  const cur = v.theme && typeof v.theme === "object" ? v.theme.index : null;
  const tvCell = v.tv && v.question && v.question.cell ? v.question.cell.slice(-2) : null;
  let start = 0;
  if (themes.length > MAX_ROWS && cur != null) start = Math.max(0, Math.min(cur - 1, themes.length - MAX_ROWS));
  const shown = themes.slice(start, start + MAX_ROWS);
  const open = ["open", "answering", "closed"].includes(v.phase);
  shown.forEach((t, k) => {
    const i = start + k;
    const values = t.cells ? t.cells.map((c) => c.value) : cellValues(v, i, t);
    const row = el("div", {class: "row" + (t.red ? " red" : "") + (i === cur ? " current-theme" : ""),
                           dataset: {theme: i}});
    row.style.setProperty("--cols", values.length);
    row.append(el("div", {class: "tname", text: t.name}));
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
      row.append(el("div", {class: "cell" + (played ? " played" : "") + (isCur ? " current" : ""),
                            text: played ? "" : cellVal}));
    });
    grid.append(row);
  });
}

// Question text appears only when the board view carries it (never for cat and auction);
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
      if (v.kind === "cat" && v.phase === "cat_give") box.append(el("div", {text: t("board.cat_give", {who: playerName(v, q.opener)})}));
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
      if (r.answer) box.append(el("div", {class: "answer", text: r.answer}));
    }
  }
  if (v.tv && v.last && v.phase === "choose" && v.last.answer) {
    $("last-answer").textContent = t("board.last_answer") + ": " + answerOf(v.last.answer);
  } else {
    $("last-answer").textContent = "";
  }
  box.hidden = !shown;
  $("grid").hidden = shown;
  if (shown) fit(box);
}

function auctionBoard(v, a) {
  const box = el("div", {class: "board-auction"});
  box.append(el("div", {text: t("auction.bid") + ": " + (a.bid ?? "—") + (a.leader != null ? " — " + playerName(v, a.leader) : "") + (a.all_in ? " · " + t("auction.all_in") : "")}));
  if (a.turn != null) box.append(el("div", {class: "muted", text: t("auction.turn") + ": " + playerName(v, a.turn)}));
  if (a.passed.length) box.append(el("div", {class: "muted", text: t("auction.passed") + ": " + a.passed.map((p) => playerName(v, p)).join(", ")}));
  return box;
}

function writtenBoard(v, w) {
  const table = el("table", {class: "board-written"});
  for (const r of w.rows) {
    const bet = w.needs_bets ? (r.bet != null ? String(r.bet) : (r.has_bet ? "✓" : "…")) : "";
    const ans = r.answer != null ? r.answer : (r.has_answer ? "✓" : "…");
    table.append(el("tr", {class: r.verdict || ""}, el("td", {text: playerName(v, r.player)}),
      el("td", {text: bet}), el("td", {text: ans}), el("td", {text: r.verdict ? t("verdict." + r.verdict) : ""})));
  }
  return table;
}

function finalBoard(v) {
  const list = el("ul", {class: "board-final"});
  for (const th of v.final.themes) list.append(el("li", {class: th.removed_by != null ? "removed" : ""}, th.name));
  if (v.final.turn != null) list.append(el("li", {class: "turn-note", text: t("board.removes", {who: playerName(v, v.final.turn)})}));
  return list;
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

// Long questions must fit without scrolling: shrink the type until they do (not below 36px).
function fit(box) {
  let size = 64;
  box.style.fontSize = size + "px";
  while (box.scrollHeight > box.clientHeight + 2 && size > 36) {
    size -= 4;
    box.style.fontSize = size + "px";
  }
}

function renderAnswerer(v) {
  const a = v.answering;
  $("answerer").hidden = a == null;
  if (a == null) return;
  $("answerer-name").textContent = playerName(v, a);
  const q = (v.queue || []).map((s) => playerName(v, s));
  $("answerer-queue").textContent = q.length ? t("board.queue", {names: q.join(", ")}) : "";
}

function falseStarts(v) {
  const marks = {};
  for (const r of v.race || []) if (r.status === "false_start") marks[r.player] = (marks[r.player] || 0) + 1;
  return marks;
}

function renderScores(v) {
  const box = $("scores");
  box.replaceChildren();
  const marks = falseStarts(v);
  for (const p of players(v)) {
    const cls = ["p", p.seat === v.answering ? "answering" : "", p.playing === false ? "out" : ""].join(" ");
    box.append(el("div", {class: cls, dataset: {seat: p.seat}},
      el("div", {class: "name", text: p.name}),
      el("div", {class: "score", text: p.score}),
      el("div", {class: "marks", text: marks[p.seat] ? "✕".repeat(marks[p.seat]) + " " + t("board.false_start") : ""})));
  }
}

function renderRace(v, data) {
  const race = v.race || [];
  const show = data.ui.race_shown && race.length > 0;
  $("race-overlay").hidden = !show;
  if (!show) return;
  const table = $("race");
  table.replaceChildren();
  for (const r of race) {
    const ms = r.ms_after_lamp == null ? "—" : (r.ms_after_lamp >= 0 ? "+" : "") + Math.round(r.ms_after_lamp) + " " + t("common.ms");
    table.append(el("tr", {class: r.status}, el("td", {text: playerName(v, r.player)}), el("td", {text: ms}),
      el("td", {text: t("race." + r.status) + (r.by && r.by !== "button" ? " · " + t("race.by." + r.by) : "")})));
  }
}

function renderWinner(v, data) {
  const s = data.summary;
  const done = (data.finished || v.phase === "finished" || v.stage === "over") && (s || v.players);
  $("winner").hidden = !done;
  if (!done) return;
  const ps = players(v);
  const standings = (s && s.standings) || ps.slice().sort((a, b) => b.score - a.score)
    .map((p) => ({...p, place: p.place ?? 1 + ps.filter((o) => o.score > p.score).length}));
  const list = $("winner-list");
  list.replaceChildren();
  for (const st of standings) {
    list.append(el("div", {class: st.place === 1 ? "first" : ""}, `${st.place}. ${st.name} — ${st.score}`));
  }
}

// Simulated buttons: keys 1-4 press for seats 1-4 (simulator mode only).
document.addEventListener("keydown", (e) => {
  Sound.ensure();
  if (!S.box.simulate || !/^[1-9]$/.test(e.key)) return;
  socket.emit("press", {player: parseInt(e.key, 10) - 1});
});
document.addEventListener("click", () => Sound.ensure());
window.addEventListener("resize", () => { if (!$("qscreen").hidden) fit($("qscreen")); });
