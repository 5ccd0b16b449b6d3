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
