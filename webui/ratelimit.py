"""Per-socket token buckets: what a human can do, and not a storm more.

A bucket holds `burst` tokens and refills at `rate` a second; a message takes one token
or is dropped. Dropping happens in the socket's own thread before anything is parsed
further or queued for the game loop, so a storm costs its sender's thread and nothing
else. Limits are per socket and per kind of message; the wired buttons never pass here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limit:
    rate: float  # tokens a second
    burst: float  # bucket size


@dataclass
class Bucket:
    limit: Limit
    tokens: float
    stamp: float

    def take(self, now: float) -> bool:
        self.tokens = min(self.limit.burst, self.tokens + (now - self.stamp) * self.limit.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


# Every message of a socket, then each kind on top. A player presses a few times a second
# at most; a lobby change is a tap on a name; the host taps buttons (and may script a
# test run, hence the larger budget); the simulator board's keys press for every seat.
LIMITS: dict[str, dict[str, Limit]] = {
    "host": {"any": Limit(50, 100), "press": Limit(20, 40)},
    "board": {"any": Limit(20, 40), "press": Limit(20, 40)},
    "tourney": {"any": Limit(1, 5)},  # pages that only listen
    "admin": {"any": Limit(1, 5)},
    "player": {"any": Limit(10, 20), "press": Limit(5, 8), "seat": Limit(1, 5),
               "player_command": Limit(2, 5)},
    # Shared by all the sockets of one stranger's address (a phone, not the box or the
    # host), so opening more sockets buys no more messages.
    "address": {"any": Limit(20, 40), "press": Limit(8, 16), "seat": Limit(1, 5)},
}
# Addresses remembered (oldest forgotten first).
MAX_ADDRESSES = 4096
# A socket with this many messages dropped within one second is storming, not a person
# tapping fast: the hub closes it (and the admission turns its address away for a while).
STORM_DROPS = 50


@dataclass
class Meter:
    """The buckets of one socket."""

    role: str
    clock: Callable[[], float] = time.monotonic
    buckets: dict[str, Bucket] = field(default_factory=dict)
    _drops: int = 0
    _drops_since: float = 0.0

    def storming(self) -> bool:
        """Count one dropped message; true once STORM_DROPS fell within a second."""
        now = self.clock()
        if now - self._drops_since > 1.0:
            self._drops, self._drops_since = 0, now
        self._drops += 1
        return self._drops >= STORM_DROPS

    def allow(self, kind: str) -> bool:
        now = self.clock()
        limits = LIMITS.get(self.role, LIMITS["player"])
        for name in ("any", kind):
            limit = limits.get(name)
            if limit is None:
                continue
            bucket = self.buckets.get(name)
            if bucket is None:
                bucket = self.buckets[name] = Bucket(limit, limit.burst, now)
            if not bucket.take(now):
                return False
        return True
