"""A long evening on a real `svoyak serve --simulate` (loopback only): continuous play
(announce, a press, a verdict, the next question), a new game every 10 questions, and 30
phones of which 10 reconnect every 10 s. The worker's RSS is sampled every minute; the
figure is its slope after the first 5 minutes, ``mb_per_min_after_warmup`` in the JSON
(target under 0.1 MB/min; an evening is ``--minutes 60``).

The floor, in the same run: the same server idle (screens connected, nothing played) for
the first minute, its RSS slope over that minute. Printed side by side with the load
average; JSON on the last line. Bounded by --minutes.

    .venv/bin/python bench/soak.py --minutes N
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flood import Lean, rss_mb, worker_pid  # noqa: E402

from webui import localserver  # noqa: E402

WARM_UP_MIN = 5
PHONES = 30
RECONNECT = 10
QUESTIONS_PER_GAME = 10


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minute, MB) points, MB per minute."""
    if len(points) < 2:
        return float("nan")
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


def wait_ack(client: Lean, ack: int, timeout: float = 10.0) -> dict | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = client.acks.get(ack)
        if got is not None:
            return got[1] if isinstance(got[1], dict) else None
        time.sleep(0.005)
    return None


def phone(port: int, i: int) -> Lean:
    return Lean(port, f"127.0.1.{1 + i}", {"role": "player", **({"seat": i} if i < 3 else {})})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--warm-up", type=float, default=WARM_UP_MIN,
                    help="minutes left out of the slope (default 5)")
    args = ap.parse_args()
    port = localserver.free_port()
    base = f"http://127.0.0.1:{port}"
    samples: list[tuple[float, float]] = []
    idle: list[tuple[float, float]] = []
    counts = {"questions": 0, "games": 0, "refused": 0, "reconnects": 0, "unanswered": 0}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        proc = localserver.start(data, port, "--no-demo")
        phones: list[Lean] = []
        try:
            pid = worker_pid(proc.pid)
            pin = json.loads((data / "settings.json").read_text())["pin"]
            http = requests.Session()
            assert http.post(base + "/login", data={"pin": pin},
                             allow_redirects=False).status_code == 302
            cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
            host = Lean(port, "127.0.0.1", {"role": "host"}, cookie)
            board = Lean(port, "127.0.0.1", {"role": "board"})
            phones = [phone(port, i) for i in range(PHONES)]
            t0 = time.monotonic()

            def minute() -> float:
                return (time.monotonic() - t0) / 60

            # The floor: the idle server for a minute (bounded by the run's length).
            idle_end = min(1.0, args.minutes / 4)
            while minute() < idle_end:
                idle.append((minute(), rss_mb(pid)))
                time.sleep(5)
            t0 = time.monotonic()
            samples.append((0.0, rss_mb(pid)))
            next_sample, next_reconnect = 1.0, time.monotonic() + 10
            q = 0
            while minute() < args.minutes:
                if q % QUESTIONS_PER_GAME == 0:
                    answer = wait_ack(host, host.emit("new_game", {
                        "rules": "battle", "players": ["A", "B", "C"],
                        "package": "demo:battle", "options": {"stage": "final"}}))
                    counts["games"] += 1
                    if answer is None or not answer.get("ok"):
                        counts["refused"] += 1
                for command in ({"type": "announce"}, None, {"type": "judge",
                                                             "verdict": "right"},
                                {"type": "next"}):
                    if command is None:
                        req = urllib.request.Request(
                            base + "/api/sim/press", method="POST",
                            data=json.dumps({"player": q % 3}).encode(),
                            headers={"Content-Type": "application/json"})
                        urllib.request.urlopen(req, timeout=5).close()
                        time.sleep(0.1)
                        continue
                    answer = wait_ack(host, host.emit("command", command))
                    if answer is None:
                        counts["unanswered"] += 1
                    elif not answer.get("ok"):
                        counts["refused"] += 1
                q += 1
                counts["questions"] += 1
                if time.monotonic() >= next_reconnect:
                    for i in range(RECONNECT):
                        k = (counts["reconnects"] + i) % PHONES
                        phones[k].close()
                        phones[k] = phone(port, k)
                    counts["reconnects"] += RECONNECT
                    next_reconnect = time.monotonic() + 10
                if minute() >= next_sample:
                    samples.append((minute(), rss_mb(pid)))
                    print(f"minute {minute():5.1f}: RSS {samples[-1][1]:.1f} MB", flush=True)
                    next_sample += 1.0
                time.sleep(0.2)
            samples.append((minute(), rss_mb(pid)))
            alive = host.alive and board.alive
            host.close()
            board.close()
        finally:
            for p in phones:
                p.close()
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
    warm_up = args.warm_up if args.minutes > args.warm_up + 1 else 1.0
    after = [s for s in samples if s[0] >= warm_up] or samples
    last_half = [s for s in samples if s[0] >= args.minutes / 2] or samples
    result = {
        "bench": "soak", "minutes": args.minutes, "phones": PHONES,
        "load_average_1m": round(os.getloadavg()[0], 2), **counts,
        "rss_start_mb": round(samples[0][1], 1), "rss_end_mb": round(samples[-1][1], 1),
        # the evening's figure (target < 0.1); the longer name is the earlier rounds' key
        "mb_per_min_after_warmup": round(slope(after), 3),
        "slope_after_warm_up_mb_per_min": round(slope(after), 3),
        "slope_last_half_mb_per_min": round(slope(last_half), 3),
        "warm_up_min": warm_up,
        "idle_floor_slope_mb_per_min": round(slope(idle), 3),
        "samples": [[round(x, 2), round(y, 1)] for x, y in samples],
        "screens_connected_after": alive,
    }
    print(f"RSS {result['rss_start_mb']} → {result['rss_end_mb']} MB over {args.minutes} min; "
          f"slope after warm-up {result['slope_after_warm_up_mb_per_min']} MB/min, last half "
          f"{result['slope_last_half_mb_per_min']} MB/min "
          f"(idle floor {result['idle_floor_slope_mb_per_min']} MB/min); "
          f"{counts['questions']} questions, {counts['games']} games; "
          f"load average {result['load_average_1m']}")
    print(json.dumps(result, ensure_ascii=False))
    return 0 if result["mb_per_min_after_warmup"] < 0.1 else 1


if __name__ == "__main__":
    sys.exit(main())
