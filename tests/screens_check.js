// Layout checks run inside a page (tests/test_screens.py): what a nervous host, a TV at 5 m
// and a phone need to see, without scrolling, and text that neither overlaps nor is cut.
// Returns a list of problems (strings); empty when the page is fine.
(namespaces) => {
  const problems = [];
  const W = innerWidth, H = innerHeight;
  const v = window.lastView || {};
  const view = v.view || {};
  const role = document.body.className.replace("page-", "");

  const visibleBox = (node) => {
    if (!node || !node.isConnected) return null;
    const cs = getComputedStyle(node);
    if (cs.display === "none" || cs.visibility === "hidden" || node.closest("[hidden]")) return null;
    const r = node.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? r : null;
  };
  const onTop = (node, r) => {
    const x = Math.min(Math.max(r.left + r.width / 2, 0), W - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), H - 1);
    const hit = document.elementFromPoint(x, y);
    return !!hit && (hit === node || node.contains(hit) || hit.contains(node));
  };
  const inView = (r) => r.top >= -1 && r.left >= -1 && r.bottom <= H + 1 && r.right <= W + 1;
  const need = (what, selector) => {
    const node = document.querySelector(selector);
    const r = visibleBox(node);
    if (!r) { problems.push(`${what} (${selector}) is not shown`); return; }
    if (!inView(r)) problems.push(`${what} (${selector}) is outside the screen: ${JSON.stringify([r.top, r.bottom])}`);
    else if (!onTop(node, r)) problems.push(`${what} (${selector}) is covered`);
  };

  if (document.documentElement.scrollWidth > W + 1) {
    problems.push(`horizontal scroll: ${document.documentElement.scrollWidth} > ${W}`);
  }
  const dialog = [...document.querySelectorAll(".dialog")].some((d) => visibleBox(d));
  const running = v.game != null && !v.finished && view.stage !== "over" && view.phase !== "finished";
  const answering = view.answering != null || (view.engine === "tv" && view.phase === "answering");
  if (role === "host" && !dialog && v.game != null) {
    if (document.querySelector("[data-primary]")) need("the primary action", "[data-primary]");
    if (running) need("the lamp", "#lamp");
    if (answering) need("the answerer's name", "#answerer-name");
  }
  if (role === "board" && v.game != null && !(v.ui && (v.ui.race_shown || v.ui.paused))) {
    if (running) need("the lamp", "#lamp");
    if (answering) need("the answerer's name", "#answerer-name");
    if (!running) need("the winner", "#winner-name");
  }
  if (role === "play" && v.seat != null && v.game != null) {
    need("the score", "#my-score");
    if (running && !document.querySelector("#my-actions:not([hidden])")) need("the status", "#my-status");
    if (document.querySelector("#my-actions:not([hidden])")) need("the form", "#my-actions button[type=submit], #my-actions .btn");
    if (!running) need("the result", "#my-place");
  }

  // Every visible piece of text: inside its clipping box, and apart from every other.
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    if (!text) continue;
    const parent = n.parentElement;
    if (!parent || parent.closest("script, style, [hidden], option, select, title") || !visibleBox(parent)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    let r = range.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    if (!onTop(parent, r)) continue;  // under an overlay or a dialog
    let clipped = false;
    for (let a = parent; a && a !== document.body; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.overflowX === "visible" && cs.overflowY === "visible") continue;
      const box = a.getBoundingClientRect();
      const ellipsis = cs.textOverflow === "ellipsis" || cs.webkitLineClamp !== "none";
      if (!ellipsis && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 2 || r.bottom > box.bottom + 2)) {
        problems.push(`text cut by its box: «${text.slice(0, 40)}» in ${a.tagName}.${a.className}`);
        clipped = true;
      }
      r = new DOMRect(Math.max(r.left, box.left), Math.max(r.top, box.top),
        Math.max(0, Math.min(r.right, box.right) - Math.max(r.left, box.left)),
        Math.max(0, Math.min(r.bottom, box.bottom) - Math.max(r.top, box.top)));
      break;
    }
    if (!clipped && (r.right > W + 1 || r.left < -1)) problems.push(`text outside the screen: «${text.slice(0, 40)}»`);
    boxes.push({text, r, parent});
    // A raw catalogue key on screen («kind.final»): the catalogue lacks it.
    for (const token of text.split(/[\s,;:()«»"'!?…—]+/)) {
      const m = /^([a-z]+)\.[a-z_]+(\.[a-z_]+)*$/.exec(token);
      if (m && namespaces.includes(m[1])) problems.push(`raw catalogue key on screen: ${token}`);
    }
  }
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r, b = boxes[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 2 && h > 2) {
        problems.push(`text overlaps: «${boxes[i].text.slice(0, 30)}» and «${boxes[j].text.slice(0, 30)}»`);
      }
    }
  }
  return problems;
}
