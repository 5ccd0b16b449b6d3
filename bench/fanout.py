"""Fan-out latency of the web UI against its floors, for several numbers of phones.

For each count of phones (``--phones 10,30,60,120``) two servers run side by side on
loopback, both the way the box deploys them (`webui.server.Server`: gunicorn, one gthread
worker), with the same clients: 1 host, 1 board and N phones spread over the three seats.

- The real `svoyak serve --simulate`: for each question the host announces the value, a
  press is injected through the simulator's hook (``POST /api/sim/press``: the GPIO
  adapter's path, the press's commit, the settle window, the decision, told to the screens
  before the answerer's commit, which runs beside the views), and we time from just before
  the request to the moment each client holds the view naming the answerer.
- The floors (`bench/bare_broadcast.py`: a bare Flask-SocketIO server, same Socket.IO
  options, packet class and JSON), which send the very frames the real server sent for a
  question (captured in the same run), timed the same way:
  * bare (``ratio_p99``, the raw ratio): broadcast as soon as ``POST /fire`` arrives;
  * fair (``adjusted``): the same press request, stamped on arrival, and a thread asleep
    until the settle window after that stamp has passed broadcasts, which is what the
    rules of the game impose on any box (a press waits that long for an earlier one);
  * durable (``durable``): the fair floor plus the two commits the box's log makes on the
    same file system (SQLite WAL: the press with synchronous=FULL before the deadline, and
    the answerer, a deadline's decision, with synchronous=NORMAL as `Store.append` commits
    it, right after the broadcast, as the box tells the screens before that commit);
    information, not the target's floor.

Each question runs the real server and the three floors in turn (each first in its turn),
so all see the same load. Figures per count: p50 and p99 over all (question, client) pairs,
each floor's p50 and p99 and the ratios; the real server's memory after its run: PSS
(``/proc/PID/smaps_rollup``: each page divided by the number of processes sharing it, so the
gunicorn arbiter and its forked worker together count shared pages once) and RSS
(``VmRSS``: every resident page of each process, summed over both, so shared pages count
twice). The clients are minimal Socket.IO clients on raw WebSockets in their own
processes, so the measuring side takes as little as possible of the cores it shares with
the servers. Load average (1 min) is printed with each count. JSON last. A p99 over
(question, client) pairs is close to the worst question's: use enough questions (100), and
read ``adjusted.per_question`` beside it: each question's p99 over its clients against the
fair floor's for the question timed beside it, their median and p90, the worst question
and how many are over the target.

Targets (issue 15): ratio_p99 <= 1.3 at 30 and 60 phones, checked against the fair floor
(``adjusted.ratio_p99``; the raw ``ratio_p99`` is reported beside it); 120 phones connect
and are served; PSS <= 100 MB at 60 phones.

    .venv/bin/python bench/fanout.py [--phones 10,30,60,120] [--questions 40] [--trace DIR]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

import requests  # noqa: E402
import socketio  # noqa: E402
import websocket  # noqa: E402
from procs import children  # noqa: E402
from stats import pct  # noqa: E402

from webui import localserver  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ANSWERING = re.compile(r'"answering": ?(\d+)')
QUESTION = re.compile(r'"question_index": ?(\d+)')
GAME = re.compile(r'"game": ?(\d+)')  # the payload's first key after role and seat
CONNECT_TIMEOUT_S = 20
FAIR_Q = 100_000  # the fair floor's question numbers, apart from the bare floor's
DURABLE_Q = 200_000  # and the durable floor's
NEW_GAME = {"rules": "battle", "players": ["A", "B", "C"], "package": "demo:battle",
            "options": {"stage": "final"}}


Key = tuple[int, int]  # (game, question index) a frame names


def mem_kb(pid: int, key: str) -> int:
    """VmRSS from status, or Pss from smaps_rollup, in kB (0 if the process is gone)."""
    path = Path(f"/proc/{pid}/status" if key == "VmRSS" else f"/proc/{pid}/smaps_rollup")
    try:
        for line in path.read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def server_memory(root_pid: int) -> dict[str, float]:
    """PSS and RSS of the server process and its children (the gunicorn worker), in MB."""
    pids = [root_pid, *children(root_pid)]
    rss = {pid: mem_kb(pid, "VmRSS") / 1024 for pid in pids}
    pss = {pid: mem_kb(pid, "Pss") / 1024 for pid in pids}
    return {"pss_mb": round(sum(pss.values()), 1), "rss_mb": round(sum(rss.values()), 1),
            "arbiter_rss_mb": round(rss[root_pid], 1),
            "worker_rss_mb": round(sum(v for p, v in rss.items() if p != root_pid), 1)}


def lean_client(base: str, auth: dict[str, Any], cookie: str | None,
                seen: dict[Key, float], stop: threading.Event) -> websocket.WebSocket:
    """A minimal Socket.IO client over a raw WebSocket (Engine.IO v4 framing): it answers
    pings and stamps each question's first frame naming an answerer, looking only at two
    fields (real phones parse on their own CPUs)."""
    url = base.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.create_connection(url, header=[f"Cookie: {cookie}"] if cookie else [],
                                     timeout=CONNECT_TIMEOUT_S)
    if not ws.recv().startswith("0"):  # Engine.IO open
        raise ConnectionError("no Engine.IO open packet")
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
                a, q, g = ANSWERING.search(msg), QUESTION.search(msg), GAME.search(msg)
                if a and q and g:
                    seen.setdefault((int(g.group(1)), int(q.group(1))), now)

    threading.Thread(target=read, daemon=True).start()
    return ws


def client_worker(targets: list[tuple[str, str, dict[str, Any], str | None]], ready: Any,
                  out: Any, stop_event: Any) -> None:
    """Its own process: connects its clients (name of the server, base URL, auth, cookie),
    all at once, and reports, per client, when it first saw each question's answerer
    (CLOCK_MONOTONIC, comparable across processes). A client that cannot connect within
    the connect timeout (a server with no thread left for it) is reported as None."""
    stop = threading.Event()
    seen: list[dict[Key, float] | None] = [None] * len(targets)
    sockets: list[websocket.WebSocket] = []
    lock = threading.Lock()

    def connect(i: int) -> None:
        _name, base, auth, cookie = targets[i]
        s: dict[Key, float] = {}
        try:
            ws = lean_client(base, auth, cookie, s, stop)
        except Exception:
            return
        with lock:
            sockets.append(ws)
            seen[i] = s

    threads = [threading.Thread(target=connect, args=(i,)) for i in range(len(targets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ready.put(sum(s is not None for s in seen))
    stop_event.wait()
    stop.set()
    for ws in sockets:
        with contextlib.suppress(Exception):
            ws.close()
    out.put([(t[0], s) for t, s in zip(targets, seen, strict=True)])


def post(url: str, body: dict[str, Any]) -> None:
    req = urllib.request.Request(url, method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).close()


def capture_frames(base: str, cookie: str, host: socketio.Client, q: int) -> dict[str, Any]:
    """Play question `q` once with one extra client per room and keep, per room, the frame
    that named the answerer: the payloads the floor broadcasts."""
    frames: dict[str, Any] = {"host": None}
    got = threading.Event()

    def keeper(room: str):
        def on_view(data: Any) -> None:
            if (data.get("view") or {}).get("answering") is not None:
                frames[room] = data
                if all(v is not None for v in frames.values()):
                    got.set()
        return on_view

    host.on("view", keeper("host"))
    extra = []
    for room, auth in [("board", {"role": "board"})] + [
            (f"player:{s}", {"role": "player", "seat": s}) for s in range(3)]:
        frames[room] = None
        c = socketio.Client(reconnection=False)
        c.on("view", keeper(room))
        c.connect(base, auth=auth, transports=["websocket"], wait_timeout=10)
        extra.append(c)
    assert host.call("command", {"type": "announce"}, timeout=10)["ok"]
    post(base + "/api/sim/press", {"player": q % 3})
    if not got.wait(5):
        raise SystemExit("capture: not every room got a frame naming the answerer")
    assert host.call("command", {"type": "judge", "verdict": "right"}, timeout=10)["ok"]
    assert host.call("command", {"type": "next"}, timeout=10)["ok"]
    host.on("view", lambda data: None)
    for c in extra:
        c.disconnect()
    return frames


def start_bare(port: int, settle_ms: float, db: Path) -> subprocess.Popen[Any]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "bare_broadcast.py"),
                             "--port", str(port), "--settle-ms", str(settle_ms),
                             "--db", str(db)],
                            cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/board", timeout=2):
                return proc
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the bare broadcast server did not start")


def stop_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def latencies(t0s: list[tuple[float, Key]], seen: list[dict[Key, float]]
              ) -> tuple[list[float], int]:
    """Every (question, client) delay in ms, and the count of frames that never came."""
    out: list[float] = []
    missing = 0
    for t0, key in t0s:
        for s in seen:
            if key in s:
                out.append((s[key] - t0) * 1000)
            else:
                missing += 1
    return out, missing


def per_question(t0s: list[tuple[float, Key]], seen: list[dict[Key, float]],
                 f0s: list[tuple[float, Key]], floor_seen: list[dict[Key, float]],
                 target: float = 1.3) -> dict[str, Any]:
    """Question by question, the real server's p99 over its clients against the floor's p99
    for the question timed beside it (same load): so that one question the host starved
    (a page fault, a neighbour's burst) shows as one question, not as the whole p99."""
    ratios: list[tuple[float, int]] = []
    for q, ((t0, key), (f0, fkey)) in enumerate(zip(t0s, f0s, strict=False), start=1):
        real = [(s[key] - t0) * 1000 for s in seen if key in s]
        floor = [(s[fkey] - f0) * 1000 for s in floor_seen if fkey in s]
        if real and floor and pct(floor, 99) > 0:
            ratios.append((pct(real, 99) / pct(floor, 99), q))
    if not ratios:
        return {"questions": 0}
    values = [r for r, _ in ratios]
    worst, worst_q = max(ratios)
    return {"questions": len(ratios), "ratio_p99_p50": round(statistics.median(values), 2),
            "ratio_p99_p90": round(pct(values, 90), 2), "worst_question": worst_q,
            "worst_ratio_p99": round(worst, 2),
            "over_target": sum(r > target for r in values)}


def floor_figures(lat: list[float], floor: list[float], missing: int) -> dict[str, Any]:
    """A floor's p50 and p99 and the real server's ratios to them."""
    if not lat or not floor:
        return {"baseline_p50_ms": None, "baseline_p99_ms": None,
                "baseline_frames_missing": missing, "ratio_p50": None, "ratio_p99": None}
    p50, p99 = statistics.median(floor), pct(floor, 99)
    return {"baseline_p50_ms": round(p50, 2), "baseline_p99_ms": round(p99, 2),
            "baseline_frames_missing": missing,
            "ratio_p50": round(statistics.median(lat) / p50, 2),
            "ratio_p99": round(pct(lat, 99) / p99, 2)}


def run_count(phones: int, questions: int, procs: int, trace: Path | None = None
              ) -> dict[str, Any]:
    port, bare_port = localserver.free_port(), localserver.free_port()
    base, bare = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{bare_port}"
    load = [round(os.getloadavg()[0], 2)]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        env = None if trace is None else {**os.environ,
                                          "SVOYAK_TRACE_DIR": str(trace / str(phones))}
        proc = localserver.start(data, port, "--no-demo", env=env)
        bare_proc = None
        try:
            pin = json.loads((data / "settings.json").read_text())["pin"]
            http = requests.Session()
            r = http.post(base + "/login", data={"pin": pin}, allow_redirects=False)
            assert r.status_code == 302, r.status_code
            cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
            host = socketio.Client(reconnection=False)
            host.connect(base, auth={"role": "host"}, headers={"Cookie": cookie},
                         transports=["websocket"], wait_timeout=10)
            res = host.call("new_game", NEW_GAME, timeout=10)
            assert res["ok"], res
            captured = capture_frames(base, cookie, host, 0)
            settle_ms = ((captured["host"].get("view") or {}).get("settings") or {}).get(
                "settle_ms")
            bare_proc = start_bare(bare_port, settle_ms, Path(tmp) / "floor.db")
            post(bare + "/payloads", captured)
            auths = [{"role": "host"}, {"role": "board"}] + [
                {"role": "player", "seat": i % 3} for i in range(phones)]
            targets = [(name, url, a, cookie if a["role"] == "host" and name == "real"
                        else None) for name, url in (("real", base), ("bare", bare))
                       for a in auths]
            ctx = mp.get_context("spawn")
            ready, out, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
            groups = [targets[i::procs] for i in range(procs)]
            workers = [ctx.Process(target=client_worker, args=(g, ready, out, stop))
                       for g in groups if g]
            for w in workers:
                w.start()
            connected = sum(ready.get(timeout=120) for _ in workers)
            time.sleep(0.5)
            # (just before the request, the (game, question) its frames name)
            t_real: list[tuple[float, Key]] = []
            t_bare: list[tuple[float, Key]] = []
            t_fair: list[tuple[float, Key]] = []
            t_durable: list[tuple[float, Key]] = []
            first_game = res["game"]  # the floors send the frames captured in it
            game = [first_game, 0]  # the real server's battle, and the q its index counts from
            error = None

            def real(q: int) -> None:
                res = host.call("command", {"type": "announce"}, timeout=10)
                if not res["ok"]:  # the battle's questions are all played: a new battle
                    started = host.call("new_game", NEW_GAME, timeout=10)
                    assert started["ok"], started
                    game[:] = [started["game"], q]
                    time.sleep(0.15)
                    res = host.call("command", {"type": "announce"}, timeout=10)
                assert res["ok"], res
                time.sleep(0.05)
                t0 = time.monotonic()
                post(base + "/api/sim/press", {"player": q % 3})
                t_real.append((t0, (game[0], q - game[1])))
                time.sleep(0.25)  # every client has it well before this (checked below)
                assert host.call("command", {"type": "judge", "verdict": "right"},
                                 timeout=10)["ok"]
                assert host.call("command", {"type": "next"}, timeout=10)["ok"]
                time.sleep(0.15)  # the frames of `next` are out before a floor is timed

            def bare_floor(q: int) -> None:
                t0 = time.monotonic()
                post(bare + "/fire", {"q": q})
                t_bare.append((t0, (first_game, q)))
                time.sleep(0.25)

            def fair_floor(q: int) -> None:
                t0 = time.monotonic()
                post(bare + "/api/sim/press", {"player": q % 3, "q": FAIR_Q + q})
                t_fair.append((t0, (first_game, FAIR_Q + q)))
                time.sleep(0.25)

            def durable_floor(q: int) -> None:
                t0 = time.monotonic()
                post(bare + "/api/sim/press", {"player": q % 3, "q": DURABLE_Q + q,
                                               "commit": True})
                t_durable.append((t0, (first_game, DURABLE_Q + q)))
                time.sleep(0.25)

            steps = [real, bare_floor, fair_floor, durable_floor]
            try:
                for q in range(1, questions + 1):
                    for step in steps[q % 4:] + steps[:q % 4]:  # each goes first in turn
                        step(q)
                    load.append(round(os.getloadavg()[0], 2))
            except Exception as e:  # a server out of threads stops answering: say so
                error = f"question {len(t_real)}: {type(e).__name__}: {e}"
                n = min(len(t_real), len(t_bare), len(t_fair), len(t_durable))
                t_real, t_bare = t_real[:n], t_bare[:n]
                t_fair, t_durable = t_fair[:n], t_durable[:n]
            stop.set()
            reports = [r for _ in workers for r in out.get(timeout=60)]
            for w in workers:
                w.join(10)
            memory = server_memory(proc.pid)
            with contextlib.suppress(Exception):
                host.disconnect()
        finally:
            stop_group(proc)
            if bare_proc is not None:
                stop_group(bare_proc)
    real = [s for name, s in reports if name == "real" and s is not None]
    floor = [s for name, s in reports if name == "bare" and s is not None]
    if trace is not None:  # the bench's side of the timeline, beside the server's
        (trace / str(phones)).mkdir(parents=True, exist_ok=True)
        (trace / str(phones) / "bench.json").write_text(json.dumps({
            "real": t_real, "fair": t_fair,
            "seen_real": [[[*k, t] for k, t in s.items()] for s in real],
            "seen_floor": [[[*k, t] for k, t in s.items()] for s in floor]}))
    lat, missing = latencies(t_real, real)
    base_lat, base_missing = latencies(t_bare, floor)
    fair_lat, fair_missing = latencies(t_fair, floor)
    durable_lat, durable_missing = latencies(t_durable, floor)
    expected = len(auths)
    result: dict[str, Any] = {
        "clients": expected, "connected": len(real), "baseline_connected": len(floor),
        "served": len(real) == expected and missing == 0 and error is None,
        "settle_ms": settle_ms,  # part of every real figure, absent from the floor
        "error": error, "questions": len(t_real),
        "frames_missing": missing, "baseline_frames_missing": base_missing,
        "p50_ms": round(statistics.median(lat), 2) if lat else None,
        "p99_ms": round(pct(lat, 99), 2) if lat else None,
        "max_ms": round(max(lat), 2) if lat else None,
        "baseline_p50_ms": round(statistics.median(base_lat), 2) if base_lat else None,
        "baseline_p99_ms": round(pct(base_lat, 99), 2) if base_lat else None,
        **memory,
        "load_average_1m": {"min": min(load), "max": max(load)},
    }
    result["ratio_p99"] = (round(result["p99_ms"] / result["baseline_p99_ms"], 2)
                           if lat and base_lat else None)
    result["adjusted"] = floor_figures(lat, fair_lat, fair_missing)
    result["adjusted"]["per_question"] = per_question(t_real, real, t_fair, floor)
    result["durable"] = floor_figures(lat, durable_lat, durable_missing)
    assert connected == len(real) + len(floor)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phones", default="10,30,60,120",
                    help="comma-separated counts of phones")
    ap.add_argument("--questions", type=int, default=40, help="measured questions per count")
    ap.add_argument("--procs", type=int, default=4, help="client processes")
    ap.add_argument("--trace", type=Path, default=None,
                    help="profile the real server's notifier into DIR/<phones>/ "
                    "(webui/tracing.py; its figures are then not comparable)")
    args = ap.parse_args()
    counts = [int(x) for x in args.phones.split(",") if x.strip()]
    result: dict[str, Any] = {"bench": "fanout", "questions": args.questions,
                              "client_processes": args.procs, "cpus": os.cpu_count()}
    for n in counts:
        r = run_count(n, args.questions, args.procs, args.trace)
        result[str(n)] = r
        print(f"{n:>4} phones: {r['connected']}/{r['clients']} connected, served "
              f"{r['served']}; p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms; floor p99 "
              f"{r['baseline_p99_ms']} ms; ratio {r['ratio_p99']}; fair floor p50 "
              f"{r['adjusted']['baseline_p50_ms']} ms, p99 {r['adjusted']['baseline_p99_ms']} "
              f"ms; adjusted ratio {r['adjusted']['ratio_p99']}; durable floor p99 "
              f"{r['durable']['baseline_p99_ms']} ms, ratio {r['durable']['ratio_p99']}; "
              f"per question: median {r['adjusted']['per_question'].get('ratio_p99_p50')}, "
              f"worst {r['adjusted']['per_question'].get('worst_ratio_p99')} (question "
              f"{r['adjusted']['per_question'].get('worst_question')}), "
              f"{r['adjusted']['per_question'].get('over_target')} over 1.3; "
              f"PSS {r['pss_mb']} MB, "
              f"RSS {r['rss_mb']} MB; load {r['load_average_1m']}", flush=True)
    result["pss_mb"] = {str(n): result[str(n)]["pss_mb"] for n in counts}
    result["rss_mb"] = {str(n): result[str(n)]["rss_mb"] for n in counts}
    result["targets"] = {"ratio_p99": 1.3, "at_phones": [30, 60], "pss_mb_at_60": 100,
                         "phones_served": 120, "ratio_checked": "adjusted.ratio_p99"}
    result["met"] = {
        "ratio_p99_raw": all((result[str(n)]["ratio_p99"] or 99) <= 1.3
                             for n in (30, 60) if n in counts) if {30, 60} & set(counts)
        else None,
        "ratio_p99_adjusted": all((result[str(n)]["adjusted"]["ratio_p99"] or 99) <= 1.3
                                  for n in (30, 60) if n in counts) if {30, 60} & set(counts)
        else None,
        "pss_mb_at_60": result["60"]["pss_mb"] <= 100 if 60 in counts else None,
        "phones_served": result["120"]["served"] if 120 in counts else None,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
