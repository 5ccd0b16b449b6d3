"""The scripted demo game of the TV engine: docs/examples/tv-demo.jsonl is generated here.

Run ``python tests/tv_demo_script.py`` to rewrite the example; test_tv_demo checks that the
file is what this script produces and replays it through ``svoyak replay``. The game, move
by move (scores are worked out by hand in test_tv_demo):

Round 1 — the host picks Аня. Столицы: Аня takes all five. Животные: Борис 100, 200; the cat
(300, a price of 100..500) goes from Борис to Вера, who takes 500 and misses; Вера misses
400 and Аня gets it after the re-arm; nobody takes 500. Литература: Борис false-starts,
Вера takes all five. Кухня: Борис takes all five. Музыка: Аня 100–300; the auction (400):
Аня 400, Вера all-in 600, Борис all-in 1800, Вера cannot go on, Аня passes, Борис misses;
Вера takes 500. Физика: 100–300 unanswered, everyone misses 400, Аня misses 500 and Борис
gets it (the host first taps "wrong", undoes it, then "right").

Round 2 — Борис is last and chooses. Спорт: Борис takes all five. История: Аня 200, 400;
Вера 600; the auction (800): Вера 800, Аня 1000, Вера and Борис pass, Аня right; Борис
1000. Русский язык: nobody 200; Вера 400; Борис misses 600, Аня gets it; the cat (800,
200 or 1000) from Аня to Борис, who picks 1000 and is right; Аня 1000. Космос: Аня 200,
Вера 400, 600, 800 and the no-risk 1000 (doubled). Кино: Аня misses 600, Борис takes 1000,
the rest unanswered. Открытия: Борис 200, 400; Вера 600; Аня 800, 1000.

Round 3 — Борис and Вера tie for last; the host picks Вера. Города: Вера 300, 600; Аня
900; the cat (1500 fixed) from Аня to Вера, wrong; Борис 1500. Химия: nobody 300; Борис
600; everyone misses 900; the auction (1200): Борис 1200, Вера 2000, Аня passes, Борис
2500, Вера passes, Борис right; nobody 1500. Мифология: unanswered, 900 skipped. Живопись:
Аня 300, 600; Вера 900, 1200; Аня misses 1500 (later rejudged right). Математика:
unanswered. Реки: Борис 300, 600; nobody 900; Вера 1200, 1500.

Final — Аня (lowest), Вера, Борис remove six themes in turn; «Мировая литература» stays.
Bets: Аня 8600 (all-in), Борис 8000, Вера 2000. The host reveals Вера (right), Борис
(wrong), Аня (right).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MS = 1_000_000
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "tv-demo.jsonl"
A, B, V = 0, 1, 2
REACTION_MS = {A: 180, B: 210, V: 240}


class Script:
    def __init__(self) -> None:
        self.t = 1_000 * MS
        self.lines: list[dict[str, Any]] = []
        self.judgements = 0

    def cmd(self, type_: str, gap_ms: int = 1500, **args: Any) -> None:
        self.t += gap_ms * MS
        self.lines.append({"type": type_, "t_ns": self.t, **args})

    def comment(self, text: str) -> None:
        self.lines.append({"#": text})

    def press(self, player: int, after_ms: int) -> None:
        """A press stamped `after_ms` after the last line, delivered 2 ms later."""
        t = self.t + after_ms * MS
        self.lines.append({"type": "press", "t_ns": t, "at_ns": t + 2 * MS, "player": player,
                           "by": "button"})

    def judge(self, verdict: str) -> int:
        self.cmd("judge", 3000, verdict=verdict)
        self.judgements += 1
        return self.judgements - 1

    def question(self, theme: int, q: int, *answers: tuple[int, str],
                 false_start: int | None = None) -> int | None:
        """A normal question; answers are (player, verdict) in press order. Returns the ref
        of the last judgement, if any."""
        self.cmd("choose", 2000, cell=f"{theme}:{q}")
        if false_start is not None:
            self.press(false_start, 4000)
        self.cmd("lamp", 5000)
        ref = None
        answered = 0
        for player, verdict in answers:
            if answered:
                self.cmd("lamp", 2000)
            self.press(player, REACTION_MS[player])
            others = [p for p in (A, B, V) if p != player and p not in self.done]
            if others:  # a beaten press, later than the winner's
                self.press(others[0], REACTION_MS[player] + 40)
            self.done.add(player)
            ref = self.judge(verdict)
            answered += 1
            if verdict == "right":
                break
        self.done = set()
        if (not answers or answers[-1][1] == "wrong") and answered < 3:
            self.cmd("close", 3000)
        return ref

    done: set[int] = set()


def build() -> list[dict[str, Any]]:
    s = Script()
    s.lines.append({"type": "new_game", "rules": "tv", "setup": {
        "players": ["Аня", "Борис", "Вера"], "package": "demo-tv", "preset": "tv"}})

    s.comment("Round 1: the host picks the first chooser")
    s.cmd("pick_chooser", player=A)
    for q in range(5):
        s.question(0, q, (A, "right"))
    s.question(1, 0, (B, "right"))
    s.question(1, 1, (B, "right"))
    s.comment("cat in the bag: Борис must give it away; Вера picks the value 500")
    s.cmd("choose", cell="1:2")
    s.cmd("give", player=V)
    s.cmd("cat_price", value=500)
    s.judge("wrong")
    s.question(1, 3, (V, "wrong"), (A, "right"))
    s.question(1, 4)
    s.question(2, 0, (V, "right"), false_start=B)
    for q in range(1, 5):
        s.question(2, q, (V, "right"))
    for q in range(5):
        s.question(3, q, (B, "right"))
    for q in range(3):
        s.question(4, q, (A, "right"))
    s.comment("auction: Аня 400, Вера all-in 600, Борис all-in 1800, Аня passes")
    s.cmd("choose", cell="4:3")
    s.cmd("bid", player=A, amount=400)
    s.cmd("all_in", player=V)
    s.cmd("bid", player=B, amount=1800)
    s.cmd("pass", player=A)
    s.judge("wrong")
    s.question(4, 4, (V, "right"))
    for q in range(3):
        s.question(5, q)
    s.question(5, 3, (A, "wrong"), (B, "wrong"), (V, "wrong"))
    s.comment("a wrong tap on the tablet, undone")
    s.cmd("choose", cell="5:4")
    s.cmd("lamp", 5000)
    s.press(A, 150)
    s.judge("wrong")
    s.cmd("lamp", 2000)
    s.press(B, 200)
    s.judge("wrong")
    s.cmd("undo")
    s.judgements -= 1
    s.judge("right")

    s.comment("Round 2: Борис is last and chooses")
    for q in range(5):
        s.question(1, q, (B, "right"))
    s.question(0, 0, (A, "right"))
    s.question(0, 1, (A, "right"))
    s.question(0, 2, (V, "right"))
    s.cmd("choose", cell="0:3")
    s.cmd("bid", player=V, amount=800)
    s.cmd("bid", player=A, amount=1000)
    s.cmd("pass", player=V)
    s.cmd("pass", player=B)
    s.judge("right")
    s.question(0, 4, (B, "right"))
    s.question(3, 0)
    s.question(3, 1, (V, "right"))
    s.question(3, 2, (B, "wrong"), (A, "right"))
    s.cmd("choose", cell="3:3")
    s.cmd("give", player=B)
    s.cmd("cat_price", value=1000)
    s.judge("right")
    s.question(3, 4, (A, "right"))
    s.question(4, 0, (A, "right"))
    for q in range(1, 4):
        s.question(4, q, (V, "right"))
    s.comment("no risk: asked to the opener, a right answer counts double")
    s.cmd("choose", cell="4:4")
    s.judge("right")
    s.question(2, 0)
    s.question(2, 1)
    s.question(2, 2, (A, "wrong"))
    s.question(2, 3)
    s.question(2, 4, (B, "right"))
    s.question(5, 0, (B, "right"))
    s.question(5, 1, (B, "right"))
    s.question(5, 2, (V, "right"))
    s.question(5, 3, (A, "right"))
    s.question(5, 4, (A, "right"))

    s.comment("Round 3: Борис and Вера tie for last; the host picks Вера")
    s.cmd("pick_chooser", player=V)
    s.question(5, 0, (V, "right"))
    s.question(5, 1, (V, "right"))
    s.question(5, 2, (A, "right"))
    s.cmd("choose", cell="5:3")
    s.cmd("give", player=V)
    s.judge("wrong")
    s.question(5, 4, (B, "right"))
    s.question(0, 0)
    s.question(0, 1, (B, "right"))
    s.question(0, 2, (B, "wrong"), (V, "wrong"), (A, "wrong"))
    s.cmd("choose", cell="0:3")
    s.cmd("bid", player=B, amount=1200)
    s.cmd("bid", player=V, amount=2000)
    s.cmd("pass", player=A)
    s.cmd("bid", player=B, amount=2500)
    s.cmd("pass", player=V)
    s.judge("right")
    s.question(0, 4)
    s.question(1, 0)
    s.question(1, 1)
    s.cmd("choose", cell="1:2")
    s.cmd("skip")
    s.question(1, 3)
    s.question(1, 4)
    s.question(2, 0, (A, "right"))
    s.question(2, 1, (A, "right"))
    s.question(2, 2, (V, "right"))
    s.question(2, 3, (V, "right"))
    missed = s.question(2, 4, (A, "wrong"))
    for q in range(5):
        s.question(3, q)
    s.comment("the host corrects a judgement from Живопись")
    s.cmd("rejudge", ref=missed, verdict="right")
    s.question(4, 0, (B, "right"))
    s.question(4, 1, (B, "right"))
    s.question(4, 2)
    s.question(4, 3, (V, "right"))
    s.question(4, 4, (V, "right"))

    s.comment("Final: themes removed from the lowest score: Аня, Вера, Борис, ...")
    for theme in range(6):
        s.cmd("remove_theme", theme=theme)
    s.cmd("bet", player=A, amount=8600)
    s.cmd("bet", player=B, amount=8000)
    s.cmd("bet", player=V, amount=2000)
    s.cmd("write", 60000, player=A, text="Улисс")
    s.cmd("write", player=B, text="Дублинцы")
    s.cmd("write", player=V, text="Улисс")
    s.cmd("judge", 3000, player=V, verdict="right")
    s.cmd("judge", 3000, player=B, verdict="wrong")
    s.cmd("judge", 3000, player=A, verdict="right")
    s.cmd("end_game", 10000)
    return s.lines


def render(lines: list[dict[str, Any]]) -> str:
    out = []
    for line in lines:
        if "#" in line:
            out.append(f"# {line['#']}")
        else:
            out.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    EXAMPLE.write_text(render(build()), encoding="utf-8")
    print(EXAMPLE)
