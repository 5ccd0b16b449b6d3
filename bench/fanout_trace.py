"""Where the real path's time goes, question by question, from a traced fan-out run.

`bench/fanout.py --trace DIR` leaves, per count of phones, the server's notes
(`webui/tracing.py`: when the loop decided and committed each command, when the notifier
started on it and finished fanning out) and the bench's (just before each press request,
and when each client held the frame naming the answerer), all on CLOCK_MONOTONIC. This
splits each measured question of the real server into:

- ``request``: from just before the HTTP request to the press's stamp (the press path);
- ``settle``: the settle window, from the stamp to the deadline (a rule of the game);
- ``decided``: from the deadline to the loop's decision (its wake-up and the engine, and
  the press's own commit when that fsync ran past the deadline);
- ``commit``: from the decision to the end of its commit (the answerer's fsync);
- ``handoff``: from the commit to the notifier thread starting on the update;
- ``notifier``: building the frames and handing them to Socket.IO;
- ``delivery``: from there to the last client holding its frame (the sockets' writer
  threads, the network, the clients: the same work as the floors');

and prints p50, p90 and max of each, the worst questions, and the fair floor's total for
comparison. The trace slows what it measures; its figures explain, they are not the
bench's. JSON last.

    .venv/bin/python bench/fanout_trace.py DIR/60
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

PARTS = ("request", "settle", "decided", "commit", "handoff", "notifier", "delivery", "total")


def received(seen: list[list[list[float]]], key: list[int]) -> list[float]:
    return [t for client in seen for g, q, t in client if [g, q] == key]


def breakdown(directory: Path) -> dict[str, Any]:
    bench = json.loads((directory / "bench.json").read_text())
    notes = [json.loads(line) for line in (directory / "updates.jsonl").open()]
    notes = [n for n in notes if "gc" not in n]
    fanned = [(a, b) for a, b in zip(notes, notes[1:], strict=False)
              if a.get("command") == "timeout" and "rooms" in b]
    loop = [n for n in notes if "loop" in n]
    presses = [n for n in notes if n.get("command") == "press"]
    rows = []
    for t0, key in bench["real"]:
        press = next((p for p in presses if 0 <= p["t_ns"] / 1e9 - t0 < 0.2), None)
        timeout = next(((a, b) for a, b in fanned if 0 < a["t_ns"] / 1e9 - t0 < 0.2), None)
        got = received(bench["seen_real"], key)
        if press is None or timeout is None or not got:
            continue
        start, end = timeout
        deadline = start["t_ns"] / 1e9
        at = {n["committed"]: n["at"] for n in loop if n["t_ns"] == start["t_ns"]}
        if False not in at or True not in at:
            continue
        done = end["done"]
        rows.append({"request": press["t_ns"] / 1e9 - t0, "settle": deadline - press["t_ns"] / 1e9,
                     "decided": at[False] - deadline, "commit": at[True] - at[False],
                     "handoff": start["at"] - at[True], "notifier": done - start["at"],
                     "delivery": max(got) - done, "total": max(got) - t0})
    floor = sorted(max(got) - t0 for t0, key in bench["fair"]
                   if (got := received(bench["seen_floor"], key)))
    out: dict[str, Any] = {"questions": len(rows), "parts_ms": {}, "worst": []}
    for part in PARTS:
        xs = sorted(r[part] * 1e3 for r in rows)
        if xs:
            out["parts_ms"][part] = {"p50": round(statistics.median(xs), 2),
                                     "p90": round(xs[int(0.9 * (len(xs) - 1))], 2),
                                     "max": round(xs[-1], 2)}
    for r in sorted(rows, key=lambda r: r["total"])[-5:]:
        out["worst"].append({k: round(v * 1e3, 1) for k, v in r.items()})
    if floor:
        xs = [x * 1e3 for x in floor]
        out["fair_floor_total_ms"] = {"p50": round(statistics.median(xs), 2),
                                      "p90": round(xs[int(0.9 * (len(xs) - 1))], 2),
                                      "max": round(xs[-1], 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, help="a count's directory of a --trace run")
    args = ap.parse_args()
    out = breakdown(args.directory)
    print(f"{out['questions']} questions; the last client's frame, per question (ms):")
    for part, v in out["parts_ms"].items():
        print(f"  {part:9s} p50 {v['p50']:8.2f}  p90 {v['p90']:8.2f}  max {v['max']:8.2f}")
    if "fair_floor_total_ms" in out:
        v = out["fair_floor_total_ms"]
        print(f"  fair floor total p50 {v['p50']:.2f}  p90 {v['p90']:.2f}  max {v['max']:.2f}")
    print("worst questions:", *out["worst"], sep="\n  ")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
