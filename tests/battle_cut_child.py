"""Child process of the battle start/end power-cut test (`test_battle_cut.py`).

`prepare(db)` writes a drawn tournament. `run(db, phase, cut, acks)` opens it as the box
does (resume, the director, reconcile), starts the first ready battle and, for phase
``end``, plays it and ends it. While the phase is under way ("armed") it counts the SQL
statements the event log's connection begins and, at statement number `cut`, kills itself
with SIGKILL before that statement runs (`cut` past the last one: once the phase is
over): a power cut at every step of the phase, down to each statement of each
transaction. Acknowledgements go to `acks`, one unbuffered line
each: ``ack started GAME``, ``ack ended``, ``ack done``, then ``steps N`` (statements the
armed phase ran; the parent cuts at each of them)."""

from __future__ import annotations

import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from drive import FakeClock  # noqa: E402
from tournament_kit import Host, package  # noqa: E402

from appliance.rules.tournament import views  # noqa: E402
from appliance.rules.tournament.state import DONE  # noqa: E402
from appliance.runtime.loop import GameLoop  # noqa: E402
from appliance.runtime.store import Store  # noqa: E402
from appliance.runtime.tournament import TournamentShell  # noqa: E402

PACKAGE = package(60, 10)


def prepare(db: str) -> None:
    loop = GameLoop(Store(db)).start()
    d = TournamentShell(loop)
    d.create({"title": "Обрыв"})
    d.submit({"type": "import_entries",
              "entries": [{"name": f"И{i}", "team": f"К{i % 7}"} for i in range(18)]})
    d.submit({"type": "draw", "seed": 5})
    d.close()
    loop.stop()
    loop.store.close()


def run(db: str, phase: str, cut: int, acks: str) -> None:
    """`cut` 0: no cut."""
    out = os.open(acks, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def ack(line: str) -> None:
        os.write(out, f"{line}\n".encode())

    clock = FakeClock()
    store = Store(db)
    loop = GameLoop(store, clock=clock).start()
    d = TournamentShell(loop)
    assert d.game is not None
    d.reconcile()
    steps = 0
    armed = False

    def trace(sql: str) -> None:
        nonlocal steps
        if armed:
            steps += 1
            if steps == cut:
                os.kill(os.getpid(), signal.SIGKILL)

    store.db.conn.set_trace_callback(trace)
    battle = views.next_battles(d.state)[0].id
    armed = phase == "start"
    game = d.start_battle(battle, d.setup_for(battle, PACKAGE))
    ack(f"ack started {game}")
    if phase == "end":
        end_game = loop.end_game

        def armed_end(g: int | None = None) -> Any:
            nonlocal armed
            armed = True
            return end_game(g)

        loop.end_game = armed_end  # type: ignore[method-assign]
        Host(loop, clock, random.Random(3)).play(game)
        ack("ack ended")
        for _ in range(1000):
            b = d.state.battle(battle)
            if b is not None and b.status == DONE:
                ack("ack done")
                break
            loop.submit({"type": "noop"}, game=d.game).result()
    armed = False
    if cut > steps:  # the cut after the phase's last statement
        os.kill(os.getpid(), signal.SIGKILL)
    ack(f"steps {steps}")
    d.close()
    loop.stop()
    store.close()
