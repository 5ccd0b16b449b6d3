"""Event log figures: how fast a game's log replays, and how many commands per second the box
can commit with ``synchronous=FULL``.

1. Plays a sport battle by a seeded random walk over its legal actions (presses with
   realistic spacing, judgements, corrections, undo) through `Session`, on a real file,
   until the log holds 5,000 events. Every commit is timed (this is the figure that bounds how
   fast a screen can be told "done").
2. Reopens the file and replays the log: read the events, fold them into the state (the
   start-up path after a power cut). Target: under 0.3 s for 5,000 events. Both wall and
   CPU time are printed: on a shared machine the wall time also counts other processes'
   turns, so the target is checked against the smaller of the two.

Usage: python bench/replay.py [--events N] [--dir DIR] [--seed S] [--rules NAME]
The file lives in a temporary directory under DIR (default: the system's temp directory;
on the box give the data directory's disk, since a tmpfs has no fsync to wait for).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appliance import engines  # noqa: E402
from appliance.engine import Action, Command, fold  # noqa: E402
from appliance.session import Session  # noqa: E402
from appliance.store import Store  # noqa: E402

MS = 1_000_000
TARGET_REPLAY_S = 0.3


def battle_setup(themes: int) -> dict:
    return {"players": ["Аня", "Борис", "Вера"],
            "themes": [{"name": f"Тема {i + 1}", "red": i % 4 == 3} for i in range(themes)],
            "extra_themes": [{"name": f"Доп. тема {i + 1}"} for i in range(20)]}


class TimedStore(Store):
    """A store that times each commit (`append`)."""

    commit_s: list[float]

    def append(self, game, events):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        seqs = super().append(game, events)
        self.commit_s.append(time.perf_counter() - start)
        return seqs


def pick_args(action: Action, rng: random.Random) -> dict:
    args = {}
    for name, spec in action.args.items():
        if isinstance(spec, list):
            args[name] = rng.choice(spec)["value"]
        elif spec.get("type") == "int":
            lo, hi = max(spec.get("min", -100), -500), min(spec.get("max", 100), 500)
            step = spec.get("step", 1) or 1
            args[name] = lo + step * rng.randint(0, max(0, (hi - lo) // step))
        else:
            args[name] = rng.choice(["Москва", "Пётр I", "1812"])
    return args


def walk(session: Session, target: int, rng: random.Random) -> tuple[int, int]:
    """Random legal commands until the log holds `target` events. Returns (commands sent,
    commands refused); refusals are counted, a legal action should rarely be refused."""
    t = 10**12
    sent = refused = events = 0
    while events < target:
        t += rng.randint(50, 3000) * MS
        actions = session.rules.legal_actions(session.state)
        if not actions:
            break
        weights = [1 if a.confirm else 12 for a in actions]
        action = rng.choices(actions, weights)[0]
        cmd = Command(action.type, t, pick_args(action, rng), action.by, t + rng.randint(0, 2) * MS)
        steps = session.run(cmd)
        sent += 1
        refused += steps[-1].refused is not None
        events += sum(len(s.events) for s in steps)
    return sent, refused


def filesystem(path: Path) -> str:
    """The mount's file system type (tmpfs has no fsync cost: the figure would flatter)."""
    best, kind = "", "?"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            _, mount, fs, *_ = line.split()
            if str(path).startswith(mount) and len(mount) > len(best):
                best, kind = mount, fs
    except OSError:
        pass
    return kind


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rules", default="battle")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rules = engines.get(args.rules)
    with tempfile.TemporaryDirectory(prefix="svoyak-bench-", dir=args.dir) as tmp:
        path = Path(tmp, "svoyak.db")
        store = TimedStore(path)
        store.commit_s = []
        session = Session.new(store, args.rules, rules, battle_setup(args.events // 30))
        start = time.perf_counter()
        sent, refused = walk(session, args.events, rng)
        play_s = time.perf_counter() - start
        live = session.state
        n_events = store.count(session.game)
        store.close()

        t0 = time.perf_counter()
        again = Store(path)
        t1, c1 = time.perf_counter(), time.process_time()
        record = again.game(session.game)
        events = again.events(session.game)
        t2 = time.perf_counter()
        state = fold(rules, rules.initial(record.setup), events)
        t3, c3 = time.perf_counter(), time.process_time()
        again.close()
        if state != live:
            print("replayed state differs from the live one", file=sys.stderr)
            return 1
        size = path.stat().st_size + sum(
            p.stat().st_size for p in path.parent.glob("svoyak.db-*"))

    commits = store.commit_s
    commit_ms = sorted(c * 1000 for c in commits)
    result = {
        "rules": args.rules,
        "events": n_events,
        "commands": sent,
        "commands_refused": refused,
        "open_s": round(t1 - t0, 4),
        "read_s": round(t2 - t1, 4),
        "fold_s": round(t3 - t2, 4),
        "replay_s": round(t3 - t1, 4),
        "replay_cpu_s": round(c3 - c1, 4),
        "replay_target_s": TARGET_REPLAY_S,
        "replay_ok": min(t3 - t1, c3 - c1) < TARGET_REPLAY_S,
        "commits": len(commits),
        "commits_per_s": round(len(commits) / sum(commits), 1),
        "commit_ms_p50": round(statistics.median(commit_ms), 3),
        "commit_ms_p99": round(commit_ms[int(len(commit_ms) * 0.99)], 3),
        "commands_per_s_end_to_end": round(sent / play_s, 1),
        "file_bytes": size,
        "filesystem": filesystem(Path(tmp)),
        "synchronous": "FULL",
    }
    print(f"{n_events} events from {sent} commands ({refused} refused) on {result['filesystem']}")
    print(f"replay: open {result['open_s']} s, read {result['read_s']} s, "
          f"fold {result['fold_s']} s, total {result['replay_s']} s wall, "
          f"{result['replay_cpu_s']} s CPU (target < {TARGET_REPLAY_S} s)")
    print(f"commits (synchronous=FULL): {result['commits_per_s']}/s, "
          f"p50 {result['commit_ms_p50']} ms, p99 {result['commit_ms_p99']} ms")
    print(json.dumps(result))
    return 0 if result["replay_ok"] else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
