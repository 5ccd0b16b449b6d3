// The rooms pages (docs/rooms.md): the admin rooms page (director or room box) and the
// director's rooms board on the TV. Both read /rooms/status.json once per connection of
// their socket, then are pushed to: the admin page the link's status ("rooms_link", at
// most twice a second on a director), the board each room's live battle ("rooms_live")
// right after the director applied it.
"use strict";

const $r = (id) => document.getElementById(id);

function ago(wall) {
  if (!wall) return "—";
  const s = Math.max(0, Date.now() / 1000 - wall);
  return t("rooms.seconds_ago", {n: s < 10 ? s.toFixed(1) : Math.round(s)});
}

function linkText(st) {
  if (st.role === "director") return st.connected ? t("rooms.broker_up") : t("rooms.broker_down");
  if (st.connected) return t("rooms.link_up");
  if (st.taken_over) return t("rooms.taken_over");
  if (st.refused) return t("rooms.link_refused", {why: st.refused});
  return t("rooms.link_down");
}

async function fetchStatus() {
  const res = await fetch("/rooms/status.json", {cache: "no-store"});
  return res.json();
}

async function post(url, data) {
  const res = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
                                body: JSON.stringify(data || {})});
  let out = {};
  try { out = await res.json(); } catch (_) { out = {ok: false}; }
  return out;
}

function refusalText(res) {
  return res.refused ? label(res.refused) : t("common.offline");
}

function battleText(live) {
  if (!live || !live.players) return "—";
  const who = live.answering == null ? "" : " · " + t("rooms.answering", {name: live.players[live.answering]?.name ?? ""});
  const scores = live.players.map((p) => `${p.name} ${p.score}`).join(" · ");
  const theme = live.theme ? ` — ${live.theme}${live.value ? " " + live.value : ""}` : "";
  return `${live.battle || ""}: ${scores}${theme}${who}`;
}

// --- admin page -----------------------------------------------------------------------

function renderDirector(st) {
  $r("director").hidden = false;
  if (st.broker) $r("broker-address").textContent = `${st.broker.host}:${st.broker.port}`;
  const body = $r("rooms-body");
  body.replaceChildren(...st.rooms.map((r) => el("tr", {dataset: {room: r.room}},
    el("td", {text: r.room}), el("td", {text: r.box || "—"}),
    el("td", {text: (r.online ? t("rooms.online") : t("rooms.offline"))
      + (r.intruder ? " · " + t("rooms.intruder", {box: r.intruder, n: r.takeovers || 1}) : "")}),
    el("td", {text: ago(r.last_message)}),
    el("td", {text: r.lag_s == null ? "—" : t("rooms.seconds", {n: r.lag_s.toFixed(2)})}),
    el("td", {text: r.in_play ? battleText(r) : t("rooms.free")}),
    el("td", {}, el("a", {href: "/admin/rooms/assignment/" + encodeURIComponent(r.room) + ".json",
                          text: t("rooms.download_assignment")})))));
  const refusals = st.refusals || [];
  $r("refusals").hidden = refusals.length === 0;
  $r("refusals-list").replaceChildren(...refusals.slice().reverse().map((x) =>
    el("li", {dataset: {code: x.code}, text: [x.room, ago(x.at),
      x.box ? t("rooms.refused_game", {box: x.box, game: x.game ?? "—"}) : "",
      S.lang === "en" ? x.en : x.ru || x.en,
      x.count > 1 ? t("rooms.times", {n: x.count}) : ""].filter(Boolean).join(" · ")})));
}

function renderRoom(st) {
  $r("room").hidden = false;
  const a = st.assignment;
  $r("assignment").textContent = a ? t("rooms.assigned", {battle: a.battle, stage: a.stage || "",
                                                          players: (a.players || []).join(", ")})
                                   : t("rooms.no_assignment");
  $r("start-battle").disabled = !a;
  $r("unacked").textContent = t("rooms.unacknowledged", {n: st.unacknowledged});
  $r("reconnect").hidden = !st.taken_over;
  $r("director-refused").replaceChildren(...(st.director_refused || []).map((r) =>
    el("li", {text: t("rooms.director_refused", {game: r.game, why: S.lang === "en" ? r.en : r.ru || r.en})})));
  $r("results").replaceChildren(...(st.games || []).map((g) => el("p", {},
    el("a", {href: "/admin/rooms/result/" + g.game + ".json",
             text: t("rooms.download_result", {battle: g.battle, game: g.game})}),
    g.result_acked ? " · " + t("rooms.result_acknowledged") : "")));
}

let shownStatus = null;  // the admin page's last status, drawn again as its times age

function renderAdmin(st) {
  shownStatus = st;
  $r("link-state").textContent = st.role ? linkText(st) : t("rooms.not_in_tournament");
  document.body.dataset.link = st.connected ? "up" : "down";
  if (st.role === "director") renderDirector(st);
  else if (st.role === "room") renderRoom(st);
  else $r("choose").hidden = false;
}

async function adminTick() {
  try { renderAdmin(await fetchStatus()); } catch (_) { $r("link-state").textContent = t("common.offline"); }
}

function adminPage() {
  $r("start-battle")?.addEventListener("click", async () => {
    const res = await post("/rooms/start");
    $r("start-result").textContent = res.ok ? t("rooms.started") : refusalText(res);
    if (res.ok) setTimeout(() => { location.href = "/host"; }, 600);
  });
  $r("reconnect")?.addEventListener("click", async () => {
    await post("/rooms/reconnect");
    adminTick();
  });
  document.querySelectorAll("form[data-action]").forEach((form) => {
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const data = Object.fromEntries(new FormData(form));
      data.action = form.dataset.action;
      const res = await post("/admin/rooms/setup", data);
      const out = form.id === "add-room" ? $r("join-code") : $r("setup-result");
      out.hidden = false;
      if (form.id === "add-room" && res.ok) {
        $r("join-qr").src = "/admin/rooms/join/" + encodeURIComponent(res.room) + ".svg";
        $r("join-qr").hidden = false;
      }
      out.textContent = !res.ok ? refusalText(res)
        : res.code ? t("rooms.join_code", {room: res.room, code: res.code, host: res.host, port: res.port})
        : t("rooms.saved");
      adminTick();
    });
  });
  $r("import")?.addEventListener("submit", async (e) => {
    e.preventDefault();
    const res = await fetch("/admin/rooms/import", {method: "POST", body: new FormData(e.currentTarget)});
    const out = await res.json().catch(() => ({ok: false}));
    $r("import-result").textContent = out.ok ? (out.applied ? t("rooms.imported") : t("rooms.already")) : refusalText(out);
  });
  // Push only: the status once each time the socket (re)connects (and after the page's own
  // actions), then each change as the box tells it ("rooms_link"); the clock only ages the
  // "… s ago" texts of what is shown.
  const socket = connect({role: "admin"}, () => {});
  socket.on("connect", adminTick);
  socket.on("rooms_link", (st) => { renderAdmin(st); document.body.dataset.pushed = String((Number(document.body.dataset.pushed) || 0) + 1); });
  setInterval(() => { if (shownStatus) renderAdmin(shownStatus); }, 1000);
}

// --- the director's TV ----------------------------------------------------------------

const boardRooms = {};

function renderBoard() {
  $r("live").replaceChildren(...Object.values(boardRooms).sort((a, b) => a.room.localeCompare(b.room))
    .map((r) => el("article", {class: "rooms-card", dataset: {room: r.room, battle: r.battle || ""}},
      el("h2", {text: `${r.room}${r.battle ? " — " + r.battle : ""}`}),
      el("ol", {class: "rooms-scores"}, ...(r.players || []).map((p, i) =>
        el("li", {class: r.answering === i ? "answering" : null, text: `${p.name}: ${p.score}`}))),
      el("p", {class: "rooms-theme", text: r.theme ? `${r.theme} · ${r.value ?? ""}` : ""}))));
}

function renderBracket(bracket) {
  if (!bracket || !bracket.battles) return;
  $r("bracket").replaceChildren(...bracket.battles.map((b) => el("div",
    {class: "rooms-battle" + (b.winner ? " done" : b.room ? " playing" : ""), dataset: {battle: b.id}},
    el("strong", {text: `${b.stage} ${b.id}`}),
    el("span", {text: b.players.map((p) => p ?? "…").join(" · ")}),
    el("span", {text: b.winner ? "→ " + b.winner : b.room || ""}))));
}

async function boardTick() {
  try {
    const st = await fetchStatus();
    if (st.broker) $r("broker-address").textContent = `${st.broker.host}:${st.broker.port}`;
    for (const r of st.rooms || []) boardRooms[r.room] = {...(boardRooms[r.room] || {}), ...r};
    renderBoard();
    renderBracket(st.bracket);
  } catch (_) { /* the next tick tries again */ }
}

function boardPage() {
  // Push only: the whole picture once each time the socket (re)connects, then every change
  // as the director applies it ("rooms_live", with the bracket when a result moved it).
  const socket = connect({role: "board"}, () => {});
  socket.on("connect", boardTick);
  socket.on("rooms_live", (msg) => {
    boardRooms[msg.room] = {...(boardRooms[msg.room] || {}), ...msg.live};
    renderBoard();
    document.body.dataset.liveSeq = String(msg.seq);
    if (msg.bracket) renderBracket(msg.bracket);
  });
}

if (document.body.classList.contains("page-rooms-board")) boardPage();
else adminPage();
