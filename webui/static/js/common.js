// Shared by every page: translations, the Socket.IO connection with its offline banner,
// and the generic rendering of the engine's legal actions as buttons.
"use strict";

// The page's data (language, catalogue, box), a JSON block the server wrote (no inline script:
// the Content-Security-Policy allows only the box's own script files).
const S = JSON.parse(document.getElementById("svoyak-page").textContent);
window.SVOYAK = S;

function t(key, fmt) {
  let s = S.catalogue[key] ?? key;
  if (fmt) for (const [k, v] of Object.entries(fmt)) s = s.replaceAll(`{${k}}`, v);
  return s;
}

// A label object from the engine: {ru, en} — pick the page's language, Russian first.
function label(obj) {
  if (obj == null) return "";
  if (typeof obj !== "object") return String(obj);
  return obj[S.lang] ?? obj.ru ?? obj.en ?? "";
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "style") Object.assign(e.style, v);  // CSSOM: allowed by a strict style-src
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Connect as a role; every (re)connect brings the full view, so a tablet that slept or a TV
// whose server restarted comes back to the right screen by itself.
function connect(auth, onView) {
  const socket = io({auth: (cb) => cb({lang: S.lang, ...(typeof auth === "function" ? auth() : auth)}),
                     reconnectionDelayMax: 3000});
  window.svoyakSocket = window.svoyakSocket || socket;  // the page's own, for its other scripts
  const offline = document.getElementById("offline");
  socket.on("connect", () => { if (offline) { offline.hidden = true; offline.textContent = t("common.offline"); } document.body.dataset.online = "1"; });
  socket.on("disconnect", () => { if (offline) offline.hidden = false; document.body.dataset.online = "0"; });
  socket.on("connect_error", (err) => {
    if (offline) {
      offline.hidden = false;
      // 503 from the box: too many devices (the phone retries by itself meanwhile).
      offline.textContent = err && err.description === 503 ? t("common.full") : t("common.offline");
    }
    document.body.dataset.online = "0";
    if ((auth.role === "host" || auth.role === "admin") && !socket.active) {
      location.href = "/login?next=" + encodeURIComponent(location.pathname); // session gone
    }
  });
  socket.on("view", (data) => {
    // A screen that has not picked its own language follows the box's (the host may make
    // its language the box's from the host page): the page reloads in it, once.
    const boxLang = data.box && data.box.language;
    if (!S.lang_own && boxLang && boxLang !== S.lang && !connect.reloading) {
      connect.reloading = true;
      location.reload();
      return;
    }
    window.lastView = data;
    onView(data);
    document.body.dataset.ready = "1";
  });
  return socket;
}

// Send with an acknowledgement; refusals go to the given toast element.
function send(socket, name, data, toast) {
  return new Promise((resolve) => {
    socket.timeout(8000).emit(name, data, (err, res) => {
      if (err) res = {ok: false, refused: {ru: t("common.timeout"), en: t("common.timeout")}};
      if (!res.ok && toast) showToast(toast, label(res.refused));
      resolve(res);
    });
  });
}

function showToast(node, text) {
  node.textContent = text;
  node.hidden = false;
  clearTimeout(node._timer);
  node._timer = setTimeout(() => { node.hidden = true; }, 5000);
}

// Both engines' views in one shape for the screens: lamp, answering, theme, value, race,
// kind, answer text. The sport view has these at the top; the TV view inside "question".
function norm(v) {
  if (!v) return {};
  if (v.engine !== "tv") {
    const q = v.question || {};
    return {...v, race: v.race || [], kind: "normal", answerText: q.answer || "",
            comment: q.comment || "", text: q.text || ""};
  }
  const q = v.question || null;
  const race = q && q.race;
  const ans = q && q.answer;
  return {
    ...v, tv: true,
    theme: q ? (q.theme || "") : "",
    value: q ? q.value : null,
    lamp: !!(race && race.lamp && v.phase === "buttons"),
    answering: v.phase === "answering" && q ? q.answerer : null,
    race: race ? race.presses : [],
    kind: q ? q.kind : null,
    queue: [],
    playing: race ? race.playing : [],
    answered: race ? race.answered : [],
    text: q ? (q.text || "") : "",
    answerText: ans ? [(ans.right || []).join(" / "), ans.text].filter(Boolean).join(" — ") : "",
    comment: ans ? ans.comment : "",
    wrongAnswers: ans ? ans.wrong : [],
  };
}

// Scores and bets with a real minus sign (U+2212), not a hyphen: it reads from 5 m.
function num(n) {
  if (n == null || n === "") return "";
  const x = Number(n);
  if (!Number.isFinite(x)) return String(n);
  return x < 0 ? "\u2212" + String(-x) : String(x);
}

function signed(n) {
  const x = Number(n);
  return x > 0 ? "+" + x : num(x);
}

function answerOf(a) {
  if (!a) return "";
  if (typeof a === "string") return a;
  return [(a.right || []).join(" / "), a.text].filter(Boolean).join(" — ");
}

function players(view) {
  return (view && (view.players || view.scores)) || [];
}

function playerName(view, seat) {
  const p = players(view)[seat];
  return p ? (p.name ?? t("common.seat", {n: seat + 1})) : t("common.seat", {n: seat + 1});
}

// ---- legal actions as buttons -------------------------------------------------------------
// Each action: {type, ru, en, by, args, key, confirm}. args: name -> [choices] or a spec
// {"type": "int"|"text", ...}. A choice list becomes one button per choice; specs become
// inputs with a send button. Rare actions (confirm) ask twice.

// Verdicts are the host's most frequent keys: + right, - wrong, 0 no answer.
const CHOICE_KEYS = {right: "+", wrong: "-", no_answer: "0"};

function choiceLabel(c) { return label(c) || String(c.value); }

function actionButton(text, key, onFire, confirm, cls) {
  const b = el("button", {class: "btn action " + (cls || ""), type: "button"});
  b.append(el("span", {class: "label", text}));
  if (key) b.append(el("kbd", {text: key === "space" ? t("key.space") : key}));
  b.dataset.key = key || "";
  b.addEventListener("click", () => {
    if (confirm && !b.classList.contains("confirming")) {
      b.classList.add("confirming");
      b.querySelector(".label").textContent = t("host.confirm", {what: text});
      setTimeout(() => { b.classList.remove("confirming"); b.querySelector(".label").textContent = text; }, 4000);
      return;
    }
    b.classList.remove("confirming");
    onFire();
  });
  return b;
}

// Arguments with a single choice are not a question (the auction's "all-in" for the one
// player whose word it is, a phone's own seat): they are sent as they are, not shown.
function fixedArgs(a) {
  const fixed = {}, open = [];
  for (const [name, spec] of Object.entries(a.args || {})) {
    if (Array.isArray(spec) && spec.length === 1) fixed[name] = spec[0].value;
    else open.push([name, spec]);
  }
  return {fixed, open};
}

function renderActions(container, actions, fire, opts = {}) {
  // Unchanged actions keep their buttons: no re-render under a finger about to tap.
  const sig = JSON.stringify([actions, opts.names || null]);
  if (container._sig === sig && container._fire === fire) return container._keys;
  // A view arriving while the host types a bid or a score must not wipe the field.
  const saved = {};
  container.querySelectorAll("[data-field]").forEach((i) => { saved[i.dataset.field] = i.value; });
  const focused = document.activeElement && document.activeElement.dataset
    ? document.activeElement.dataset.field : null;
  container.replaceChildren();
  const keys = {};
  actions.forEach((a, i) => {
    const {fixed, open: args} = fixedArgs(a);
    const text = label(a);
    const primary = i === 0 && opts.primary !== false;
    const cls = (primary ? "primary " : "") + "act-" + a.type + (a.confirm ? " rare" : "");
    if (args.length === 0) {
      const b = actionButton(text, a.key, () => fire({type: a.type, ...fixed}), a.confirm, cls);
      b.dataset.action = a.type;
      if (primary) b.dataset.primary = "1";
      container.append(b);
      if (a.key) keys[a.key.toLowerCase()] = b;
      return;
    }
    const many = args.some(([, sp]) => Array.isArray(sp) && sp.length > 6);
    const group = el("div", {class: "action-group " + cls + (many ? " many" : ""), dataset: {action: a.type}});
    if (primary) group.dataset.primary = "1";
    group.append(el("div", {class: "group-label", text}));
    // A player and a choice (judging written answers): one row per player, even when a
    // single player is left (the row keeps its place under the host's thumb).
    const all = Object.entries(a.args || {});
    const pl = all.find(([n, sp]) => n === "player" && Array.isArray(sp));
    const other = all.find(([n, sp]) => n !== "player" && Array.isArray(sp));
    if (all.length === 2 && pl && other && opts.rows !== false) {
      for (const p of pl[1]) {
        const row = el("div", {class: "choice-row", dataset: {player: p.value}},
          el("span", {class: "row-name", text: choiceLabel(p)}));
        for (const c of other[1]) {
          const b = actionButton(choiceLabel(c), "", () => fire({type: a.type, player: p.value,
            [other[0]]: c.value}), a.confirm, "choice");
          b.dataset.value = JSON.stringify(c.value);
          row.append(b);
        }
        group.append(row);
      }
      container.append(group);
      return;
    }
    const simple = args.length === 1 && Array.isArray(args[0][1]);
    if (simple) {
      const [name, choices] = args[0];
      choices.forEach((c) => {
        const k = CHOICE_KEYS[c.value] || (choices.length === 1 ? a.key : "");
        const b = actionButton(choiceLabel(c), k, () => fire({type: a.type, ...fixed, [name]: c.value}),
          a.confirm, "choice");
        b.dataset.value = JSON.stringify(c.value);
        if (k && !a.confirm) keys[k.toLowerCase()] = b;
        group.append(b);
      });
      container.append(group);
      return;
    }
    const form = el("form", {class: "action-form"});
    const inputs = {};
    for (const [name, spec] of args) {
      let input;
      if (Array.isArray(spec)) {
        input = el("select", {name});
        for (const c of spec) input.append(el("option", {value: JSON.stringify(c.value), text: choiceLabel(c)}));
      } else if (spec.type === "int") {
        input = el("input", {name, type: "number", inputmode: "numeric", min: spec.min, max: spec.max,
                             step: spec.step || 1,
                             value: spec.default ?? ((spec.min ?? 0) <= 0 && (spec.max ?? 0) >= 0 ? 0 : spec.min)});
      } else {
        input = el("input", {name, type: "text", autocomplete: "off"});
      }
      const who = Array.isArray(a.args.player) ? a.args.player.map((c) => c.value).join(",") : "";
      input.dataset.field = `${a.type}:${name}:${who}`;
      if (saved[input.dataset.field] !== undefined) input.value = saved[input.dataset.field];
      inputs[name] = [input, spec];
      form.append(el("label", {}, el("span", {text: t("arg." + name) !== "arg." + name ? t("arg." + name) : name}), input));
    }
    // A submit button: the browser submits the form (after checking the fields) by itself.
    const submit = actionButton(opts.sendLabel || t("host.send"), a.key, () => {}, false, "send");
    submit.type = "submit";
    form.append(submit);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const cmd = {type: a.type, ...fixed};
      for (const [name, [input, spec]] of Object.entries(inputs)) {
        if (Array.isArray(spec)) cmd[name] = JSON.parse(input.value);
        else if (spec.type === "int") cmd[name] = parseInt(input.value, 10);
        else cmd[name] = input.value;
      }
      fire(cmd);
    });
    group.append(form);
    container.append(group);
    const again = focused && form.querySelector(`[data-field="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  });
  container._sig = sig;
  container._fire = fire;
  container._keys = keys;
  return keys;
}

// A countdown bar that empties: timers = {name: {ms, ends}}; the first time a deadline is
// seen its remaining time is the bar's full length.
const timerTotals = {};
function runTimer(bar, timers) {
  const entry = timers && Object.values(timers)[0];
  if (bar._anim) { bar._anim.cancel(); bar._anim = null; }
  bar.hidden = !entry;
  if (!entry) return;
  const total = (timerTotals[entry.ends] ??= entry.ms);
  bar._anim = bar.firstElementChild.animate(
    [{transform: `scaleX(${entry.ms / total})`}, {transform: "scaleX(0)"}],
    {duration: Math.max(entry.ms, 0), fill: "forwards"});
}

// Sounds, generated in the browser (Web Audio): nothing to download.
const Sound = {
  ctx: null,
  volume: (S.box.sound && S.box.sound.volume) ?? 0.7,
  mute: !!(S.box.sound && S.box.sound.mute),
  ensure() {
    if (!this.ctx) {
      const C = window.AudioContext || window.webkitAudioContext;
      if (!C) return null;
      this.ctx = new C();
    }
    if (this.ctx.state === "suspended") this.ctx.resume();
    return this.ctx;
  },
  tone(freq, start, dur, type = "sine", gain = 1) {
    const ctx = this.ensure();
    if (!ctx || this.mute || this.volume <= 0) return;
    const o = ctx.createOscillator(), g = ctx.createGain();
    o.type = type;
    o.frequency.value = freq;
    const t0 = ctx.currentTime + start;
    g.gain.setValueAtTime(0, t0);
    g.gain.linearRampToValueAtTime(this.volume * gain * 0.4, t0 + 0.01);
    g.gain.exponentialRampToValueAtTime(0.0001, t0 + dur);
    o.connect(g).connect(ctx.destination);
    o.start(t0);
    o.stop(t0 + dur + 0.05);
  },
  play(cue) {
    window.soundLog = (window.soundLog || []).concat([cue]);
    if (cue === "lamp_on") { this.tone(880, 0, 0.25); this.tone(1320, 0.08, 0.25, "sine", 0.5); }
    else if (cue === "press") { this.tone(660, 0, 0.12, "square", 0.5); }
    else if (cue === "false_start") { this.tone(180, 0, 0.45, "sawtooth"); }
    else if (cue === "time_up") { this.tone(520, 0, 0.3); this.tone(390, 0.3, 0.5); }
  },
};

// ---- the end of a game: standings and per-player statistics, both engines in one shape ----
function gameOver(data) {
  const v = (data && data.view) || {};
  return !!(data && (data.finished || v.stage === "over" || v.phase === "finished"));
}

function results(data) {
  const v = (data && data.view) || {};
  const s = (data && data.summary) || {};
  const ps = players(v);
  const places = s.places || ps.map((p) => p.place ?? 1 + ps.filter((o) => o.score > p.score).length);
  const standings = ps.map((p, i) => ({seat: p.seat ?? i, name: p.name, score: p.score, place: places[i]}))
    .sort((a, b) => a.place - b.place || a.seat - b.seat);
  let winners = [];
  if (Array.isArray(v.winners) && v.winners.length) winners = v.winners;
  else if (v.winner != null) winners = [v.winner];
  else if (s.winner != null) winners = [s.winner];
  else if (gameOver(data)) winners = standings.filter((r) => r.place === 1).map((r) => r.seat);
  const raw = v.stats || s.stats || s.statistics || [];
  const stats = raw.map((r) => {
    const seat = r.player ?? r.seat;
    const rx = r.reaction_ms || {};
    return {
      seat, name: playerName(v, seat), right: r.right, wrong: r.wrong,
      no_answer: r.no_answer, false_starts: r.false_starts,
      rounds: r.points_by_round || null, points: r.points,
      corrections: r.corrections ?? 0, score: r.score,
      mean: r.reaction_mean_ms ?? rx.mean ?? null, best: r.reaction_best_ms ?? rx.best ?? null,
    };
  });
  const last = v.last || null;
  // The engine keeps the final's answer (a shootout after the final closes other questions).
  const finalAnswer = v.final && v.final.answer ? answerOf(v.final.answer)
    : v.stage === "over" && last && last.written ? answerOf(last.answer) : "";
  return {winners, standings, stats, finalAnswer};
}

// The engine names the shootout's round by its technical word; the screens say it in words.
function roundName(name) { return name === "shootout" ? t("round.shootout") : name; }

function ms(x) { return x == null ? "—" : Math.round(x) + " " + t("common.ms"); }

// A table of the statistics and a bar chart of reaction times (mean and best, lamp → press).
function statsView(data) {
  const r = results(data);
  const box = el("div", {class: "stats"});
  if (!r.stats.length) return box;
  const has = (k) => r.stats.some((s) => s[k] != null);
  // Rounds in the order they were played (the verdicts' order), then any other.
  const v = (data && data.view) || {}, sum = (data && data.summary) || {};
  const played = [...(sum.questions || []), ...(v.judgements || [])].map((j) => j.round).filter(Boolean);
  const rounds = [...new Set([...played, ...r.stats.flatMap((s) => Object.keys(s.rounds || {}))])]
    .filter((name) => r.stats.some((s) => s.rounds && s.rounds[name] != null));
  // The host's score corrections: when there are any, the points cell ends with a line of
  // the corrections and one of the total, so the points (by round) plus the corrections
  // are the score the podium shows (both engines' summaries say so); without them the
  // points already are the score. Lines in one cell: the table keeps its width.
  const corrected = r.stats.some((s) => s.corrections);
  const cols = [["right", "stats.right"], ["wrong", "stats.wrong"], ["no_answer", "stats.no_answer"],
    ["false_starts", "stats.false_starts"]].filter(([k]) => has(k));
  const pointsHead = rounds.length ? t("stats.by_round") : has("points") ? t("stats.points") : null;
  const head = el("tr", {}, el("th", {scope: "col", text: t("stats.player")}),
    cols.map(([, key]) => el("th", {scope: "col", text: t(key)})),
    pointsHead ? el("th", {scope: "col", text: pointsHead}) : null,
    el("th", {scope: "col", text: t("stats.mean")}), el("th", {scope: "col", text: t("stats.best")}));
  const table = el("table", {class: "stats-table"}, el("thead", {}, head));
  const body = el("tbody");
  const line = (cls, name, value) => el("div", {class: cls}, el("span", {class: "round-name", text: name + " "}), el("b", {text: value}));
  for (const s of r.stats) {
    // Points by round, a line each (a shootout adds one); the battle's points in one line.
    const lines = rounds.length
      ? rounds.filter((name) => s.rounds && s.rounds[name] != null).map((name) => line("round", roundName(name), num(s.rounds[name])))
      : [el("div", {class: "points"}, el("b", {text: num(s.points)}))];
    if (corrected) {
      lines.push(line("correction", t("stats.corrections"), s.corrections ? signed(s.corrections) : "0"),
        line("total", t("stats.score"), num(s.score)));
    }
    body.append(el("tr", {}, el("th", {scope: "row", text: s.name}),
      cols.map(([k]) => el("td", {text: s[k] ?? "—"})),
      pointsHead ? el("td", {class: "by-round"}, lines) : null,
      el("td", {text: ms(s.mean)}), el("td", {text: ms(s.best)})));
  }
  table.append(body);
  box.append(table);
  const top = Math.max(1, ...r.stats.map((s) => s.mean || 0), ...r.stats.map((s) => s.best || 0));
  const chart = el("div", {class: "reaction-chart", role: "img", "aria-label": t("stats.chart")});
  chart.append(el("div", {class: "chart-title", text: t("stats.chart")}));
  for (const s of r.stats) {
    const row = el("div", {class: "chart-row"}, el("span", {class: "chart-name", text: s.name}));
    const bars = el("div", {class: "chart-bars"});
    for (const [k, cls] of [["mean", "mean"], ["best", "best"]]) {
      const text = (k === "mean" ? t("stats.mean") : t("stats.best")) + " " + ms(s[k]);
      const w = s[k] == null ? 0 : Math.max(2, 100 * s[k] / top);
      bars.append(el("div", {class: "bar " + cls}, el("div", {class: "fill", style: {width: w + "%"}}),
        el("span", {text})));
    }
    row.append(bars);
    chart.append(row);
  }
  box.append(chart);
  return box;
}

// An auction's word as it came: "Анна — 500", "Вера — пас", "Борис — ва-банк 2000".
function bidLines(v, a, last = 6, explain = false) {
  return (a.history || []).slice(-last).map((h) => {
    const who = playerName(v, h.player);
    // The host is told why the box bid or passed for a player (the auction's own rules).
    if (explain && h.what === "auto_bid") return t("auction.auto_bid", {who, amount: num(h.amount)});
    if (explain && h.what === "auto_pass") return t("auction.auto_pass", {who});
    if (h.what.endsWith("pass")) return `${who} — ${t("auction.pass_word")}`;
    if (h.what === "all_in") return `${who} — ${t("auction.all_in")} ${num(h.amount)}`;
    return `${who} — ${num(h.amount)}`;
  });
}
