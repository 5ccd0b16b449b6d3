// A player's phone: seat and name, own score big, the scoreboard, secret final bets and
// written answers (sent only for this seat), and the casual buzzer where the box allows it.
"use strict";

const $ = (id) => document.getElementById(id);
const toast = $("toast");
const stored = localStorage.getItem("svoyak.seat");
let seat = stored === null ? null : parseInt(stored, 10);
let last = null;
const socket = connect(() => ({role: "player", seat}), render);

function render(data) {
  last = data;
  const v = data.view || {};
  if (data.seat !== seat) {
    seat = data.seat;
    if (seat == null) localStorage.removeItem("svoyak.seat");  // a seat this game lacks
  }
  const seated = seat != null && data.game != null;
  $("choose").hidden = seated;
  $("me").hidden = !seated;
  $("change-seat").hidden = !seated;
  renderSeats(v, data);
  if (seated) {
    $("my-seat").textContent = v.name || playerName(v, seat);
    $("my-score").textContent = v.score ?? (players(v)[seat] || {}).score ?? "";
    $("my-status").textContent = v.answering === seat ? t("play.you_answer") : (v.may_press ? t("lamp.press") : "");
  }
  const buzz = $("buzzer");
  buzz.hidden = !(seated && data.box.phone_buzzer && !data.finished);
  $("buzzer-note").hidden = buzz.hidden;
  buzz.classList.toggle("armed", !!v.may_press || !!v.lamp);
  const acts = (data.actions || []).filter((a) => a.type !== "press");
  $("my-actions").hidden = acts.length === 0;
  renderActions($("actions"), acts, sendMine);
  const box = $("scores");
  box.replaceChildren();
  for (const p of players(v)) {
    box.append(el("div", {class: "score-row" + (p.seat === seat ? " answering" : "")},
      el("span", {text: p.name}), el("span", {class: "score", text: p.score})));
  }
}

async function sendMine(cmd) {
  $("sent").hidden = true;
  const res = await send(socket, "player_command", cmd, toast);
  $("sent").hidden = !res.ok;
}

function renderSeats(v, data) {
  const box = $("seats");
  box.replaceChildren();
  const ps = players(v);
  $("lobby-form").hidden = data.game != null && ps.length > 0;
  for (const p of ps) {
    box.append(el("button", {class: "btn", type: "button", dataset: {seat: p.seat},
      onclick: () => takeSeat(p.seat)}, p.name));
  }
}

async function takeSeat(s) {
  const res = await send(socket, "seat", {seat: s}, toast);
  if (res.ok) { seat = s; localStorage.setItem("svoyak.seat", String(s)); }
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
  $("lobby-sent").hidden = !res.ok;
});

$("buzzer").addEventListener("pointerdown", (e) => {
  e.preventDefault();
  if (navigator.vibrate) navigator.vibrate(40);
  send(socket, "press", {}, toast);
});
