"""TV engine figures on the scripted demo game (docs/examples/tv-demo.jsonl), engine only
(no SQLite: bench/replay.py measures the log):

1. decide + evolve per command, over the whole game, repeated;
2. the per-update screen work: legal_actions + view for host, board and hardware;
3. folding the game's full event log from the setup (the start-up path);
4. memory held by the final state, which keeps its undo chain (every earlier step).

The floor, same run: as many ``dataclasses.replace`` calls on the final state as the log has
events (one shallow copy of the state per event, nothing else); the fold's ratio to it. CPU
time, best of --repeat. The load average is printed. JSON last.

Usage: python bench/tv_engine.py [--repeat N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from appliance.rules.protocol import Command  # noqa: E402
from appliance.rules.tv import game  # noqa: E402


def script():
    lines = [json.loads(x) for x in (ROOT / "docs/examples/tv-demo.jsonl").read_text(
        encoding="utf-8").splitlines() if x.strip() and not x.startswith("#")]
    head, cmds = lines[0], [Command.from_json(x) for x in lines[1:] if x["type"] != "end_game"]
    return head["setup"], cmds


def play(setup, cmds, timed=None, screens=None):
    state, log = game.initial(setup), []
    for cmd in cmds:
        due = game.next_deadline(state)
        if due is not None and cmd.arrival_ns >= due:
            for e in game.decide(state, Command("timeout", due, {}, "loop")):
                state = game.evolve(state, e)
                log.append(e)
        t0 = time.perf_counter_ns()
        events = game.decide(state, cmd)
        for e in events:
            state = game.evolve(state, e)
        if timed is not None:
            timed.append(time.perf_counter_ns() - t0)
        log += events
        if screens is not None:
            t0 = time.perf_counter_ns()
            game.legal_actions(state)
            for role in ("host", "board", "hardware"):
                game.view(state, role)
            screens.append(time.perf_counter_ns() - t0)
    return state, log


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    setup, cmds = script()
    timed: list[int] = []
    screens: list[int] = []
    for _ in range(args.repeat):
        state, log = play(setup, cmds, timed, screens)
    assert list(state.scores) == [17200, 2700, 11400]
    folds, floors = [], []
    for _ in range(args.repeat):
        t0 = time.process_time()
        s = game.initial(setup)
        for e in log:
            s = game.evolve(s, e)
        folds.append(time.process_time() - t0)
        t0 = time.process_time()
        f = state
        for _ in log:
            f = dataclasses.replace(f, phase=state.phase)
        floors.append(time.process_time() - t0)
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    kept, _ = play(setup, cmds)
    grown = sum(x.size_diff for x in tracemalloc.take_snapshot().compare_to(base, "filename"))
    tracemalloc.stop()

    def q(xs, p):
        return round(sorted(xs)[int(p * (len(xs) - 1))] / 1000, 1)

    result = {
        "commands": len(cmds), "events": len(log),
        "decide_evolve_us": {"mean": round(statistics.mean(timed) / 1000, 1),
                             "p99": q(timed, 0.99), "max": round(max(timed) / 1000, 1)},
        "screens_us": {"mean": round(statistics.mean(screens) / 1000, 1),
                       "p99": q(screens, 0.99)},
        "fold_game_ms": round(min(folds) * 1000, 1),
        "floor_ms": round(min(floors) * 1000, 1),
        "fold_ratio_floor": round(min(folds) / min(floors), 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "final_state_with_undo_chain_kb": round(grown / 1024),
        "state_alive": kept is not None,
    }
    print(f"{len(cmds)} commands -> {len(log)} events; decide+evolve mean "
          f"{result['decide_evolve_us']['mean']} us; screens {result['screens_us']['mean']} us;"
          f" fold {result['fold_game_ms']} ms (floor {result['floor_ms']} ms, ratio "
          f"{result['fold_ratio_floor']}); state {result['final_state_with_undo_chain_kb']} kB;"
          f" load {result['load_average_1m']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
