// Host screen during a tournament battle: the stage and battle number («1/27 финала · Бой 12»)
// next to the phase, from /tournament/api/caption (empty when the current game is not a
// battle of the tournament); host.js reads it as `window.tourney` for the end of a battle.
"use strict";

(function () {
  const box = document.getElementById("tourney-caption");
  if (!box) return;
  async function refresh() {
    try {
      const resp = await fetch("/tournament/api/caption", {cache: "no-store"});
      const data = resp.ok ? await resp.json() : {};
      box.textContent = data.text || "";
      box.hidden = !data.text;
      // The host console's end state follows the battle (the next battle, not a new game).
      const sig = JSON.stringify(data);
      if (sig !== refresh.sig) {
        refresh.sig = sig;
        window.tourney = data;
        document.dispatchEvent(new Event("svoyak:tourney"));
      }
    } catch (e) { /* the offline banner says it; keep the last caption */ }
  }
  refresh();
  setInterval(refresh, 3000);
})();
