"""A press's durable commit after an idle gap: what the lamp waits for when the winner's own
press reaches the box just before its settle window closes (bench/arbitration.py's "late"
winners, docs/performance.md).

For each gap in ``--gaps-ms`` (slept; 0: back to back), ``--commits`` times: sleep the gap,
then commit one press event through the real `Store.append` (SQLite, WAL,
synchronous=FULL) in the temp directory's file system, and time it. The floor, interleaved
commit by commit under the same load and after the same gap: a bare 4 KiB `pwrite` and
`fdatasync` of a preallocated file in the same directory, the least a durable write costs
there. Printed per gap: p50 / p90 / p99 of both and the ratio of the p50s, with the load
average; JSON on the last line.

Usage: python bench/commit_gap.py [--gaps-ms 0,1,5,10] [--commits N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from floor import load_1m  # noqa: E402
from stats import pct  # noqa: E402

from appliance.rules.protocol import Event  # noqa: E402
from appliance.runtime.store import Store  # noqa: E402

PAGE = 4096


def quantiles(xs: list[float]) -> dict[str, float]:
    return {f"p{p}": round(pct(xs, p), 3) for p in (50, 90, 99)}


def run_gap(store: Store, game: int, fd: int, gap_s: float, commits: int) -> dict:
    press = [Event("press", 1, {"player": 0, "tick": 1})]
    block = b"\0" * PAGE
    own: list[float] = []
    bare: list[float] = []
    load = [load_1m()]
    for i in range(commits):
        if gap_s:
            time.sleep(gap_s)
        t = time.perf_counter()
        store.append(game, press)
        own.append((time.perf_counter() - t) * 1e3)
        if gap_s:
            time.sleep(gap_s)
        t = time.perf_counter()
        os.pwrite(fd, block, (i % 256) * PAGE)
        os.fdatasync(fd)
        bare.append((time.perf_counter() - t) * 1e3)
    load.append(load_1m())
    o, b = quantiles(own), quantiles(bare)
    return {"commit_ms": o, "bare_fdatasync_ms": b,
            "ratio_p50": round(o["p50"] / b["p50"], 2) if b["p50"] > 0 else None,
            "load_average_1m": {"min": min(load), "max": max(load)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gaps-ms", default="0,1,5,10")
    ap.add_argument("--commits", type=int, default=1000)
    args = ap.parse_args()
    gaps = [float(g) for g in args.gaps_ms.split(",")]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "bench.db")
        game = store.create_game("battle", {"players": ["А", "Б"]})
        fd = os.open(Path(d) / "floor.bin", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, b"\0" * (256 * PAGE), 0)  # written blocks: no allocation later
            os.fsync(fd)
            for gap in gaps:
                r = run_gap(store, game, fd, gap / 1000, args.commits)
                results[f"{gap:g}"] = r
                o, b = r["commit_ms"], r["bare_fdatasync_ms"]
                print(f"gap {gap:g} ms: commit p50/p90/p99 {o['p50']} / {o['p90']} / "
                      f"{o['p99']} ms; bare fdatasync {b['p50']} / {b['p90']} / {b['p99']} "
                      f"ms; ratio p50 {r['ratio_p50']}; load average {r['load_average_1m']}")
        finally:
            os.close(fd)
            store.close()
    print(json.dumps({"bench": "commit_gap", "commits": args.commits, "gaps_ms": results}))


if __name__ == "__main__":
    main()
