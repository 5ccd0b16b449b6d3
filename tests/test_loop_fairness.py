"""The loop never lets a deadline beat a press that arrived before it but is still queued."""

import threading

from drive import FakeClock

from appliance.rules.protocol import Command, press
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store

MS = 1_000_000
THEMES = [{"name": "Тема", "questions": [{"text": f"В{k}", "answer": "О"} for k in range(5)]}]


def test_press_queued_behind_a_slow_commit_still_wins(tmp_path):
    clock = FakeClock()
    with Store(tmp_path / "svoyak.db") as store:
        loop = GameLoop(store, clock).start()
        try:
            loop.new_game("battle", {"players": ["А", "Б", "В"], "themes": THEMES}).result(2)
            assert loop.submit(Command("announce")).result(2).refused is None
            lamp = clock()
            hold, held = threading.Event(), threading.Event()
            winners = []

            def slow_lamp(update):  # an inline subscriber stuck on the first press
                if any(e.type == "press" for e in update.events) and not held.is_set():
                    held.set()
                    hold.wait(2)
                winners.extend(e.data["player"] for e in update.events if e.type == "answerer")

            loop.subscribe(slow_lamp, inline=True)
            loop.submit(press(1, lamp + 2 * MS, at_ns=lamp + 2 * MS))
            assert held.wait(2)
            # Seat 0 pressed earlier and arrived inside the settle window, but the loop is
            # busy; by the time it is free, the clock is far past the window.
            late = loop.submit(press(0, lamp + 1 * MS, at_ns=lamp + 3 * MS))
            clock.set(clock() + 50 * MS)
            hold.set()
            assert late.result(2).refused is None
            loop.wake()
            for _ in range(100):
                if winners:
                    break
                threading.Event().wait(0.01)
            assert winners == [0]
        finally:
            loop.stop()
