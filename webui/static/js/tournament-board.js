// The tournament's TV pages (bracket, call, podium): refresh from the box every few
// seconds, and on the bracket page cycle through the pages of the current stage.
// The page is complete without this script; it only keeps it fresh.
"use strict";

(function () {
  const main = document.getElementById("tourney-board");
  if (!main) return;
  let urls = [];
  try { urls = JSON.parse(main.dataset.urls || "[]"); } catch (e) { urls = []; }
  const every = Math.max(3, Number(main.dataset.autopage) || 10) * 1000;
  let i = Math.max(0, urls.indexOf(location.pathname + location.search));

  async function refresh() {
    const url = urls.length ? urls[i = (i + 1) % urls.length] : location.href;
    try {
      const resp = await fetch(url, {cache: "no-store"});
      if (!resp.ok) return;
      const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      const fresh = doc.getElementById("tourney-board");
      if (fresh) {
        main.innerHTML = fresh.innerHTML;
        main.className = fresh.className;
      }
      document.getElementById("offline")?.setAttribute("hidden", "");
    } catch (e) {
      document.getElementById("offline")?.removeAttribute("hidden");
    }
  }
  setInterval(refresh, every);
})();
