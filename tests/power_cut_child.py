"""Child process of the power-cut test: feeds commands to the game loop as fast as it can and
prints ``ack N K`` after command N (K events) is committed, until it is killed."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiny_engine  # noqa: E402

from appliance import engines  # noqa: E402
from appliance.engine import Command  # noqa: E402
from appliance.loop import GameLoop  # noqa: E402
from appliance.store import Store  # noqa: E402


def main(path: str) -> None:
    engines.register("tiny", tiny_engine)
    loop = GameLoop(Store(path)).start()
    if loop.current is None:
        loop.new_game("tiny", {"players": ["A", "B"]}).result()
    n = loop.snapshot()[1].last_burst
    print(f"ready {n}", flush=True)
    while True:
        n += 1
        k = 1 + n % 7
        out = loop.submit(Command("burst", 0, {"k": k, "n": n})).result()
        assert out.refused is None, out.refused
        print(f"ack {n} {k}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
