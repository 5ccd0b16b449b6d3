// The printable protocol of one game: standings, per-player statistics with the reaction
// chart, and every verdict in order (both engines' summaries).
"use strict";

const data = JSON.parse(document.getElementById("protocol-data").textContent);
const v = data.view || {};
const sum = data.summary || {};
const r = results(data);

document.getElementById("protocol-meta").textContent = [
  v.package ? t("host.package") + ": " + v.package : "",
  data.finished ? t("host.finished") : t("protocol.unfinished"),
  // Before the end nobody has won yet: the standings say who leads.
  data.finished && r.winners.length ? t("board.winner") + ": " + r.winners.map((s) => playerName(v, s)).join(", ") : "",
].filter(Boolean).join(" · ");

const standings = document.getElementById("standings");
standings.append(el("tr", {}, el("th", {scope: "col", text: t("protocol.place")}),
  el("th", {scope: "col", text: t("stats.player")}), el("th", {scope: "col", text: t("host.scores")})));
for (const st of r.standings) {
  standings.append(el("tr", {}, el("td", {text: String(st.place)}), el("td", {text: st.name}), el("td", {class: "num", text: num(st.score)})));
}
document.getElementById("protocol-stats").append(statsView(data));

// Verdicts: the TV summary lists judgements; the battle's lists questions with theirs.
const verdicts = document.getElementById("verdicts");
verdicts.append(el("tr", {}, el("th", {scope: "col", text: "№"}), el("th", {scope: "col", text: t("protocol.where")}),
  el("th", {scope: "col", text: t("stats.player")}), el("th", {scope: "col", text: t("arg.verdict")}),
  el("th", {scope: "col", text: t("stats.points")})));
let n = 0;
for (const q of sum.questions || []) {
  if (q.judgements) {
    const where = `${q.theme}, ${q.value}`;
    if (!q.judgements.length) verdicts.append(el("tr", {}, el("td", {text: String(++n)}), el("td", {text: where}), el("td", {text: "—"}), el("td", {text: t("protocol.nobody")}), el("td", {})));
    for (const j of q.judgements) {
      verdicts.append(el("tr", {}, el("td", {text: String(++n)}), el("td", {text: where}),
        el("td", {text: playerName(v, j.player)}), el("td", {text: verdictText(j)}), el("td", {class: "num", text: signed(j.points)})));
    }
  } else {
    // The round, the question's theme and value, its kind (a cat, an auction, the final).
    const question = q.theme ? (q.value != null && q.kind !== "final" ? `«${q.theme}», ${q.value}` : `«${q.theme}»`) : "";
    // The final's round already says «финал»: its kind is not repeated.
    const kind = q.kind && q.kind !== "normal" && q.kind !== "final" ? t("kind." + q.kind) : "";
    const where = [roundName(q.round), question, kind].filter(Boolean).join(", ");
    verdicts.append(el("tr", {}, el("td", {text: String(++n)}), el("td", {text: where}),
      el("td", {text: playerName(v, q.player)}), el("td", {text: verdictText(q)}), el("td", {class: "num", text: signed(q.delta)})));
  }
}
// The host's score corrections, after the verdicts: with them the column adds up to the score.
for (const c of sum.corrections || []) {
  verdicts.append(el("tr", {class: "correction"}, el("td", {text: String(++n)}),
    el("td", {text: [c.round ? roundName(c.round) : "", t("protocol.correction")].filter(Boolean).join(", ")}),
    el("td", {text: playerName(v, c.player)}), el("td", {text: "—"}), el("td", {class: "num", text: signed(c.points)})));
}

// A verdict of a question removed as flawed stays in the protocol, marked: it counts nothing.
function verdictText(j) {
  const word = t("verdict." + j.verdict);
  return j.voided ? `${word} (${t("protocol.voided")})` : word;
}
document.getElementById("print").addEventListener("click", () => window.print());
