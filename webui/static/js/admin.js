// The admin page: package upload with a progress bar, preview and delete.
"use strict";

const $ = (id) => document.getElementById(id);

$("upload").addEventListener("submit", (e) => {
  e.preventDefault();
  const file = $("file").files[0];
  if (!file) return;
  const form = new FormData();
  form.append("file", file);
  const xhr = new XMLHttpRequest();
  const bar = $("progress");
  bar.hidden = false;
  bar.value = 0;
  xhr.upload.addEventListener("progress", (ev) => { if (ev.lengthComputable) bar.value = ev.loaded / ev.total; });
  xhr.addEventListener("load", () => {
    let res = {};
    try { res = JSON.parse(xhr.responseText); } catch (_) { res = {ok: false, error: xhr.statusText}; }
    $("upload-result").textContent = res.ok ? t("admin.imported") : (t("admin.import_failed") + ": " + (res.error || xhr.status));
    if (res.ok) setTimeout(() => location.reload(), 800);
  });
  xhr.addEventListener("error", () => { $("upload-result").textContent = t("common.offline"); });
  xhr.open("POST", "/admin/packages");
  xhr.send(form);
});

document.querySelectorAll("#packages tr").forEach((row) => {
  const id = row.dataset.id;
  row.querySelector(".preview")?.addEventListener("click", async () => {
    const res = await fetch("/admin/packages/" + encodeURIComponent(id));
    $("preview").hidden = false;
    $("preview").textContent = JSON.stringify(await res.json(), null, 1).slice(0, 20000);
  });
  row.querySelector(".delete")?.addEventListener("click", async (ev) => {
    const b = ev.currentTarget;
    if (!b.classList.contains("confirming")) { b.classList.add("confirming"); b.textContent = t("host.confirm", {what: t("admin.delete")}); return; }
    const res = await fetch("/admin/packages/" + encodeURIComponent(id) + "/delete", {method: "POST"});
    if (res.ok) row.remove();
  });
});
