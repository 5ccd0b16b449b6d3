"""Child process of the power-cut test: feeds commands to the game loop as fast as it can and
appends ``ack N K`` to the ack file after command N (K events) is committed, until it is
killed. The parent forks it from a forkserver with these modules already imported, so a
kill costs no interpreter start-up; ``python tests/power_cut_child.py DB ACKS`` runs it by
hand."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiny_engine  # noqa: E402

from appliance.rules import registry  # noqa: E402
from appliance.rules.protocol import Command  # noqa: E402
from appliance.runtime.loop import GameLoop  # noqa: E402
from appliance.runtime.store import Store  # noqa: E402


def run(path: str, acks: str) -> None:
    out = os.open(acks, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # unbuffered: one write a line
    registry.register("tiny", tiny_engine)
    loop = GameLoop(Store(path)).start()
    if loop.current is None:
        loop.new_game("tiny", {"players": ["A", "B"]}).result()
    n = loop.snapshot()[1].last_burst
    os.write(out, f"ready {n}\n".encode())
    while True:
        n += 1
        k = 1 + n % 7
        result = loop.submit(Command("burst", 0, {"k": k, "n": n})).result()
        assert result.refused is None, result.refused
        os.write(out, f"ack {n} {k}\n".encode())


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])


def play_battle(path: str, out_path: str, stall: bool) -> None:
    """A sport battle played as fast as the loop allows, with the lamp's early subscriber
    (as `gpio.start` subscribes the outputs) writing ``lamp Q SEAT`` when a settle window's
    winner is shown, before the commit. Every acknowledged command is written as ``ack TYPE
    Q [SEAT]``. With `stall`, the lamp's subscriber then holds the loop for a second, so a
    kill lands between the lamp and the commit."""
    import time

    from appliance.rules.protocol import press

    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    loop = GameLoop(Store(path))

    def lamp(update):
        if update.committed:
            return
        for e in update.events:
            if e.type == "answerer":
                q = update.rules.view(update.state, "board")["question_index"]
                os.write(out, f"lamp {q} {e.data['player']}\n".encode())
                if stall:
                    time.sleep(1)

    loop.subscribe(lamp, inline=True, early=True)
    loop.start()
    if loop.current is None:
        loop.new_game("battle", {"players": ["А", "Б", "В"],
                                 "themes": [{"name": f"Тема {i}"} for i in range(400)],
                                 "settings": {"settle_ms": 5}}).result()
    os.write(out, b"ready\n")

    def do(cmd, q, *extra):
        result = loop.submit(cmd).result()
        if result.refused is None:
            os.write(out, " ".join(["ack", cmd.type, str(q), *map(str, extra)]).encode()
                     + b"\n")

    n = 0
    while True:
        rules, state = loop.snapshot()
        v = rules.view(state, "board")
        q = v["question_index"]
        if v["phase"] == "ready":
            do(Command("announce"), "next")
        elif v["phase"] == "open":
            n += 1
            t = time.monotonic_ns()
            first = n % 3
            do(press((first + 1) % 3, t + 2_000), q, (first + 1) % 3)
            do(press(first, t), q, first)
            limit = time.monotonic() + 2
            while rules.view(loop.snapshot()[1], "board")["phase"] == "open":
                if time.monotonic() > limit:
                    raise SystemExit("the settle window never closed")
                time.sleep(0.001)
        elif v["phase"] == "answering":
            do(Command("judge", 0, {"verdict": "right"}), q)
        elif v["phase"] == "closed":
            do(Command("next"), q)
        else:
            raise SystemExit(f"unexpected phase {v['phase']}")
