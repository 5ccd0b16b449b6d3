// The tournament's TV pages (bracket, call, podium). The box pushes "tourney" on
// Socket.IO when the tournament changes (and once per connection): the page then reads
// itself once and swaps its #tourney-board. The bracket holds every page of the stage in
// play and turns them in place every few seconds. Nothing polls; the page is complete
// without this script, it only keeps it fresh.
"use strict";

(function () {
  const main = document.getElementById("tourney-board");
  if (!main) return;
  const every = Math.max(3, Number(main.dataset.autopage) || 12) * 1000;
  let shown = 0;

  function show() {
    const sheets = main.querySelectorAll(".sheet");
    if (!sheets.length) return;
    shown %= sheets.length;
    sheets.forEach((s, k) => { s.hidden = k !== shown; });
    const label = main.querySelector(".page-of");
    if (label) label.textContent = sheets[shown].dataset.label || "";
  }

  let latest = null;   // the change the page shows
  let reading = false;  // one read at a time; a change during it reads again after
  let again = false;
  async function redraw() {
    if (reading) { again = true; return; }
    reading = true;
    const v = latest;
    try {
      const resp = await fetch(location.href, {cache: "no-store"});
      if (resp.ok) {
        const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
        const fresh = doc.getElementById("tourney-board");
        if (fresh) {
          main.innerHTML = fresh.innerHTML;
          main.className = fresh.className;
          show();
          document.body.dataset.tourney = String(v);  // what the page shows (tests read it)
        }
      }
    } catch (e) {
      // the socket's own banner says the box is unreachable; the next change reads again
    } finally {
      reading = false;
      if (again) { again = false; redraw(); }
    }
  }

  const socket = connect({role: "tourney"}, () => {});
  socket.on("tourney", (msg) => {
    if (msg.v === latest) return;
    latest = msg.v;
    redraw();
  });
  setInterval(() => {
    if (main.querySelectorAll(".sheet").length > 1) { shown += 1; show(); }
  }, every);
})();
