"""Pull the plug: a child process feeding commands is killed with SIGKILL at random moments,
again and again, on the same file. After every kill the file must open, pass
``PRAGMA integrity_check``, hold every command the child acknowledged, and hold each command
whole (all its events or none)."""

import multiprocessing
import os
import random
import signal
import time
from collections import defaultdict
from pathlib import Path

import power_cut_child
import tiny_engine

from appliance.rules.protocol import fold
from appliance.runtime.store import Store

KILLS = 50


def check(path: Path, acked: dict[int, int]) -> int:
    """Verify the log after a kill; returns the number of commands committed."""
    with Store(path) as store:
        assert store.integrity() == ["ok"]
        games = store.unfinished()
        assert len(games) <= 1
        if not games:  # killed before the game was created
            assert not acked
            return 0
        game = games[0]
        log = store.log(game.id)
        events = [x.event for x in log]
        seqs = [x.seq for x in log]
        assert seqs == list(range(1, len(seqs) + 1))
        by_command: dict[int, list[dict]] = defaultdict(list)
        for e in events:
            assert e.type == "tick"
            by_command[e.data["n"]].append(dict(e.data))
        committed = sorted(by_command)
        assert committed == list(range(1, len(committed) + 1))  # no gap, nothing skipped
        for n, rows in by_command.items():  # each command whole, in order
            assert [r["i"] for r in rows] == list(range(rows[0]["of"])), n
            assert rows[0]["of"] == 1 + n % 7
        for n, k in acked.items():  # every acknowledged command is there, whole
            assert len(by_command[n]) == k, f"acknowledged command {n} lost"
        state = fold(tiny_engine, tiny_engine.initial(game.setup), events)
        assert state.last_burst == (committed[-1] if committed else 0)
        return len(committed)


def wait_for(path: Path, text: str, timeout_s: float = 10) -> None:
    limit = time.monotonic() + timeout_s
    while time.monotonic() < limit:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.002)
    raise AssertionError(f"the child never wrote {text!r}")


def test_power_cut(tmp_path):
    path = tmp_path / "svoyak.db"
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    # Children are forked from a server that has already imported everything, so each kill
    # costs milliseconds, not an interpreter start-up.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["power_cut_child"])
    acked: dict[int, int] = {}
    kills = with_acks = 0
    while kills < KILLS:
        acks = tmp_path / f"acks-{kills}.txt"
        child = ctx.Process(target=power_cut_child.run, args=(str(path), str(acks)))
        child.start()
        if kills % 5 == 0:  # now and then, during start-up (opening, resuming)
            time.sleep(rng.uniform(0.0, 0.05))
        else:  # mostly while it writes
            wait_for(acks, "ready")
            time.sleep(rng.uniform(0.0, 0.15))
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        assert child.exitcode == -signal.SIGKILL  # it was still running: no crash
        new = 0
        lines = acks.read_text().splitlines() if acks.exists() else []
        for line in lines:
            if line.startswith("ack "):
                _, n, k = line.split()
                acked[int(n)] = int(k)
                new += 1
        kills += 1
        with_acks += new > 0
        committed = check(path, acked)
        assert committed >= max(acked, default=0)
    # the kills really landed in the middle of writing, not only during start-up
    assert with_acks >= KILLS // 2, (with_acks, kills)
    assert len(acked) >= 100
