"""Memory over a long evening (issue 13, bench/soak.py): what grows with the event log must
stop growing. The soak measures the whole server; these check the causes it found, on real
files, by what SQLite itself counts (no timing)."""

from __future__ import annotations

import _sqlite3
import ctypes
from pathlib import Path

from appliance.rules.protocol import Event
from appliance.runtime.store import CACHE_KIB, Store

# The SQLite library Python's own module uses (dlsym on its handle finds its dependencies).
_SQLITE = ctypes.CDLL(_sqlite3.__file__)
_SQLITE.sqlite3_memory_used.restype = ctypes.c_int64


def sqlite_memory() -> int:
    return int(_SQLITE.sqlite3_memory_used())


def test_a_growing_log_does_not_grow_sqlite_memory(tmp_path: Path) -> None:
    """Before, the log's connection cached every page it wrote, up to SQLite's default 2 MB:
    10 MB of events cost about 2 MB of memory that only a restart gave back."""
    with Store(tmp_path / "svoyak.db") as store:
        game = store.create_game("tiny", {"players": ["A", "B"]})
        store.append(game, [Event("added", 0, {"text": "й" * 500})])
        start = sqlite_memory()
        for i in range(200):  # 10,000 events of about 1 kB
            store.append(game, [Event("added", i, {"text": "й" * 500, "n": n})
                                for n in range(50)])
        grown = sqlite_memory() - start
        assert store.count(game) == 10_001
    assert (tmp_path / "svoyak.db").stat().st_size > 8 << 20
    assert grown < (CACHE_KIB << 10) + (256 << 10), grown
