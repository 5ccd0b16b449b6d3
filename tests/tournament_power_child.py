"""Child process for the tournament power-cut test: plays a tournament on DATA/svoyak.db
(resuming whatever is there) and prints one line per acknowledged step, flushed, until it is
killed or the tournament is over: ``ack <battle> <status>``."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from drive import FakeClock  # noqa: E402
from tournament_kit import Host, package  # noqa: E402

from appliance.rules.tournament import views  # noqa: E402
from appliance.rules.tournament.state import DONE, PLAYING  # noqa: E402
from appliance.runtime.loop import GameLoop  # noqa: E402
from appliance.runtime.store import Store  # noqa: E402
from appliance.runtime.tournament import TournamentShell  # noqa: E402


def main(db: str, seed: int) -> None:
    clock = FakeClock()
    loop = GameLoop(Store(db), clock=clock).start()
    d = TournamentShell(loop)
    if d.game is None:
        d.create({"title": "Питание"})
        rows = [{"name": f"И{i}", "team": f"К{i % 7}"} for i in range(30)]
        d.submit({"type": "import_entries", "entries": rows})
        d.submit({"type": "draw", "seed": 5})
        print("ack draw", flush=True)
    d.reconcile()
    host = Host(loop, clock, random.Random(seed))
    pack = package()
    while True:
        s = d.state
        playing = [b for b in s.battles if b.status == PLAYING]
        if playing:  # a battle the cut interrupted: its game was resumed by the loop
            b = playing[0]
            if b.game in loop.games() and not loop.is_finished(b.game):
                host.play(b.game)  # type: ignore[arg-type]
            _wait(d, b.id)
            print(f"ack {b.id} done", flush=True)
            continue
        ready = views.next_battles(s)
        if not ready:
            break
        game = d.start_battle(ready[0].id, d.setup_for(ready[0].id, pack))
        print(f"ack {ready[0].id} started {game}", flush=True)
        host.play(game)
        _wait(d, ready[0].id)
        print(f"ack {ready[0].id} done", flush=True)
    print("over", flush=True)
    d.close()
    loop.stop()


def _wait(d: TournamentShell, battle_id: str) -> None:
    for _ in range(1000):
        b = d.state.battle(battle_id)
        if b is not None and b.status == DONE:
            return
        d.loop.submit({"type": "noop"}, game=d.game).result()
    raise SystemExit(f"no result for {battle_id}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
