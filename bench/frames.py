"""What one committed update costs the web UI as a game grows: the frames for host, board and
three seats (`webui.hub.Frame`: each view once, the legal actions once) at several lengths of
a battle, their size, and the floor of the same run: serializing those very frames
(``json.dumps``, which a broadcast does anyway). The battle is a seeded random walk over its
legal actions (bench/replay.py's), on tmpfs. CPU time, best of five. JSON last.

    .venv/bin/python bench/frames.py [--events 0,1000,5000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay import battle_setup, walk  # noqa: E402

from appliance.rules import registry  # noqa: E402
from appliance.rules.battle import state as battle_state  # noqa: E402
from appliance.rules.battle import views as battle_views  # noqa: E402
from appliance.runtime.running import RunningGame  # noqa: E402
from appliance.runtime.store import Store  # noqa: E402
from webui.hub import Client, Frame, Hooks  # noqa: E402

CLIENTS = [Client("host"), Client("board"), *(Client("player", s) for s in range(3))]


class StubLoop:
    """What a Frame asks of the game loop, for one game held here."""

    def __init__(self, rules: Any, state: Any) -> None:
        self.rules, self.state, self.current = rules, state, 1

    def snapshot(self, game: int | None = None) -> tuple[Any, Any]:
        return self.rules, self.state

    shown = snapshot

    def is_finished(self, game: int | None = None) -> bool:
        return False

    def now(self, game: int | None = None) -> int:
        return 0


def frames(rules: Any, state: Any) -> list[dict[str, Any]]:
    loop = StubLoop(rules, state)
    hub = SimpleNamespace(loop=loop, ui=SimpleNamespace(to_json=lambda: {}), simulate=True,
                          phone_buzzer=lambda: False, hooks=Hooks(),
                          settings=SimpleNamespace(get=dict), _lock=threading.Lock(),
                          clients={})
    frame = Frame(hub, (rules, state), 1)  # type: ignore[arg-type]
    return [frame.payload(c) for c in CLIENTS]


def forget() -> None:
    """Drop what the battle engine keeps from the last update (the host's judgement rows,
    the scores), as after an undo or a rejudgement, which change them all."""
    battle_views._LAST_JUDGEMENTS = None
    battle_state._LAST_SCORES = None


def best(fn: Any, n: int = 5, cold: bool = False) -> float:
    times = []
    for _ in range(n):
        if cold:
            forget()
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="0,1000,5000")
    args = ap.parse_args()
    counts = sorted(int(x) for x in args.events.split(","))
    rules = registry.get("battle")
    states: dict[int, Any] = {}
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) \
            as tmp:
        store = Store(Path(tmp, "svoyak.db"))
        game = RunningGame.new(store, "battle", rules, battle_setup(max(counts) // 30 + 1))
        pending = list(counts)

        def keep(n: int, state: Any) -> None:
            while pending and n >= pending[0]:
                states[pending.pop(0)] = state

        keep(0, game.state)
        walk(game, max(counts), random.Random(1), keep)
        store.close()
    out: dict[str, Any] = {"bench": "frames", "load_average_1m": round(os.getloadavg()[0], 2)}
    for n in counts:
        state = states[n]
        built = frames(rules, state)
        text = [json.dumps(f, ensure_ascii=False) for f in built]
        build_s = best(lambda s=state: frames(rules, s))
        cold_s = best(lambda s=state: frames(rules, s), cold=True)
        dumps_s = best(lambda b=built: [json.dumps(f, ensure_ascii=False) for f in b])
        out[str(n)] = {"host_frame_kb": round(len(text[0].encode()) / 1024, 1),
                       "board_frame_kb": round(len(text[1].encode()) / 1024, 1),
                       "build_ms": round(build_s * 1000, 3),
                       "build_cold_ms": round(cold_s * 1000, 3),
                       "dumps_floor_ms": round(dumps_s * 1000, 3),
                       "ratio_floor": round(build_s / dumps_s, 2)}
        print(f"{n:>6} events: host frame {out[str(n)]['host_frame_kb']} kB, board "
              f"{out[str(n)]['board_frame_kb']} kB; building the 5 frames "
              f"{out[str(n)]['build_ms']} ms ({out[str(n)]['build_cold_ms']} ms with nothing kept),"
              f" serializing them {out[str(n)]['dumps_floor_ms']}"
              f" ms (ratio {out[str(n)]['ratio_floor']})")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
