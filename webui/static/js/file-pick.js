// A file chooser in the page's language: the native input is hidden under a labelled
// button, and the chosen file's name replaces «Файл не выбран» (written by the server).
"use strict";

for (const input of document.querySelectorAll("input[type=file][data-file-name]")) {
  const out = document.getElementById(input.dataset.fileName);
  const none = out.textContent;
  input.addEventListener("change", () => {
    out.textContent = input.files.length ? [...input.files].map((f) => f.name).join(", ") : none;
  });
}
