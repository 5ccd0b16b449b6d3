// The admin page: package upload with a progress bar, a preview of a package as a board per
// round, delete, and the live button test (each seat's presses as they happen).
"use strict";

const $ = (id) => document.getElementById(id);

$("upload").addEventListener("submit", (e) => {
  e.preventDefault();
  const file = $("file").files[0];
  if (!file) { $("upload-result").textContent = t("admin.no_file"); return; }
  const form = new FormData();
  form.append("file", file);
  const xhr = new XMLHttpRequest();
  const bar = $("progress");
  bar.hidden = false;
  bar.value = 0;
  bar.classList.remove("failed", "done");
  bar.setAttribute("aria-label", t("admin.upload_progress"));
  // A refused upload must not leave a full blue bar that reads as success next to the
  // error: the bar turns red (svoyak.css) and says so to a screen reader.
  const failed = () => {
    bar.classList.add("failed");
    bar.setAttribute("aria-label", t("admin.upload_refused"));
  };
  xhr.upload.addEventListener("progress", (ev) => { if (ev.lengthComputable) bar.value = ev.loaded / ev.total; });
  xhr.addEventListener("load", () => {
    let res = {};
    try { res = JSON.parse(xhr.responseText); } catch (_) { res = {ok: false}; }
    const result = $("upload-result");
    result.classList.toggle("failed", !res.ok);
    // The package checker's detail is technical (and in English): it follows our own words.
    result.textContent = res.ok ? t("admin.imported")
      : t("admin.import_failed") + (res.error ? " — " + res.error : xhr.status === 413 ? " — " + t("admin.too_big") : "");
    // The new package joins the list here (and on the host's start screen, pushed by the
    // box) without a reload, so the message stays beside the form.
    if (res.ok) { bar.classList.add("done"); addPackageRow(res.package); } else failed();
  });
  xhr.addEventListener("error", () => {
    failed();
    $("upload-result").classList.add("failed");
    $("upload-result").textContent = t("common.offline");
  });
  xhr.open("POST", "/admin/packages");
  xhr.send(form);
});

// A package as the host will see it: one small board per round, values in their theme's
// row, special questions marked with their kind, and the counts.
function previewBoard(pkg) {
  const box = $("preview");
  box.replaceChildren(el("h3", {text: pkg.name || ""}));
  for (const r of pkg.rounds || []) {
    const qs = r.themes.flatMap((th) => th.questions);
    const kinds = {};
    for (const q of qs) if (q.kind && q.kind !== "normal") kinds[q.kind] = (kinds[q.kind] || 0) + 1;
    const counts = [t("admin.preview_counts", {themes: r.themes.length, questions: qs.length}),
      ...Object.entries(kinds).map(([k, n]) => `${t("kind." + k)}: ${n}`)].join(" · ");
    box.append(el("h4", {}, r.name, " ", r.final ? el("span", {class: "muted", text: "(" + t("kind.final") + ")"}) : null),
      el("p", {class: "muted", text: counts}));
    const cols = Math.max(1, ...r.themes.map((th) => th.questions.length));
    const grid = el("div", {class: "preview-grid"});
    grid.style.setProperty("--cols", r.final ? 1 : cols);
    for (const th of r.themes) {
      grid.append(el("div", {class: "pv-theme", text: th.name}));
      if (r.final) { grid.append(el("div", {class: "pv-cell", text: "—"})); continue; }
      for (let i = 0; i < cols; i++) {
        const q = th.questions[i];
        if (!q) { grid.append(el("div", {class: "pv-cell empty"})); continue; }
        const special = q.kind && q.kind !== "normal";
        grid.append(el("div", {class: "pv-cell" + (special ? " special" : ""), title: q.text || "",
          text: num(q.price) + (special ? " · " + t("kind." + q.kind) : "")}));
      }
    }
    box.append(grid);
  }
  const warned = pkg.warning_texts || [];
  if (warned.length) {
    box.append(el("h4", {text: t("admin.preview_warnings", {n: warned.length})}),
      el("ul", {class: "preview-warnings"}, ...warned.map((w) => el("li", {text: w}))));
  }
  box.hidden = false;
  box.scrollIntoView({block: "nearest"});
}

function addPackageRow(p) {
  if (!p || document.querySelector(`#packages tr[data-id="${CSS.escape(String(p.id))}"]`)) return;
  const row = el("tr", {dataset: {id: String(p.id)}}, el("td", {text: p.name || ""}),
    el("td", {}, el("button", {class: "btn rare preview", type: "button", text: t("admin.preview")}), " ",
      el("button", {class: "btn rare delete", type: "button", text: t("admin.delete")})));
  $("packages").append(row);
  bindPackageRow(row);
}

function bindPackageRow(row) {
  const id = row.dataset.id;
  row.querySelector(".preview")?.addEventListener("click", async () => {
    const res = await fetch("/admin/packages/" + encodeURIComponent(id));
    if (!res.ok) { $("upload-result").textContent = t("admin.preview_failed"); return; }
    previewBoard(await res.json());
  });
  row.querySelector(".delete")?.addEventListener("click", async (ev) => {
    const b = ev.currentTarget;
    if (!b.classList.contains("confirming")) { b.classList.add("confirming"); b.textContent = t("host.confirm", {what: t("admin.delete")}); return; }
    const res = await fetch("/admin/packages/" + encodeURIComponent(id) + "/delete", {method: "POST"});
    if (res.ok) row.remove();
  });
}
document.querySelectorAll("#packages tr").forEach(bindPackageRow);

// A saved setting's message («Сохранено.», or why it was refused) stands beside its form:
// the page opens there, the message focused so that a screen reader reads it.
const message = $("message");
if (message) {
  message.scrollIntoView({block: "center"});
  message.focus({preventScroll: true});
}

// The button test: each seat says "press your button" until its count moves.
const seats = document.querySelectorAll("#seat-pins tr[data-seat]");
async function pollButtons() {
  if (document.hidden || !seats.length) return;
  let hw;
  try { hw = await (await fetch("/admin/hardware.json", {cache: "no-store"})).json(); } catch (_) { return; }
  for (const s of hw.seats || []) {
    const row = document.querySelector(`#seat-pins tr[data-seat="${s.seat}"]`);
    if (!row) continue;
    row.querySelector(".presses").textContent = s.presses;
    const ok = s.presses > parseInt(row.dataset.presses, 10);
    row.classList.toggle("tested", ok && !s.stuck);
    row.classList.toggle("stuck", !!s.stuck);
    row.querySelector(".check-cell").textContent = s.stuck ? t("admin.stuck") : ok ? t("admin.button_ok") : t("admin.press_now");
  }
}
if (seats.length) setInterval(pollButtons, 600);

// Game dates in the tablet's own time zone and the page's language («1 дек. 2026 г., 12:39»);
// the server's text (the box's zone) stays if the stamp cannot be read.
for (const tm of document.querySelectorAll("time[datetime]")) {
  const d = new Date(tm.dateTime);
  if (!Number.isNaN(d.getTime())) {
    tm.textContent = d.toLocaleString(S.lang, {dateStyle: "medium", timeStyle: "short"});
  }
}
