"""A hostile phone on the box's Wi-Fi: a real `svoyak serve --simulate` on loopback with
a host, a board and N well-behaved phones (60 by default, each from its own loopback
address, as phones on the Wi-Fi are), and one hostile client at 127.0.0.2 that storms
presses at 1,000/s over every socket it can get and keeps opening new sockets.

Measured, first without the storm (the floor) and then during it:
- the host's command round trip (a command through the socket, the game loop and back),
  p50/p99 (target p99 under 100 ms during the storm);
- presses and lobby changes of the well-behaved phones that were lost: not answered within
  5 s, or answered "too fast"/"busy"/"error" (target 0);
- the hostile client's sockets admitted and refused, its messages answered "too fast";
- the server's RSS before the storm and 5 s after it ends (target: within 10 MB).

Everything stays on loopback; the run is bounded by --seconds. JSON on the last line.

    .venv/bin/python bench/flood.py [--phones 60] [--seconds 10] [--rate 1000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests
import websocket

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from procs import children  # noqa: E402
from stats import pct  # noqa: E402

from webui import localserver  # noqa: E402

LOST_CODES = {"rate_limited", "busy", "error"}


def worker_pid(root: int) -> int:
    return next(iter(children(root)), root)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


class Lean:
    """A minimal Socket.IO client over one raw WebSocket (Engine.IO v4 framing) from a
    chosen source address: it answers pings, sends events with ack ids and records when
    each ack came back."""

    def __init__(self, port: int, source: str, auth: dict[str, Any], cookie: str = ""):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                        source_address=(source, 0))
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket", socket=sock,
            header=[f"Cookie: {cookie}"] if cookie else [], timeout=10)
        assert self.ws.recv().startswith("0")
        self.ws.send("40" + json.dumps(auth))
        self.lock = threading.Lock()
        self.next_id = 0
        self.sent: dict[int, float] = {}
        self.acks: dict[int, tuple[float, Any]] = {}
        self.alive = True
        self.ws.settimeout(None)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while self.alive:
            try:
                msg = self.ws.recv()
            except Exception:
                self.alive = False
                return
            now = time.monotonic()
            if msg == "2":
                with self.lock:
                    self.ws.send("3")
            elif msg.startswith("43"):
                digits = ""
                for ch in msg[2:]:
                    if not ch.isdigit():
                        break
                    digits += ch
                body = msg[2 + len(digits):]
                try:
                    answer = json.loads(body)[0]
                except (ValueError, IndexError):
                    answer = None
                self.acks[int(digits)] = (now, answer)

    def emit(self, name: str, data: Any) -> int:
        with self.lock:
            ack = self.next_id
            self.next_id += 1
            self.sent[ack] = time.monotonic()
            self.ws.send(f"42{ack}" + json.dumps([name, data]))
        return ack

    def close(self) -> None:
        self.alive = False
        with contextlib.suppress(Exception):
            self.ws.close()


def host_round_trips(host: Lean, seconds: float, period: float = 0.05) -> list[float]:
    """Commands the engine refuses at once (an unknown type) still go through the socket,
    the hub and the game loop's queue: their round trip is what a storm would delay."""
    ids = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ids.append(host.emit("command", {"type": "bench_ping"}))
        time.sleep(period)
    time.sleep(1.0)
    return [(host.acks[i][0] - host.sent[i]) * 1000 for i in ids if i in host.acks] + \
        [float("inf")] * sum(1 for i in ids if i not in host.acks)


def phones_play(phones: list[Lean], seconds: float, stop: threading.Event) -> list[int]:
    """Each phone sends what a person does: a press (seated) or a lobby name (lobby) about
    once a second. Returns the ack ids sent, per phone."""
    sent: list[list[int]] = [[] for _ in phones]
    end = time.monotonic() + seconds
    k = 0
    while time.monotonic() < end and not stop.is_set():  # type: ignore[attr-defined]
        for i, phone in enumerate(phones):
            if i < 3:
                sent[i].append(phone.emit("press", {}))
            elif k % 2 == 0:
                sent[i].append(phone.emit("seat", {"seat": None, "name": f"Игрок {i}"}))
        k += 1
        time.sleep(1.0)
    return [len(s) for s in sent]


def lost(phones: list[Lean]) -> int:
    n = 0
    for phone in phones:
        for ack in phone.sent:
            got = phone.acks.get(ack)
            if got is None or isinstance(got[1], dict) and got[1].get("ok") is False and \
                    got[1].get("refused", {}).get("code") in LOST_CODES:
                n += 1
    return n


def storm(port: int, rate: float, stop: Any, queue: Any) -> None:
    """The hostile client, in its own process (so its sending does not slow the bench's
    own measuring): as many board sockets as the box grants 127.0.0.2 (board keys press
    for any seat in simulator mode), presses at `rate` a second spread over them, and a
    new socket attempt every 20 ms."""
    sockets: list[Lean] = []
    out = {"admitted": 0, "refused": 0, "presses": 0}

    def opener() -> None:
        while not stop.is_set():
            try:
                sockets.append(Lean(port, "127.0.0.2", {"role": "board"}))
                out["admitted"] += 1
            except Exception:
                out["refused"] += 1
            time.sleep(0.02)

    threading.Thread(target=opener, daemon=True).start()
    interval = 1.0 / rate
    t = time.monotonic()
    i = 0
    while not stop.is_set():
        live = [s for s in sockets if s.alive]
        if live:
            try:
                live[i % len(live)].emit("press", {"player": i % 3})
                out["presses"] += 1
            except Exception:
                pass
            i += 1
        t += interval
        delay = t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        elif delay < -0.5:
            t = time.monotonic()  # fell behind: do not burst to catch up
    out["too_fast"] = sum(1 for s in sockets for _, a in s.acks.values()
                          if isinstance(a, dict) and a.get("refused", {}).get("code")
                          == "rate_limited")
    out["answered"] = sum(len(s.acks) for s in sockets)
    for s in sockets:
        s.close()
    queue.put(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phones", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=1000.0, help="hostile presses a second")
    args = ap.parse_args()
    port = localserver.free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        proc = localserver.start(data, port)  # the demo battle is the running game
        phones: list[Lean] = []
        try:
            pid = worker_pid(proc.pid)
            pin = json.loads((data / "settings.json").read_text())["pin"]
            http = requests.Session()
            r = http.post(base + "/login", data={"pin": pin}, allow_redirects=False)
            assert r.status_code == 302, r.status_code
            cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
            host = Lean(port, "127.0.0.1", {"role": "host"}, cookie)
            board = Lean(port, "127.0.0.1", {"role": "board"})
            for i in range(args.phones):
                phone = Lean(port, f"127.0.{1 + i // 250}.{1 + i % 250}",
                             {"role": "player", **({"seat": i} if i < 3 else {})})
                phones.append(phone)
            time.sleep(1.0)
            threads_before = threads(pid)
            rss_before = rss_mb(pid)
            floor = host_round_trips(host, min(args.seconds, 5.0))
            for p in phones:
                p.sent.clear()
                p.acks.clear()
            ctx = mp.get_context("spawn")
            stop, queue = ctx.Event(), ctx.Queue()
            storm_proc = ctx.Process(target=storm, args=(port, args.rate, stop, queue))
            storm_proc.start()
            phone_result: list[list[int]] = []
            phone_thread = threading.Thread(
                target=lambda: phone_result.append(phones_play(phones, args.seconds, stop)))
            time.sleep(0.5)
            phone_thread.start()
            during = host_round_trips(host, args.seconds)
            rss_peak = rss_mb(pid)
            stop.set()
            hostile: dict[str, int] = queue.get(timeout=60)
            storm_proc.join(30)
            phone_thread.join(30)
            time.sleep(6.0)  # late acks arrive; the hostile sockets close
            phones_lost = lost(phones)
            phone_msgs = sum(len(p.sent) for p in phones)
            time.sleep(5.0)
            rss_after = rss_mb(pid)
            board_alive = board.alive and host.alive
            stats = http.get(base + "/admin/api/stats", timeout=5)
            server_stats = stats.json() if stats.status_code == 200 else {}
            host.close()
            board.close()
        finally:
            for p in phones:
                p.close()
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
    finite = [x for x in during if x != float("inf")]
    result = {
        "bench": "flood", "phones": args.phones, "seconds": args.seconds,
        "storm_rate": args.rate, "load_average_1m": round(os.getloadavg()[0], 2),
        "floor_host_p50_ms": round(statistics.median(floor), 2),
        "floor_host_p99_ms": round(pct(floor, 99), 2),
        "storm_host_p50_ms": round(statistics.median(finite), 2) if finite else None,
        "storm_host_p99_ms": round(pct(during, 99), 2),
        "host_unanswered": len(during) - len(finite),
        "p99_ratio": round(pct(during, 99) / max(pct(floor, 99), 0.001), 2),
        "phone_messages": phone_msgs, "phone_messages_lost": phones_lost,
        "hostile": hostile, "screens_connected_after": board_alive,
        "server": server_stats,
        "threads_before": threads_before,
        "rss_before_mb": round(rss_before, 1), "rss_peak_mb": round(rss_peak, 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_growth_mb": round(rss_after - rss_before, 1),
    }
    print(f"host round trip: floor p50 {result['floor_host_p50_ms']} ms, "
          f"p99 {result['floor_host_p99_ms']} ms; during the storm p50 "
          f"{result['storm_host_p50_ms']} ms, p99 {result['storm_host_p99_ms']} ms "
          f"(ratio {result['p99_ratio']})")
    print(f"phones: {phones_lost} of {phone_msgs} messages lost; hostile: {hostile}")
    print(f"RSS {result['rss_before_mb']} → {result['rss_after_mb']} MB "
          f"(peak {result['rss_peak_mb']}); load average {result['load_average_1m']}")
    print(json.dumps(result, ensure_ascii=False))
    ok = (result["storm_host_p99_ms"] < 100 and phones_lost == 0
          and abs(result["rss_growth_mb"]) <= 10)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
