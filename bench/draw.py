"""The draw of a big field: 1,000 entries in 150 teams, and the worst feasible cases.

Cases (1,000 entries: the 1/27's 81 seats, three qualification rounds):
- ``typical``: 150 teams of uneven size, ratings for the top 50 (a draw by lot ignores them);
- ``worst``: twelve teams of 81 — the most a team can have and still be drawn — and 28
  players of their own: every one of the 81 trees holds one player of each big team;
- ``seeded``: the typical field drawn with ``seeded`` (byes for the rated, spread places).

The floor is a bare shuffle of the same entries with the same `random()` lot (what any draw
must at least do); the bench prints both, their ratio, and the load average. Target (issue
11): under 1 s per draw on the development machine. JSON on the last line.

Usage: python bench/draw.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from typing import Any

from appliance.rules.tournament.draw import Lot, draw
from appliance.rules.tournament.entries import Entry


def typical() -> list[Entry]:
    rng = random.Random(1)
    sizes = [1 + int(rng.paretovariate(1.5)) for _ in range(150)]
    teams = [t for t, s in enumerate(sizes) for _ in range(s)]
    while len(teams) < 1000:
        teams.append(rng.randrange(150))
    teams = teams[:1000]
    rng.shuffle(teams)
    return [Entry(f"Игрок {i}", f"Команда {t}", "", float(2000 - i) if i < 50 else None)
            for i, t in enumerate(teams)]


def worst() -> list[Entry]:
    return [Entry(f"Игрок {i}", f"Гигант {i // 81}" if i < 972 else f"Команда {i}")
            for i in range(1000)]


def floor(entries: list[Entry], seed: int) -> None:
    items = list(range(len(entries)))
    Lot(seed).shuffle(items)


def timed(fn, repeat: int) -> list[float]:  # noqa: ANN001
    out = []
    for k in range(repeat):
        t = time.perf_counter()
        fn(k)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    results: dict[str, Any] = {}
    for name, make, seeded in (("typical", typical, False), ("worst", worst, False),
                               ("seeded", typical, True)):
        entries = make()
        d = draw(entries, 0, seeded=seeded)
        early = d.plan.early
        draws = timed(lambda k, e=entries, sd=seeded: draw(e, k, seeded=sd), args.repeat)
        floors = timed(lambda k, e=entries: floor(e, k), args.repeat)
        med, fmed = statistics.median(draws), statistics.median(floors)
        results[name] = {
            "entries": len(entries), "teams": len({e.team for e in entries}),
            "bracket": d.plan.bracket, "byes": d.plan.byes,
            "qualification": {"battles": sum(x.battles for x in early),
                              "rounds": len(early),
                              "of_two": sum(x.sizes.count(2) for x in early)},
            "draw_ms": {"median": round(med * 1e3, 2), "max": round(max(draws) * 1e3, 2)},
            "floor_ms": {"median": round(fmed * 1e3, 3)},
            "ratio": round(med / fmed, 1),
        }
        r = results[name]
        print(f"{name:>10}: {r['entries']} entries, {r['teams']} teams, bracket {r['bracket']},"
              f" {r['qualification']['battles']} qualification battles in"
              f" {r['qualification']['rounds']} rounds"
              f" ({r['qualification']['of_two']} of two), {r['byes']} byes:"
              f" draw {r['draw_ms']['median']} ms (max {r['draw_ms']['max']}),"
              f" bare shuffle {r['floor_ms']['median']} ms, ratio {r['ratio']}")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    under = all(r["draw_ms"]["max"] < 1000 for r in results.values())
    print(json.dumps({"bench": "draw", "repeat": args.repeat, "under_1s": under,
                      "load": [round(x, 2) for x in load], "cases": results}))


if __name__ == "__main__":
    main()
