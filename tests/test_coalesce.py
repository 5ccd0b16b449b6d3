"""`Coalesced`: a burst of asks is one call, made after the delay; an ask after it ran is
another."""

from __future__ import annotations

import threading

from appliance.runtime.coalesce import Coalesced


def test_a_burst_is_one_call_and_a_later_ask_another() -> None:
    calls: list[int] = []
    ran = threading.Event()

    def fn() -> None:
        calls.append(1)
        ran.set()

    soon = Coalesced(0.05, fn)
    for _ in range(100):
        soon()
    assert ran.wait(5)
    assert calls == [1]
    ran.clear()
    soon()
    assert ran.wait(5)
    assert calls == [1, 1]
