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


class SlowLoserStore(Store):
    """A real store whose commit of the losing press of each question takes a second (a
    slow fsync), so the settle window closes while it is being written."""

    loser: int | None = None

    def append(self, game, events, **kw):
        import time

        if any(e.type == "press" and e.data["player"] == self.loser for e in events):
            time.sleep(1)
        return super().append(game, events, **kw)


def play_battle(path: str, out_path: str, stall: bool, slow_loser: bool = False,
                queued: bool = False) -> None:
    """A sport battle played as fast as the loop allows, with the lamp's early subscriber
    (as `gpio.start` subscribes the outputs) writing ``lamp Q SEAT`` when a settle window's
    winner is shown, before the commit. Every acknowledged command is written as ``ack TYPE
    Q [SEAT]``. With `stall`, the lamp's subscriber then holds the loop for a second, so a
    kill lands between the lamp and the commit. With `slow_loser`, the winner presses first
    and the loser's press takes a second to commit: the lamp watch lights the lamp while it
    is being written, so a kill lands between the lamp and the loser's commit. With `queued`
    too, the third seat's wired press (later still) waits in the inbox behind that commit:
    the watch folds it in and lights the lamp before either is written."""
    import time

    from appliance.rules.protocol import press

    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    store = SlowLoserStore(path) if slow_loser else Store(path)
    loop = GameLoop(store)

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
                                 "settings": {"settle_ms": 50 if slow_loser else 5}}).result()
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
            if slow_loser:
                store.loser = (first + 1) % 3
                do(press(first, t), q, first)
                if queued:
                    pressed = [((first + 1) % 3, t + 2_000), ((first + 2) % 3, t + 3_000)]
                    futures = [(seat, loop.submit(press(seat, tick))) for seat, tick in pressed]
                    for seat, fut in futures:
                        if fut.result().refused is None:
                            os.write(out, f"ack press {q} {seat}\n".encode())
                else:
                    do(press((first + 1) % 3, t + 2_000), q, (first + 1) % 3)
            else:
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


class HeldAnswerStore(Store):
    """A real store whose commit of an answerer, once `hold` is set, never returns: a power
    cut lands while it is under way."""

    hold = False

    def append(self, game, events, **kw):
        if self.hold and any(e.type == "answerer" for e in events):
            import threading

            threading.Event().wait()
        return super().append(game, events, **kw)


SCREEN_ROLES = ("board", "player:0", "player:1", "player:2")


def play_until_cut(path: str, out_path: str, mode: str, cut_at: int) -> None:
    """A sport battle played as fast as the loop allows, with a screen subscribed as the web
    hub subscribes (``ahead``: told a deadline's decision before its commit) writing
    ``screen Q SEAT`` when it is told a question's answerer, then ``views JSON``, the views
    of the board and the seats it was told, and every acknowledged command written as ``ack
    TYPE Q [SEAT]``. The process ends at once, as in a power cut, right after the
    `cut_at`-th answerer a screen was told (`mode` "screen"), or told while that answerer's
    commit is under way and never returns ("commit"), once the loop has committed that
    answerer and written it out ("written"), or right after the `cut_at`-th acknowledged
    judgement ("judge")."""
    import json
    import threading
    import time

    from appliance.rules.protocol import press

    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    store = HeldAnswerStore(path)
    loop = GameLoop(store)
    told = threading.Semaphore(0)
    screens = 0

    def screen(update):
        nonlocal screens
        for e in update.events:
            if e.type == "answerer":
                q = update.rules.view(update.state, "board")["question_index"]
                views = {role: update.rules.view(update.state, role) for role in SCREEN_ROLES}
                os.write(out, f"screen {q} {e.data['player']}\n".encode()
                         + f"views {json.dumps(views, ensure_ascii=False)}\n".encode())
                screens += 1
                if mode in ("screen", "commit") and screens == cut_at:
                    os._exit(0)
                told.release()

    loop.subscribe(screen, ahead=True)
    loop.start()
    loop.new_game("battle", {"players": ["А", "Б", "В"],
                             "themes": [{"name": f"Тема {i}"} for i in range(40)],
                             "settings": {"settle_ms": 50}}).result()
    judged = 0
    for n in range(1, 1000):
        assert loop.submit(Command("announce")).result().refused is None
        rules, state = loop.snapshot()
        q = rules.view(state, "board")["question_index"]
        t = time.monotonic_ns()
        first = n % 3
        store.hold = mode == "commit" and n == cut_at
        # both queued at once, well inside the settle window: after the answerer the child
        # sends nothing until the next question, so the cut state is the one last told
        pressed = [(seat, loop.submit(press(seat, tick)))
                   for seat, tick in (((first + 1) % 3, t + 2_000), (first, t))]
        for seat, fut in pressed:
            if fut.result().refused is None:
                os.write(out, f"ack press {q} {seat}\n".encode())
        if not told.acquire(timeout=5):
            raise SystemExit("no screen was told the answerer")
        if mode == "written" and n == cut_at:
            limit = time.monotonic() + 5
            # committed (the screens are told before the commit), then written out
            while (rules.view(loop.snapshot()[1], "board").get("answering") is None
                   or loop.store.unsynced):
                if time.monotonic() > limit:
                    raise SystemExit("the answerer was never written out")
                time.sleep(0.0005)
            os._exit(0)
        if loop.submit(Command("judge", 0, {"verdict": "right"})).result().refused is None:
            os.write(out, f"ack judge {q}\n".encode())
            judged += 1
            if mode == "judge" and judged == cut_at:
                os._exit(0)
        assert loop.submit(Command("next")).result().refused is None
    raise SystemExit("the cut never came")


def open_window(path: str, out_path: str, window_s: float) -> None:
    """A sport question whose reading is done: its `window_s` window runs, nobody presses,
    and the child waits to be killed. Writes ``window T`` (the box clock, ns) once the
    window has started."""
    import time

    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    loop = GameLoop(Store(path)).start()
    loop.new_game("battle", {"players": ["А", "Б"], "themes": [{"name": "Тема"}],
                             "settings": {"window_s": window_s}}).result()
    for type_ in ("announce", "reading_done"):
        result = loop.submit(Command(type_)).result()
        assert result.refused is None, result.refused
    os.write(out, f"window {time.monotonic_ns()}\n".encode())
    while True:
        time.sleep(1)
