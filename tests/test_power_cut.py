"""Pull the plug: a child process feeding commands is killed with SIGKILL at random moments,
again and again, on the same file. After every kill the file must open, pass
``PRAGMA integrity_check``, hold every command the child acknowledged, and hold each command
whole (all its events or none). A second test plays a battle and cuts between the lamp
(lit before the settle window's commit) and the commit: the restarted box decides the same
answerer the lamp showed."""

import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import power_cut_child
import pytest
import tiny_engine

from appliance.rules.protocol import fold
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store

KILLS = 50
LAMP_KILLS = 12


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


def battle_log(path: Path) -> tuple[dict[int, int], dict[int, set[int]], set[tuple[str, int]]]:
    """From the log: each question's answerer, its presses, and (event type, question)."""
    answerer: dict[int, int] = {}
    presses: dict[int, set[int]] = defaultdict(set)
    seen: set[tuple[str, int]] = set()
    with Store(path) as store:
        assert store.integrity() == ["ok"]
        games = store.unfinished()
        if not games:
            return answerer, presses, seen
        q = -1
        for e in store.events(games[0].id):
            if e.type == "announced":
                q += 1
            if e.type == "answerer":
                answerer[q] = e.data["player"]
            if e.type == "press":
                presses[q].add(e.data["player"])
            seen.add((e.type, q))
    return answerer, presses, seen


def resume_and_settle(path: Path, roles: tuple[str, ...] = ()) -> dict[str, object]:
    """Start the box again on the file: the resumed game reaches the settle deadline it was
    waiting for and decides it, as after a real power cut. Returns the views of `roles` the
    restarted box then shows (through JSON, as a screen receives them)."""
    loop = GameLoop(Store(path)).start()
    try:
        limit = time.monotonic() + 5
        while time.monotonic() < limit:
            if loop.current is None:
                return {}
            rules, state = loop.snapshot()
            d = rules.next_deadline(state)
            if d is None or rules.view(state, "board")["phase"] != "open":
                return json.loads(json.dumps({r: rules.view(state, r) for r in roles}))
            time.sleep(0.005)
        raise AssertionError("the resumed game never decided its settle window")
    finally:
        loop.stop()
        loop.store.close()


ACKED_EVENT = {"announce": "announced", "press": "press", "judge": "judged",
               "next": "advanced"}


def test_power_cut_after_the_lamp(tmp_path):
    """The lamp and the winner's LED are lit before the commit of the settle window's
    decision. Kill the box at random moments and right after the lamp (the loop held
    between the lamp and the commit): every acknowledged command is in the log, and every
    lamp shown is the answerer the log holds, or the one the restarted box decides again."""
    lamp_kills(tmp_path, slow_loser=False)


def test_power_cut_while_a_losing_press_is_written(tmp_path):
    """The lamp watch lights the lamp while a losing press is still being committed (its
    fsync slow): kill the box then. The losing press was never acknowledged and may be
    lost; the lamp showed a press already in the log, and the restarted box decides it."""
    lamp_kills(tmp_path, slow_loser=True)


def test_power_cut_while_a_losing_press_is_written_and_a_wired_press_waits(tmp_path):
    """As above, with a later wired press waiting in the inbox behind the slow commit: the
    lamp watch folds it in and lights the lamp before either press is written. A kill then
    loses both; the lamp showed a press already in the log, and the restarted box decides
    it."""
    lamp_kills(tmp_path, slow_loser=True, queued=True)


def lamp_kills(tmp_path: Path, slow_loser: bool, queued: bool = False) -> None:
    path = tmp_path / "svoyak.db"
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["power_cut_child"])
    lamps: dict[int, int] = {}
    rederived = during_commit = 0
    for kill in range(LAMP_KILLS):
        out = tmp_path / f"lamp-{kill}.txt"
        stall = kill % 2 == 1
        child = ctx.Process(target=power_cut_child.play_battle,
                            args=(str(path), str(out), stall and not slow_loser, slow_loser,
                                  queued))
        child.start()
        wait_for(out, "ready")
        if stall:
            wait_for(out, "lamp ")
        else:
            time.sleep(rng.uniform(0.0, 0.3))
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        assert child.exitcode == -signal.SIGKILL
        lines = [line.split() for line in out.read_text().splitlines()]
        answerer, presses, seen = battle_log(path)
        last_q = max([q for _, q in seen], default=-1)
        for parts in lines:
            if parts[0] == "lamp":
                q, seat = int(parts[1]), int(parts[2])
                assert lamps.setdefault(q, seat) == seat
                assert seat in presses[q], "a lamp lit for a press the log does not hold"
                if q not in answerer:
                    rederived += 1
                    during_commit += len(presses[q]) == 1  # the loser's press not written
            elif parts[0] == "ack":
                kind, q_text = parts[1], parts[2]
                q = last_q if q_text == "next" else int(q_text)
                if q_text == "next":  # announced: the newest question holds it
                    assert ("announced", q) in seen
                else:
                    assert (ACKED_EVENT[kind], q) in seen, f"acknowledged {parts} lost"
                if kind == "press":
                    assert int(parts[3]) in presses[q]
        resume_and_settle(path)
        answerer, _, _ = battle_log(path)
        for q, seat in lamps.items():
            assert answerer.get(q) == seat, f"question {q}: the lamp showed {seat}, " \
                                            f"the log holds {answerer.get(q)}"
    assert lamps, "no lamp was ever lit"
    assert rederived >= LAMP_KILLS // 2, rederived  # every stalled kill cut before the commit
    if slow_loser:  # lit by the lamp watch while the loser's press was being written
        assert during_commit >= LAMP_KILLS // 4, during_commit


POWER_LOSS_CUTS = 8


@pytest.fixture(scope="module")
def disk_model(tmp_path_factory) -> Path:
    """The power-loss disk model (tests/sync_snapshot.c), built for this run."""
    lib = tmp_path_factory.mktemp("disk-model") / "sync_snapshot.so"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(lib),
                    str(Path(__file__).with_name("sync_snapshot.c")), "-ldl"], check=True)
    return lib


def test_power_loss_after_the_screens_are_told(tmp_path, disk_model):
    """A real power cut loses what the disk was not made to write out, which a SIGKILL never
    does. The box is run with a model of the disk (tests/sync_snapshot.c) that keeps each
    file as it stood at its last fsync, and is cut at once right after a screen was told a
    question's answerer, once the loop has written it out, or right after a judgement was
    acknowledged. The screens are told a deadline's decision before its commit, which is
    made without an fsync of its own (`Store.append`) and written out after (`Store.sync`),
    so the disk a cut at the screen leaves may lack it; then every acknowledged command is
    still there, and the restarted box shows the very views the screens were told. A cut
    once it was written out, or after the judgement, finds it on the disk."""
    lost = power_loss_cuts(tmp_path, disk_model, ("screen", "written", "screen", "judge"),
                           POWER_LOSS_CUTS)
    # The screens were told before the decision was written out: most screen cuts lost it.
    assert lost >= POWER_LOSS_CUTS // 4, lost


def test_power_loss_while_the_answerer_told_to_the_screens_is_committed(tmp_path, disk_model):
    """The screens follow the decision: they are told a settle window's answerer before its
    commit. Cut the power while that commit is under way (it never returns here): the disk
    lacks the answerer every time, and the restarted box decides it again from the presses
    in the log and shows the board and every seat exactly what they were told."""
    cuts = POWER_LOSS_CUTS // 2
    assert power_loss_cuts(tmp_path, disk_model, ("commit",), cuts) == cuts


def power_loss_cuts(tmp_path: Path, disk_model: Path, modes: tuple[str, ...], cuts: int) -> int:
    """Run `power_cut_child.play_until_cut` on the disk model `cuts` times, in `modes` in
    turn, and check each cut disk (above); returns how many told answerers it lacked."""
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    lost_and_rederived = 0
    for cut in range(cuts):
        run_dir = tmp_path / f"run-{cut}"
        image = tmp_path / f"after-cut-{cut}"
        run_dir.mkdir()
        image.mkdir()
        out = tmp_path / f"out-{cut}.txt"
        mode = modes[cut % len(modes)]
        child = subprocess.run(
            [sys.executable, "-c", "import sys, power_cut_child as c; "
             "c.play_until_cut(*sys.argv[1:4], int(sys.argv[4]))",
             str(run_dir / "svoyak.db"), str(out), mode, str(rng.randint(1, 4))],
            env={**os.environ, "LD_PRELOAD": str(disk_model),
                 "SYNC_SNAPSHOT_DIR": str(run_dir),
                 "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent),
                                                os.environ.get("PYTHONPATH", "")])},
            capture_output=True, text=True, timeout=60)
        assert child.returncode == 0, child.stderr
        # The disk after the cut: each file as of its last fsync. (The rollback journal
        # lives only while the file is first created, before the log switches to WAL.)
        for name in ("svoyak.db", "svoyak.db-wal"):
            synced = run_dir / f"{name}.synced"
            if synced.exists():
                shutil.copyfile(synced, image / name)
        lines = out.read_text().splitlines()
        told = [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("views ")]
        lines = [line.split() for line in lines if not line.startswith("views ")]
        answerer, presses, seen = battle_log(image / "svoyak.db")
        shown = {int(p[1]): int(p[2]) for p in lines if p[0] == "screen"}
        for parts in lines:
            if parts[0] == "ack":
                kind, q = parts[1], int(parts[2])
                assert (ACKED_EVENT[kind], q) in seen, f"acknowledged {parts} lost"
                if kind == "press":
                    assert int(parts[3]) in presses[q]
                if kind == "judge":  # written out with the judgement that followed it
                    assert answerer.get(q) == shown[q]
        lost = [q for q in shown if q not in answerer]
        newest = max(shown)
        assert lost in ([], [newest]) if mode == "screen" else lost == (
            [newest] if mode == "commit" else []), (mode, lost)
        lost_and_rederived += len(lost)
        views = resume_and_settle(image / "svoyak.db", power_cut_child.SCREEN_ROLES)
        answerer, _, _ = battle_log(image / "svoyak.db")
        for q, seat in shown.items():
            assert answerer.get(q) == seat, f"question {q}: the screens showed {seat}, " \
                                            f"the restarted box decided {answerer.get(q)}"
        if mode != "judge":  # nothing came after the last answerer the screens were told
            assert views == told[-1], (mode, "the restarted box shows other views")
    return lost_and_rederived


def test_a_running_window_resumes_with_the_time_it_had_left(tmp_path):
    """docs/protocol.md: after a power cut a 7 s window that was running resumes with the
    time it had left. The box is killed partway through a window, stays off a while, and
    is started again on the same file: the window closes after what was left of it (give or
    take one clock mark, `loop.MARK_NS`), not a whole window after its last event."""
    from appliance.runtime import loop as loop_module

    path = tmp_path / "svoyak.db"
    out = tmp_path / "window.txt"
    window_s, ran_s, off_s = 4.0, 2.6, 1.0
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["power_cut_child"])
    child = ctx.Process(target=power_cut_child.open_window, args=(str(path), str(out), window_s))
    child.start()
    wait_for(out, "window ")
    started = int(out.read_text().split()[1])
    time.sleep(max(0.0, ran_s - (time.monotonic_ns() - started) / 1e9))
    ran = (time.monotonic_ns() - started) / 1e9
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    assert child.exitcode == -signal.SIGKILL
    time.sleep(off_s)  # the box is off: its time does not count
    loop = GameLoop(Store(path)).start()
    try:
        resumed = time.monotonic()
        rules, state = loop.snapshot()
        assert rules.view(state, "board")["phase"] == "open"
        while rules.view(state, "board")["phase"] == "open":
            assert time.monotonic() - resumed < window_s + 2, "the window never closed"
            time.sleep(0.01)
            rules, state = loop.snapshot()
        left = time.monotonic() - resumed
    finally:
        loop.stop()
        loop.store.close()
    mark_s = loop_module.MARK_NS / 1e9
    # It ran `ran` before the cut: what is left is `window_s - ran`, plus at most the mark
    # interval it had not noted yet (and a little for a loaded machine).
    assert window_s - ran - 0.1 <= left <= window_s - ran + mark_s + 0.4, (ran, left)
