"""Helpers shared by the loop, replay and property tests: a hand-driven clock, a real store
whose commits the test holds or fails, and turning a legal `Action` into a complete command
with hypothesis choosing the arguments."""

from __future__ import annotations

import threading
import time
from typing import Any

from hypothesis import strategies as st

from appliance.rules.protocol import Action, Command
from appliance.runtime.store import Store, StoreError


class FakeClock:
    """A monotonic clock the test moves by hand (the loop reads it through `clock()`)."""

    def __init__(self, t: int = 1_000_000_000):
        self.t = t
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return self.t

    def set(self, t: int) -> None:
        with self._lock:
            self.t = t


class GatedStore(Store):
    """A real store whose commits holding an event of a type in `held` wait for `gate` once
    `closed` (a slow fsync the test controls; `waiting` is set first), and raise while
    `failing` (a disk error)."""

    def __init__(self, path: Any, held: tuple[str, ...] = ("press",)) -> None:
        super().__init__(path)
        self.held = set(held)
        self.closed = False
        self.failing = False
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def append(self, game: int, events: Any, **kw: Any) -> Any:
        if any(e.type in self.held for e in events):
            if self.failing:
                raise StoreError("disk error (test)")
            if self.closed:
                self.waiting.set()
                assert self.gate.wait(10)
        return super().append(game, events, **kw)


def answerers(store: Store, game: int) -> list[int]:
    """The seats of a game's answerer events, as the log holds them."""
    return [e.data["player"] for e in store.events(game) if e.type == "answerer"]


def arg_strategy(spec: Any) -> st.SearchStrategy[Any]:
    """Values for one argument of an Action: a list of choices or an int/text spec."""
    if isinstance(spec, list):
        return st.sampled_from([c["value"] for c in spec])
    if spec.get("type") == "int":
        lo, hi, step = spec.get("min", -1000), spec.get("max", 1000), spec.get("step", 1) or 1
        return st.integers(0, (hi - lo) // step).map(lambda k: lo + k * step)
    if spec.get("type") == "text":
        return st.text(max_size=20)
    raise AssertionError(f"an Action arg spec the UI could not render: {spec!r}")


def command_from(action: Action, data: st.DataObject, t_ns: int) -> Command:
    args = {name: data.draw(arg_strategy(spec), label=f"{action.type}.{name}")
            for name, spec in action.args.items()}
    return Command(action.type, t_ns, args, action.by, t_ns)


def settle(lp, clock):
    """Wait until the loop has fed every deadline the clock has passed."""
    limit = time.monotonic() + 2
    while time.monotonic() < limit:
        rules, state = lp.snapshot()
        d = rules.next_deadline(state)
        if d is None or d > clock():
            return
        time.sleep(0.001)
    raise AssertionError("the loop did not feed a due deadline")
