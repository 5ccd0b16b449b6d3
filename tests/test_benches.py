"""Every bench in bench/ runs through, with tiny arguments, and ends with its JSON line.

The benches measure the targets of issue 15 and are run by hand (`make bench`, or one at a
time with the arguments `docs/performance.md` gives). Nothing else runs them, so an API
change could break one unnoticed (the replay bench's timed store did, once). These runs
check that each still starts, drives the real code it measures, and prints the figures its
documentation names; the figures themselves are measured by running the benches for real,
never here (a timed unit test on a shared machine would say nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# bench -> (tiny arguments, keys its JSON line must hold)
BENCHES: dict[str, tuple[list[str], set[str]]] = {
    "arbitration.py": (["--trials", "2", "--compare"],
                       {"all_correct", "tmpfs", "disk", "disk_no_watch"}),
    "commit_gap.py": (["--gaps-ms", "0,1", "--commits", "3"], {"gaps_ms"}),
    "draw.py": (["--repeat", "1"], set()),
    "fanout.py": (["--phones", "2", "--questions", "3", "--procs", "1"], {"2", "cpus"}),
    "flood.py": (["--phones", "3", "--seconds", "2", "--rate", "100"],
                 {"storm_host_p99_ms", "phone_messages_lost", "rss_growth_mb"}),
    "frames.py": (["--events", "0,40"], set()),
    "gpio_latency.py": (["--seconds", "1", "--settle-ms", "10"], set()),
    "import.py": (["--sizes", "1,2"], {"results", "target_met"}),
    "replay.py": (["--events", "100,200"], {"commit", "load_average_1m"}),
    "rooms.py": (["--rooms", "3", "--questions", "2", "--pace", "0.2"], set()),
    "soak.py": (["--minutes", "0.4", "--warm-up", "0.1"], {"mb_per_min_after_warmup"}),
    "tv_engine.py": (["--repeat", "1"], set()),
}
# Benches whose exit status is a timing or memory target (1: missed).
TARGET_EXIT = {"soak.py", "flood.py"}
# Not benches of their own: the fan-out bench's floor server and trace reader (run by it
# and below), and modules the benches import.
HELPERS = {"bare_broadcast.py", "fanout_trace.py", "floor.py", "procs.py", "stats.py"}


def run_bench(name: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "bench" / name), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def last_json(out: str) -> dict:
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines, "the bench printed nothing"
    return json.loads(lines[-1])


def test_every_bench_is_listed():
    assert {p.name for p in (ROOT / "bench").glob("*.py")} == set(BENCHES) | HELPERS


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_a_bench_runs_through(name):
    args, keys = BENCHES[name]
    done = run_bench(name, args)
    # soak.py and flood.py exit 1 when a figure misses its target (a slope, a p99 under the
    # storm), which a run this short on a busy machine says nothing about; every other bench
    # exits 0.
    timed = name in TARGET_EXIT
    assert done.returncode in ((0, 1) if timed else (0,)), done.stderr[-3000:]
    result = last_json(done.stdout)
    assert isinstance(result, dict) and keys <= set(result), sorted(result)
    if name == "flood.py":  # what does not depend on the machine's load still holds
        assert result["phone_messages_lost"] == 0, result
        assert result["screens_connected_after"] is True, result


def test_the_fanout_trace_is_read(tmp_path):
    """`fanout.py --trace DIR` profiles the real server; `fanout_trace.py` reads it back."""
    done = run_bench("fanout.py", ["--phones", "2", "--questions", "3", "--procs", "1",
                                   "--trace", str(tmp_path)])
    assert done.returncode == 0, done.stderr[-3000:]
    read = subprocess.run([sys.executable, str(ROOT / "bench" / "fanout_trace.py"),
                           str(tmp_path / "2")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert read.returncode == 0, read.stderr[-3000:]
    assert "parts_ms" in last_json(read.stdout)


def test_the_lamp_target_is_split_by_the_winners_press():
    """The lamp target as decided after issue 15: the races whose winning press was in the log
    at the deadline against the bare wake-up, the late winners against the wake-up plus a
    bare fsync after the same idle gap, measured in the same run."""
    done = run_bench("arbitration.py", ["--trials", "2"])
    assert done.returncode == 0, done.stderr[-3000:]
    disk = last_json(done.stdout)["disk"]
    assert {"ratio_p99", "ratio_p99_earlier", "ratio_p99_late", "fsync_floor_ms"} <= set(disk)
    floor = disk["fsync_floor_ms"]
    assert 0 < floor["p50"] <= floor["p99"]
    earlier = disk["by_winner_press"]["earlier"]
    assert disk["ratio_p99_earlier"] == round(earlier["p99"] / disk["wakeup_ms"]["p99"], 2)
    late = disk["by_winner_press"]["late"]
    if late["races"]:
        assert disk["ratio_p99_late"] == round(
            late["p99"] / (disk["wakeup_ms"]["p99"] + floor["p99"]), 2)
    else:
        assert disk["ratio_p99_late"] is None


def test_the_fanout_reports_each_question_against_its_floor():
    """One starved question must show as one question: the fan-out bench gives each question's
    p99 against the fair floor's for the question timed beside it."""
    done = run_bench("fanout.py", ["--phones", "2", "--questions", "3", "--procs", "1"])
    assert done.returncode == 0, done.stderr[-3000:]
    per = last_json(done.stdout)["2"]["adjusted"]["per_question"]
    assert per["questions"] == 3
    assert 1 <= per["worst_question"] <= 3
    assert per["ratio_p99_p50"] <= per["ratio_p99_p90"] <= per["worst_ratio_p99"]
    assert 0 <= per["over_target"] <= 3
