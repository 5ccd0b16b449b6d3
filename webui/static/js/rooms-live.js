// The rooms link on screens that are not its own (docs/rooms.md):
// - on the tournament's bracket TV (the director's box): each battle a room is playing
//   shows that room's live scores, theme and value and who is answering, pushed on
//   Socket.IO ("rooms_live") as soon as the director applied the room's events;
// - on a room box's host tablet: a banner while the link to the director is down (the
//   battle goes on; what the director has not acknowledged is sent when it is back), or
//   the director refused a game; pushed on Socket.IO ("rooms_link") as the link changes.
"use strict";

(function () {
  const board = document.getElementById("tourney-board");
  const banner = document.getElementById("rooms-link");

  if (banner) {
    function showLink(st) {
      const down = st.role === "room" && !st.connected;
      const refused = st.role === "room" ? (st.director_refused || []) : [];
      const lines = [];
      if (down) lines.push(st.taken_over ? t("rooms.taken_over")
        : st.refused ? t("rooms.link_refused", {why: st.refused})
        : t("rooms.host_link_down", {n: st.unacknowledged}));
      for (const r of refused) lines.push(t("rooms.director_refused", {game: r.game, why: S.lang === "en" ? r.en : r.ru || r.en}));
      banner.hidden = lines.length === 0;
      banner.textContent = lines.join(" ");
      banner.dataset.refused = String(refused.length);
      document.body.dataset.roomsLink = st.role === "room" ? (st.connected ? "up" : "down") : "";
    }
    function fetchLink() {
      fetch("/rooms/status.json", {cache: "no-store"}).then((r) => r.json()).then(showLink)
        .catch(() => { /* the offline banner already says the box is unreachable */ });
    }
    // Pushed by the box as the link changes ("rooms_link"), and read once per (re)connection
    // of the host's socket: what changed while it was away.
    const sock = window.svoyakSocket || connect({role: "host"}, () => {});
    sock.on("rooms_link", showLink);
    sock.on("connect", fetchLink);
    if (sock.connected) fetchLink();
  }

  if (!board) return;
  const live = {}; // battle id -> the room's live battle

  function paint() {
    for (const li of board.querySelectorAll("li.battle[data-battle]")) {
      const l = live[li.dataset.battle];
      let line = li.querySelector(".battle-live");
      if (!l || !l.players || li.classList.contains("done")) {
        if (line) line.hidden = true;
        continue;
      }
      const answering = l.answering == null ? null : (l.players[l.answering] || {}).name;
      for (const seat of li.querySelectorAll("li.seat")) {
        const name = (seat.querySelector(".who") || {}).textContent;
        const p = l.players.find((x) => x.name === (name || "").trim());
        const score = seat.querySelector(".score");
        if (p && score) score.textContent = String(p.score);
        seat.classList.toggle("answering", !!p && p.name === answering);
      }
      if (!line) {
        line = el("p", {class: "battle-live"});
        li.appendChild(line);
      }
      line.hidden = false;
      line.textContent = [t("rooms.in_room", {room: l.room}),
        l.theme ? `${l.theme}${l.value ? " · " + l.value : ""}` : "",
        answering ? t("rooms.answering", {name: answering}) : ""].filter(Boolean).join(" · ");
    }
  }

  // The page refreshes its bracket by replacing the children of #tourney-board: paint again.
  new MutationObserver(paint).observe(board, {childList: true});
  const socket = connect({role: "board"}, () => {});
  socket.on("rooms_live", (msg) => {
    if (msg.live && msg.live.battle) live[msg.live.battle] = {...msg.live, room: msg.room};
    paint();
    document.body.dataset.roomsLive = String(msg.seq);
  });
  // The picture once per (re)connection: what was pushed while the socket was away.
  socket.on("connect", () => fetch("/rooms/status.json", {cache: "no-store"})
    .then((r) => r.json()).then((st) => {
      for (const r of st.rooms || []) if (r.battle) live[r.battle] = {...(live[r.battle] || {}), ...r};
      paint();
    }).catch(() => {}));
})();
