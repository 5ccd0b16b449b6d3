// The TV board: read from 5 m. Shows only the board view (never an answer before it is
// revealed), the lamp as frame + icon + word, the answerer's name, timers, sounds.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null;
const socket = connect({role: "board"}, render);
const MAX_ROWS = 6;

function render(data) {
  current = data;
  const v = data.view || {};
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

  const theme = v.theme && typeof v.theme === "object" ? v.theme.name : (v.theme || "");
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
  const themes = v.board || v.themes || [];
  if (!themes.length) return;
  const cur = v.theme && typeof v.theme === "object" ? v.theme.index : null;
  let start = 0;
  if (themes.length > MAX_ROWS && cur != null) start = Math.max(0, Math.min(cur - 1, themes.length - MAX_ROWS));
  const shown = themes.slice(start, start + MAX_ROWS);
  const open = ["open", "answering", "closed"].includes(v.phase);
  shown.forEach((t, k) => {
    const i = start + k;
    const values = cellValues(v, i, t);
    const row = el("div", {class: "row" + (t.red ? " red" : "") + (i === cur ? " current-theme" : ""),
                           dataset: {theme: i}});
    row.style.setProperty("--cols", values.length);
    row.append(el("div", {class: "tname", text: t.name}));
    values.forEach((val, n) => {
      let played, isCur = false;
      if (Array.isArray(t.played)) played = !!t.played[n];
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
// a closed question shows its revealed text and answer.
function renderQuestion(v) {
  const box = $("qscreen");
  box.replaceChildren();
  const q = v.question && (v.question.text || (v.question.media || []).length) ? v.question : null;
  const shown = q || (v.phase === "closed" && v.revealed ? v.revealed : null);
  box.hidden = !shown;
  $("grid").hidden = !!shown;
  if (!shown) return;
  if (shown.text) box.append(el("div", {class: "text", text: shown.text}));
  for (const m of shown.media || []) box.append(media(m));
  if (shown.answer) box.append(el("div", {class: "answer", text: shown.answer}));
  fit(box);
}

function media(m) {
  const src = "/media/" + encodeURIComponent(m.ref || m.value || m);
  const type = m.type || "image";
  if (type === "audio") return el("audio", {src, autoplay: true});
  if (type === "video") return el("video", {src, autoplay: true});
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
  const done = (data.finished || v.phase === "finished") && (s || v.players);
  $("winner").hidden = !done;
  if (!done) return;
  const standings = (s && s.standings) || players(v).slice().sort((a, b) => b.score - a.score)
    .map((p, i) => ({...p, place: p.place ?? i + 1}));
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
