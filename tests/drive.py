"""Helpers shared by the loop, replay and property tests: a hand-driven clock, and turning a
legal `Action` into a complete command with hypothesis choosing the arguments."""

from __future__ import annotations

import threading
import time
from typing import Any

from hypothesis import strategies as st

from appliance.rules.protocol import Action, Command


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
