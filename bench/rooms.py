"""The rooms link under a festival's load: 27 rooms, one broker, one director.

One Mosquitto configured from the provisioning role's own templates (`roles/broker`), one
director (`svoyak serve`, with a real tournament of 81 entries drawn into a bracket of 81:
27 battles of the 1/27 final, one per room; themes from a package of enough made-up ones),
and 27 simulated room boxes in this process: each takes its
assignment from the broker, plays its battle with the real battle engine (announce, press,
judge right, next) and publishes every command's events as a room box does, one question
every `--pace` seconds, then its result (a battle of `--questions` questions ends before
its last theme: the tournament records it as stopped, as for a battle its host ended
early). A board client on the director's Socket.IO
(`rooms_live`, what the director's TV shows) times each verdict: from just before the room
publishes the judged events to the moment the board holds the new scores.

The floor, in the same run and at the same time: a bare Mosquitto (no auth, no ACL;
Nagle's algorithm off on it and its clients, as on the box's) with one publisher and one
subscriber in this process doing round trips of a message of the same size every 20 ms.
Figures: verdict→screen p50/p99, the floor's p50/p99 and the p99 ratio, events published vs
applied by the director (lost = the difference; the rooms here do not resend), results
applied, the director's CPU (user+system over the run, as a share of one core) and memory
(PSS and RSS of the gunicorn arbiter and worker), load average. JSON last.

Targets: p99 under 1 s, 0 messages lost (issue 16); ratio_p99 at most 4 at 27 rooms (issue
24).

    .venv/bin/python bench/rooms.py [--rooms 27] [--questions 10] [--pace 2.0]

`--rooms` is a power of 3 (3, 9, 27, 81): the first stage then has one battle per room.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jinja2  # noqa: E402
import paho.mqtt.client as mqtt  # noqa: E402
import requests  # noqa: E402
import socketio  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402
from stats import pct  # noqa: E402

from appliance.packages import jsonform  # noqa: E402
from appliance.packages.model import Item, ItemType, Package, Question, Round, Theme  # noqa: E402
from appliance.rules import registry  # noqa: E402
from appliance.rules.protocol import Command, Event  # noqa: E402
from appliance.runtime.loop import GameLoop  # noqa: E402
from appliance.runtime.store import Store, db_path  # noqa: E402
from appliance.runtime.tournament import TournamentShell  # noqa: E402
from rooms import config, messages, topics  # noqa: E402
from rooms.db import Tables  # noqa: E402
from rooms.link import no_delay  # noqa: E402
from webui import localserver  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "provisioning" / "roles" / "broker" / "templates"
PASSWD_TOOL = ROOT / "provisioning" / "roles" / "broker" / "files" / "svoyak-broker-passwd"
MOSQUITTO = shutil.which("mosquitto", path="/usr/sbin:/usr/bin:/sbin:/bin") or "mosquitto"
S = 1_000_000_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_mosquitto(conf: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit("mosquitto did not start")


def passwd_copy(tmp: Path) -> Path:
    """Where the broker reads its passwords: the box's copy, made from the director's file
    by the role's own tool before mosquitto starts (as the drop-in runs it on the box)."""
    return tmp / "run" / "svoyak.passwd"


def copy_passwords(tmp: Path) -> None:
    subprocess.run([sys.executable, str(PASSWD_TOOL), str(tmp / "passwd"),
                    str(passwd_copy(tmp))], check=True, capture_output=True, timeout=30)


def broker_files(tmp: Path, port: int) -> Path:
    """The role's templates rendered as the role would (loopback, files in `tmp`)."""
    root = os.geteuid() == 0
    if root:
        shutil.chown(tmp, "root", "mosquitto")
        tmp.chmod(0o750)
    (tmp / "persist").mkdir()
    if root:
        shutil.chown(tmp / "persist", "mosquitto", "mosquitto")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    v = {"ansible_managed": "bench/rooms.py", "broker_pid_file": "",
         "broker_passwd": str(tmp / "passwd"), "broker_acl": str(tmp / "svoyak.acl"),
         "broker_passwd_copy": str(passwd_copy(tmp)),
         "broker_port": port, "broker_address": "127.0.0.1", "broker_interface": "",
         "broker_persistence_dir": f"{tmp}/persist/", "broker_autosave_s": 30,
         "broker_max_queued": 100000, "broker_log_dest": "stderr"}
    (tmp / "svoyak.acl").write_text(env.get_template("svoyak.acl.j2").render(**v))
    conf = tmp / "mosquitto.conf"
    conf.write_text(env.get_template("mosquitto.conf.j2").render(**v))
    for f in (tmp / "svoyak.acl", conf):
        if root:
            shutil.chown(f, "root", "mosquitto")
        f.chmod(0o640)
    return conf


def proc_tree(pid: int) -> list[int]:
    out = [pid]
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


def cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def mem_mb(pids: list[int], key: str) -> float:
    kb = 0
    for pid in pids:
        path = Path(f"/proc/{pid}/status" if key == "VmRSS" else f"/proc/{pid}/smaps_rollup")
        try:
            for line in path.read_text().splitlines():
                if line.startswith(key + ":"):
                    kb += int(line.split()[1])
        except OSError:
            pass
    return round(kb / 1024, 1)


def package_file(path: Path, themes: int) -> Path:
    """A package of `themes` made-up themes (none is played twice in a tournament)."""
    def theme(name: str) -> Theme:
        return Theme(name, [Question(v, content=[Item(ItemType.TEXT, f"{name}: {v}?")],
                                     right=[f"ответ {v}"]) for v in (10, 20, 30, 40, 50)])
    pkg = Package("Турнир залов", [Round("Основные", [theme(f"Тема {i + 1}")
                                                      for i in range(themes)])])
    path.write_text(json.dumps(jsonform.to_dict(pkg), ensure_ascii=False), "utf-8")
    return path


def tournament(data: Path, entries: int) -> None:
    """The director's tournament, as its director makes one: entries (each of its own
    team), the draw."""
    store = Store(db_path(data))
    loop = GameLoop(store).start()
    shell = TournamentShell(loop)
    try:
        shell.create({"title": "Бенчмарк залов"})
        shell.submit({"type": "import_entries", "entries": [
            {"name": f"Игрок {i:03d}", "team": f"Команда {i:03d}"}
            for i in range(1, entries + 1)]})
        shell.submit({"type": "draw", "seed": 1})
    finally:
        shell.close()
        loop.stop()
        store.close()


class SimRoom:
    """A room box reduced to what the link sees: the real battle engine, a log with
    sequence numbers, and the room's MQTT credentials."""

    def __init__(self, room: str, code: str, port: int):
        self.room, self.box = room, f"bench-{room}"
        self.rules = registry.get("battle")
        self.assignment: dict[str, Any] | None = None
        self.got = threading.Event()
        self.seq = 0
        self.t = 10 * S
        self.published = 0  # events
        self.verdicts: list[tuple[tuple[int, ...], float]] = []  # (scores after, t0)
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=room, protocol=mqtt.MQTTv5)
        c.username_pw_set(room, code)
        c.on_message = self._on_message
        c.on_socket_open = no_delay  # as a room box's link does
        c.on_connect = lambda cl, *_: cl.subscribe(topics.down_all(room), qos=1)
        c.connect("127.0.0.1", port, keepalive=30)
        c.loop_start()
        self.client = c

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        if msg.topic.endswith("/assignment") and msg.payload and self.assignment is None:
            a = json.loads(msg.payload)  # the first battle only: one battle per room here
            if a.get("battle"):
                self.assignment = a
                self.state = self.rules.initial(a["setup"])
                self.game = 1
                self.got.set()

    def _send(self, events: list[Event]) -> None:
        out = []
        wall = time.time()
        from datetime import UTC, datetime

        iso = datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds")
        for e in events:
            self.seq += 1
            out.append({"seq": self.seq, "t_ns": e.t_ns, "wall": iso, "type": e.type,
                        "payload": dict(e.data)})
        msg = messages.events_message(self.box, self.game, self.assignment["battle"], out,
                                      self.assignment["id"])
        self.client.publish(topics.up(self.room, topics.EVENTS), messages.encode(msg), qos=1)
        self.published += len(out)

    def step(self, kind: str) -> None:
        """One host command, its events published like a room box does after commit."""
        self.t += S
        args = {"player": 0} if kind == "press" else {"verdict": "right"} if kind == "judge" \
            else {}
        events = self.rules.decide(self.state, Command(kind, self.t, args))
        for e in events:
            self.state = self.rules.evolve(self.state, e)
        if kind == "judge":
            scores = tuple(self.state.scores())
            self.verdicts.append((scores, time.monotonic()))
        self._send(events)

    def result(self) -> None:
        summary = json.loads(json.dumps(self.rules.summary(self.state)))
        msg = messages.result_message(self.box, self.game, self.assignment["battle"],
                                      self.seq, summary, self.room, self.assignment["id"])
        self.client.publish(topics.up(self.room, topics.RESULT), messages.encode(msg), qos=1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Floor:
    """Bare Mosquitto round trips, measured while the rooms run."""

    def __init__(self, port: int, size: int):
        self.lat: list[float] = []
        self.sent: dict[int, float] = {}
        self.payload = b"x" * size
        self.stop = threading.Event()
        self.sub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="floor-sub",
                               protocol=mqtt.MQTTv5)
        self.sub.on_message = self._on_message
        self.sub.on_socket_open = no_delay  # the same TCP settings as the rooms' clients
        self.sub.connect("127.0.0.1", port)
        self.sub.subscribe("floor/#", qos=1)
        self.sub.loop_start()
        self.pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="floor-pub",
                               protocol=mqtt.MQTTv5)
        self.pub.on_socket_open = no_delay
        self.pub.connect("127.0.0.1", port)
        self.pub.loop_start()
        time.sleep(0.3)

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        n = int(msg.topic.rsplit("/", 1)[1])
        t0 = self.sent.pop(n, None)
        if t0 is not None:
            self.lat.append((time.monotonic() - t0) * 1000)

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            self.sent[n] = time.monotonic()
            self.pub.publish(f"floor/{n}", self.payload, qos=1)
            time.sleep(0.02)

    def close(self) -> None:
        for c in (self.sub, self.pub):
            c.disconnect()
            c.loop_stop()


def recorded(status: dict[str, Any]) -> int:
    """Battles whose room's result is in the tournament (won, or stopped early)."""
    return sum(1 for b in status["bracket"]["battles"] if b["status"] in ("done", "stopped"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rooms", type=int, default=27)
    ap.add_argument("--questions", type=int, default=10, help="questions per battle")
    ap.add_argument("--pace", type=float, default=2.0, help="seconds per question per room")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="svoyak-bench-rooms-"))
    procs: list[subprocess.Popen[Any]] = []
    rooms: list[SimRoom] = []
    try:
        port, bare_port = free_port(), free_port()
        conf = broker_files(tmp, port)
        bare = tmp / "bare.conf"
        # the role's TCP setting too, so the floor differs from the rooms' broker only in
        # what the link adds (auth, the access list, persistence)
        bare.write_text(f"listener {bare_port} 127.0.0.1\nallow_anonymous true\n"
                        "set_tcp_nodelay true\n")
        data = tmp / "director"
        config.make_director(data, "127.0.0.1", port, tmp / "passwd",
                             str(package_file(tmp / "package.json", 6 * args.rooms)))
        codes = [config.add_room(data) for _ in range(args.rooms)]
        if os.geteuid() == 0:
            shutil.chown(tmp / "passwd", "root", "mosquitto")
        tournament(data, 3 * args.rooms)
        copy_passwords(tmp)
        procs.append(start_mosquitto(conf, port))
        procs.append(start_mosquitto(bare, bare_port))
        web_port = localserver.free_port()
        director = localserver.start(data, web_port, "--no-demo")
        procs.append(director)
        base = f"http://127.0.0.1:{web_port}"

        arrivals: dict[str, list[tuple[tuple[int, ...], float]]] = {}
        board = socketio.Client(reconnection=False)

        def on_live(msg: dict[str, Any]) -> None:
            scores = tuple(p["score"] for p in msg["live"].get("players") or [])
            arrivals.setdefault(msg["room"], []).append((scores, time.monotonic()))

        board.on("rooms_live", on_live)
        board.connect(base, auth={"role": "board"}, transports=["websocket"], wait_timeout=10)
        rooms = [SimRoom(c["room"], c["code"], port) for c in codes]
        for r in rooms:
            if not r.got.wait(30):
                raise SystemExit(f"{r.room}: no assignment")
        floor = Floor(bare_port, size=len(messages.encode({"x": "y" * 900})))
        floor_thread = threading.Thread(target=floor.run, daemon=True)
        pids = proc_tree(director.pid)
        cpu0, t0 = cpu_s(pids), time.monotonic()
        floor_thread.start()
        # Rooms start staggered over one pace, as rooms of a festival do.
        start = time.monotonic()
        offsets = [args.pace * i / len(rooms) for i in range(len(rooms))]
        steps = ["announce", "press", "judge", "next"]
        for q in range(args.questions):
            for i, r in enumerate(rooms):
                due = start + q * args.pace + offsets[i]
                time.sleep(max(0.0, due - time.monotonic()))
                for k in steps if q < args.questions - 1 else steps[:3]:
                    r.step(k)
        for r in rooms:
            r.result()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = requests.get(base + "/rooms/status.json", timeout=5).json()
            if recorded(st) >= len(rooms):
                break
            time.sleep(0.2)
        wall = time.monotonic() - t0
        cpu = cpu_s(pids) - cpu0
        pss, rss = mem_mb(pids, "Pss"), mem_mb(pids, "VmRSS")
        floor.stop.set()
        floor_thread.join(5)
        floor.close()
        board.disconnect()
        results = recorded(st)
        latencies: list[float] = []
        missing = 0
        for r in rooms:
            got = arrivals.get(r.room, [])
            for scores, sent in r.verdicts:
                seen = [t for s, t in got if s == scores and t >= sent]
                if seen:
                    latencies.append((min(seen) - sent) * 1000)
                else:
                    missing += 1
        os.killpg(director.pid, signal.SIGTERM)
        director.wait(20)
        tables = Tables(db_path(data), "")
        applied = int(tables.query("SELECT count(*) FROM rooms_applied")[0][0])  # type: ignore
        tables.close()
        published = sum(r.published for r in rooms)
    finally:
        for r in rooms:
            r.close()
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)
    out = {
        "bench": "rooms", "rooms": len(rooms), "questions_per_battle": args.questions,
        "pace_s": args.pace, "verdicts": len(latencies) + missing,
        "verdicts_not_on_screen": missing,
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(pct(latencies, 99), 1), "max_ms": round(max(latencies), 1),
        "floor_p50_ms": round(statistics.median(floor.lat), 2),
        "floor_p99_ms": round(pct(floor.lat, 99), 2),
        "ratio_p99": round(pct(latencies, 99) / pct(floor.lat, 99), 1),
        "events_published": published, "events_applied": applied,
        "events_lost": published - applied, "results_applied": results,
        "director_cpu_share": round(cpu / wall, 3), "director_pss_mb": pss,
        "director_rss_mb": rss, "load_average_1m": os.getloadavg()[0],
    }
    print(f"verdict → director's TV: p50 {out['p50_ms']} ms, p99 {out['p99_ms']} ms "
          f"(floor, bare mosquitto round trip: p50 {out['floor_p50_ms']} ms, p99 "
          f"{out['floor_p99_ms']} ms; ratio {out['ratio_p99']})")
    print(f"events: {published} published, {applied} applied, lost {published - applied}; "
          f"results {results}/{len(rooms)}; verdicts never on screen: {missing}")
    print(f"director: {out['director_cpu_share'] * 100:.1f}% of a core, PSS {pss} MB, "
          f"RSS {rss} MB; load average {out['load_average_1m']:.2f}")
    print(json.dumps(out))
    return 0 if out["events_lost"] == 0 and missing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
