"""The event log on a real SQLite file: atomic appends, durability settings, resumable games,
and damaged files that are reported, never recreated."""

import os
import sqlite3

import pytest
import sqlite_utils

from appliance.rules.protocol import Event
from appliance.runtime.store import (
    FINISHED,
    RUNNING,
    Store,
    StoreCorrupt,
    StoreError,
    data_dir,
    db_path,
    normalize,
)

SETUP = {"players": ["Аня", "Борис"]}


@pytest.fixture
def path(tmp_path):
    return tmp_path / "data" / "svoyak.db"


def filled(path, games=3, events=400):
    """A real log with several games, closed cleanly (WAL checkpointed into the file)."""
    with Store(path) as s:
        for _ in range(games):
            g = s.create_game("tiny", SETUP)
            for i in range(events // 4):
                s.append(g, [Event("added", i, {"player": i % 2, "points": 10, "text": "й" * 40})
                             for _ in range(4)])
    assert not os.path.exists(f"{path}-wal")
    return path


def test_append_and_read_back_in_order(path):
    wall = iter([1000.0, 1001.5, 1002.25])
    with Store(path, wall=lambda: next(wall)) as s:
        g = s.create_game("tiny", SETUP)
        assert s.append(g, [Event("a", 5, {"x": 1}), Event("b", 6, {"y": [1, 2]})]) == [1, 2]
        assert s.append(g, [Event("c", 7)]) == [3]
        assert s.append(g, []) == []
    with Store(path) as s:
        assert [(e.type, e.t_ns, dict(e.data)) for e in s.events(g)] == [
            ("a", 5, {"x": 1}), ("b", 6, {"y": [1, 2]}), ("c", 7, {})]
        log = s.log(g)
        assert [(x.seq, x.wall) for x in log] == [(1, 1001.5), (2, 1001.5), (3, 1002.25)]
        assert log[0].to_json() == {"seq": 1, "t_ns": 5, "wall": "1970-01-01T00:16:41.500+00:00",
                                    "type": "a", "payload": {"x": 1}}
        rec = s.game(g)
        assert (rec.rules, dict(rec.setup), rec.created, rec.status) == (
            "tiny", SETUP, 1000.0, RUNNING)
        assert s.events(g, after=2)[0].type == "c"


def test_sequences_are_per_game(path):
    with Store(path) as s:
        a, b = s.create_game("tiny", SETUP), s.create_game("tiny", SETUP)
        assert s.append(a, [Event("x", 1)]) == [1]
        assert s.append(b, [Event("x", 1), Event("y", 2)]) == [1, 2]
        assert s.append(a, [Event("z", 3)]) == [2]
        assert (s.count(a), s.count(b)) == (2, 2)


def test_durability_settings(path):
    with Store(path) as s:
        conn = s.db.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
        assert s.path == path


def test_a_deadlines_decision_is_committed_unsynced_until_written_out(path):
    """`append(durable=False)` (a deadline's decision) commits without an fsync of its own:
    readers see it at once; it is on disk after `sync` or the next durable commit, and the
    durable commit after it has its fsync (synchronous=FULL) again. What that means after
    a real power cut is tested with a model of the disk in tests/test_power_cut.py."""
    with Store(path) as s:
        g = s.create_game("tiny", {"players": ["A"]})
        level = lambda: s.db.conn.execute("PRAGMA synchronous").fetchone()[0]  # noqa: E731
        s.append(g, [Event("pressed", 1, {"player": 0})])
        assert not s.unsynced and level() == 2  # FULL
        s.append(g, [Event("expired", 2)], durable=False)
        assert s.unsynced and level() == 1  # NORMAL, for that transaction
        with Store(path) as reader:
            assert [e.type for e in reader.events(g)] == ["pressed", "expired"]
        s.append(g, [Event("added", 3, {"player": 0, "points": 10})])
        assert not s.unsynced and level() == 2  # its fsync writes out the WAL before it
        s.append(g, [Event("expired", 4)], durable=False)
        s.sync()
        assert not s.unsynced
        s.sync()  # nothing to write out: no error, nothing done
        assert [e.type for e in s.events(g)] == ["pressed", "expired", "added", "expired"]


def test_a_command_is_all_its_events_or_none(path):
    with Store(path) as s:
        g = s.create_game("tiny", SETUP)
        s.append(g, [Event("ok", 1)])
        with pytest.raises(StoreError, match="plain JSON"):
            s.append(g, [Event("a", 2, {"fine": 1}), Event("b", 3, {"bad": object()})])
        with pytest.raises(StoreError, match="no game 99"):
            s.append(99, [Event("a", 2)])
        assert [e.type for e in s.events(g)] == ["ok"]
        # the connection is usable after a failed append: no transaction left open
        assert s.append(g, [Event("after", 4)]) == [2]
        assert not s.db.conn.in_transaction


def test_a_failing_insert_rolls_back_the_whole_command(path):
    """A constraint failure on the 3rd event (another writer took that seq) undoes the 1st
    and 2nd too."""
    with Store(path) as s:
        g = s.create_game("tiny", SETUP)
        s.db.conn.execute("CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.type = 'bad' "
                          "BEGIN SELECT RAISE(ABORT, 'boom'); END")
        with pytest.raises(sqlite3.IntegrityError):
            s.append(g, [Event("a", 1), Event("b", 2), Event("bad", 3)])
        assert s.events(g) == []
        assert s.append(g, [Event("a", 1)]) == [1]


def test_finished_games_are_not_resumed_and_take_no_events(path):
    with Store(path) as s:
        a, b, c = (s.create_game("tiny", SETUP) for _ in range(3))
        s.finish(b, {"scores": [10, 0]})
        assert [r.id for r in s.unfinished()] == [a, c]
        rec = s.game(b)
        assert rec.status == FINISHED and dict(rec.summary) == {"scores": [10, 0]}
        assert rec.finished is not None
        with pytest.raises(StoreError, match="finished"):
            s.append(b, [Event("late", 1)])
        with pytest.raises(StoreError, match="no running game"):
            s.finish(b)
        assert [r.id for r in s.games(FINISHED)] == [b]
        assert s.game(42) is None


def test_normalize_gives_what_the_log_returns(path):
    events = [Event("x", 3, {"seats": (1, 2), "nested": {"t": (3,)}, 1: "one"})]
    with Store(path) as s:
        g = s.create_game("tiny", SETUP)
        s.append(g, events)
        assert normalize(events) == s.events(g)
        assert normalize(events)[0].data == {"seats": [1, 2], "nested": {"t": [3]}, "1": "one"}


def test_other_modules_add_tables_to_the_same_file(path):
    with Store(path) as s:
        g = s.create_game("tiny", SETUP)
        other = sqlite_utils.Database(str(s.path))  # e.g. the package library
        other["packages"].insert({"id": 1, "title": "Демо"}, pk="id")
        s.append(g, [Event("a", 1)])
        other.conn.close()
    with Store(path) as s:
        assert s.db["packages"].count == 1 and s.count(g) == 1


def test_two_connections_wait_for_each_other(path):
    with Store(path) as s, Store(path) as t:
        g = s.create_game("tiny", SETUP)
        t.db.conn.execute("BEGIN IMMEDIATE")
        t.db.conn.execute("INSERT INTO games (rules, setup, created, status) "
                          "VALUES ('x', '{}', 0, 'running')")
        import threading
        threading.Timer(0.2, lambda: t.db.conn.execute("COMMIT")).start()
        assert s.append(g, [Event("waited", 1)]) == [1]  # busy_timeout, not "locked"


def test_garbage_file_is_reported_with_its_path_and_kept(path):
    path.parent.mkdir(parents=True)
    junk = b"this is not a database at all\n" * 200
    path.write_bytes(junk)
    with pytest.raises(StoreCorrupt) as e:
        Store(path)
    assert str(path) in str(e.value)
    assert path.read_bytes() == junk


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.99])
def test_truncated_file_is_reported_never_recreated(path, keep):
    filled(path)
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(int(size * keep))
    cut = path.read_bytes()
    with pytest.raises(StoreCorrupt) as e:
        Store(path)
    assert str(path) in str(e.value)
    assert path.read_bytes() == cut  # left as it was for a human to rescue


def test_file_cut_inside_the_header_is_reported(path):
    filled(path, games=1, events=8)
    with path.open("r+b") as f:
        f.truncate(10)
    with pytest.raises(StoreCorrupt, match=str(path)):
        Store(path)


def test_damaged_page_is_reported(path):
    filled(path)
    with path.open("r+b") as f:
        f.seek(path.stat().st_size // 2)
        f.write(os.urandom(3000))
    with pytest.raises(StoreCorrupt, match=str(path)):
        Store(path)


def test_empty_file_is_a_fresh_log(path):
    path.parent.mkdir(parents=True)
    path.touch()  # SQLite itself creates the file empty before the first write
    with Store(path) as s:
        assert s.games() == []


def test_missing_file_is_an_error_when_asked_not_to_create(path):
    with pytest.raises(StoreError, match=str(path)):
        Store(path, create=False)
    assert not path.exists()


def test_data_dir_convention(monkeypatch, tmp_path):
    monkeypatch.delenv("SVOYAK_DATA", raising=False)
    assert str(db_path()) == os.path.join("data", "svoyak.db")
    monkeypatch.setenv("SVOYAK_DATA", str(tmp_path))
    assert db_path() == tmp_path / "svoyak.db"
    assert data_dir("elsewhere").name == "elsewhere"


def test_integrity_check(path):
    filled(path, games=1, events=40)
    with Store(path) as s:
        assert s.integrity() == ["ok"]
