"""Fan-out latency of the web UI: a real `svoyak serve --simulate` on loopback with 1 host,
1 board and 30 player Socket.IO clients (WebSocket transport). For each question the host
announces the value, then a press is injected through the simulator's hook; we time from
just before the injection to the moment each of the 32 clients holds the view that names
the answerer. Figures: p50 and p99 over all (question, client) pairs, the slowest client per
question, and the server's resident memory (gunicorn arbiter + worker) after the run.

The press goes through the same path as a wired button (GPIO adapter → game loop → commit
to SQLite with synchronous=FULL → notifier → one view per room); the arbiter's settle
window (5 ms by default) is part of every figure. Targets: p99 < 50 ms, RSS < 100 MB.

    .venv/bin/python bench/fanout.py [--questions 40] [--players 30]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import signal
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import requests
import socketio
import websocket

from webui import localserver

ROOT = Path(__file__).resolve().parent.parent


def mem_kb(pid: int, key: str) -> int:
    """VmRSS from status, or Pss from smaps_rollup (shared pages counted once)."""
    path = Path(f"/proc/{pid}/status" if key == "VmRSS" else f"/proc/{pid}/smaps_rollup")
    for line in path.read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def server_rss_mb(root_pid: int) -> dict[str, float]:
    """RSS of the server process and its children (the gunicorn worker)."""
    pids = [root_pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == root_pid:
                pids.append(int(entry.name))
    rss = {pid: mem_kb(pid, "VmRSS") / 1024 for pid in pids}
    pss = {pid: mem_kb(pid, "Pss") / 1024 for pid in pids}
    return {"arbiter_rss_mb": round(rss[root_pid], 1),
            "worker_rss_mb": round(sum(v for p, v in rss.items() if p != root_pid), 1),
            "rss_sum_mb": round(sum(rss.values()), 1),
            "pss_total_mb": round(sum(pss.values()), 1)}


ANSWERING = re.compile(r'"answering": ?(\d+)')
QUESTION = re.compile(r'"question_index": ?(\d+)')


def lean_client(base: str, auth: dict[str, Any], cookie: str | None,
                seen: dict[int, float], stop: threading.Event) -> websocket.WebSocket:
    """A minimal Socket.IO client over a raw WebSocket (Engine.IO v4 framing): it answers
    pings and stamps each question's first view naming an answerer, looking only at two
    fields, so the measuring side stays light (real phones parse on their own CPUs)."""
    url = base.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.create_connection(url, header=[f"Cookie: {cookie}"] if cookie else [],
                                     timeout=10)
    assert ws.recv().startswith("0")  # Engine.IO open
    ws.send("40" + json.dumps(auth))  # Socket.IO connect with auth
    ws.settimeout(None)

    def read() -> None:
        while not stop.is_set():
            try:
                msg = ws.recv()
            except Exception:
                return
            now = time.monotonic()
            if msg == "2":
                ws.send("3")
            elif msg.startswith("42"):
                a, q = ANSWERING.search(msg), QUESTION.search(msg)
                if a and q:
                    seen.setdefault(int(q.group(1)), now)

    threading.Thread(target=read, daemon=True).start()
    return ws


def client_worker(base: str, auths: list[dict[str, Any]], cookie: str | None,
                  ready: Any, out: Any, stop_event: Any) -> None:
    """Runs in its own process: connects its clients and reports, per client, when it first
    saw each question's answerer (CLOCK_MONOTONIC, comparable across processes)."""
    seen: list[dict[int, float]] = [{} for _ in auths]
    stop = threading.Event()
    sockets = [lean_client(base, auth, cookie if auth["role"] == "host" else None, seen[i],
                           stop) for i, auth in enumerate(auths)]
    ready.put(len(sockets))
    stop_event.wait()
    stop.set()
    for ws in sockets:
        ws.close()
    out.put(seen)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--players", type=int, default=30)
    ap.add_argument("--procs", type=int, default=4, help="client processes")
    args = ap.parse_args()
    port = localserver.free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        proc = localserver.start(data, port, "--no-demo")
        try:
            pin = json.loads((data / "settings.json").read_text())["pin"]
            http = requests.Session()
            r = http.post(base + "/login", data={"pin": pin}, allow_redirects=False)
            assert r.status_code == 302, r.status_code
            cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
            host = socketio.Client(reconnection=False)
            host.connect(base, auth={"role": "host"}, headers={"Cookie": cookie},
                         transports=["websocket"], wait_timeout=10)
            res = host.call("new_game", {"rules": "battle", "players": ["A", "B", "C"],
                                         "package": "demo:battle",
                                         "options": {"stage": "final"}}, timeout=10)
            assert res["ok"], res
            auths = [{"role": "host"}, {"role": "board"}] + [
                {"role": "player", "seat": i % 3} for i in range(args.players)]
            ctx = mp.get_context("spawn")
            ready, out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
            groups = [auths[i::args.procs] for i in range(args.procs)]
            procs = [ctx.Process(target=client_worker, args=(base, g, cookie, ready, out, stop))
                     for g in groups if g]
            for p in procs:
                p.start()
            n_clients = sum(ready.get(timeout=60) for _ in procs)
            time.sleep(0.5)
            t0s: list[float] = []
            for q in range(args.questions):
                assert host.call("command", {"type": "announce"}, timeout=10)["ok"]
                time.sleep(0.05)
                t0 = time.monotonic()
                req = urllib.request.Request(
                    base + "/api/sim/press", method="POST",
                    data=json.dumps({"player": q % 3}).encode(),
                    headers={"Content-Type": "application/json"})
                urllib.request.urlopen(req, timeout=5).close()
                t0s.append(t0)
                time.sleep(0.25)  # every client has it well before this (checked below)
                assert host.call("command", {"type": "judge", "verdict": "right"},
                                 timeout=10)["ok"]
                assert host.call("command", {"type": "next"}, timeout=10)["ok"]
                time.sleep(0.05)
            stop.set()
            seen = [s for _ in procs for s in out.get(timeout=60)]
            for p in procs:
                p.join(10)
            host.disconnect()
            latencies: list[float] = []
            slowest: list[float] = []
            for q, t0 in enumerate(t0s):
                got = [(s[q] - t0) * 1000 for s in seen if q in s]
                if len(got) != n_clients:
                    raise SystemExit(f"question {q}: only {len(got)} of {n_clients} clients "
                                     "got the update")
                latencies += got
                slowest.append(max(got))
            memory = server_rss_mb(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
    result = {
        "bench": "fanout", "clients": n_clients, "client_processes": args.procs,
        "questions": args.questions, "load_average_1m": os.getloadavg()[0],
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(pct(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
        "slowest_client_p50_ms": round(statistics.median(slowest), 2),
        "slowest_client_per_question_ms": [round(x, 1) for x in slowest],
        "rss": memory,
        "targets": {"p99_ms": 50, "rss_mb": 100},
    }
    print(f"{len(latencies)} deliveries to {n_clients} clients over {args.questions} "
          f"questions: p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, "
          f"max {result['max_ms']} ms; server memory {memory['pss_total_mb']} MB PSS "
          f"(RSS: arbiter {memory['arbiter_rss_mb']}, worker {memory['worker_rss_mb']})")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
