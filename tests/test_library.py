"""The package library: rows in a real SQLite file, media on disk, atomic imports, export
round trips and the `svoyak package` CLI."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.packages import exchange, jsonform
from appliance.packages.archive import PackageError
from appliance.packages.library import Library, LibraryError
from appliance.packages.model import (
    Cat,
    CatPrice,
    Item,
    ItemType,
    Kind,
    Package,
    Question,
    Round,
    Theme,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "siq"
if not FIXTURES.is_dir():
    raise RuntimeError(f"SIQ fixtures are missing: expected them in {FIXTURES}")
MEDIA_FIXTURES = ["v5-all-features.siq", "v4-media.siq", "v5-encoded-names.siq"]


def files_under(path: Path) -> set[Path]:
    return {p for p in path.rglob("*") if p.is_file()} if path.exists() else set()


def media_files(lib: Library) -> set[Path]:
    return files_under(lib.media.root)


def rows(lib: Library, table: str) -> int:
    with sqlite3.connect(lib.db_path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# -- library basics ------------------------------------------------------------------------


def test_import_list_get_delete(tmp_path):
    lib = Library(tmp_path)
    assert lib.list() == []
    assert not lib.db_path.exists()  # reading an empty library creates nothing
    a = lib.import_file(FIXTURES / "v5-all-features.siq")
    b = lib.import_file(FIXTURES / "v4-media.siq")
    assert [p.id for p in lib.list()] == [a, b]
    assert lib.db_path == tmp_path / "svoyak.db"
    assert {p.format for p in lib.list()} == {"siq5", "siq4"}
    # shared media (the boat picture, the sound, the video) are stored once
    shared = set(m for t in lib.get(a).all_themes() for q in t.questions for m in q.media) & set(
        m for t in lib.get(b).all_themes() for q in t.questions for m in q.media)
    assert len(shared) == 3
    assert len(media_files(lib)) == rows(lib, "media") == 11
    lib.delete(a)
    assert [p.id for p in lib.list()] == [b]
    assert len(media_files(lib)) == 3  # what b still uses stays
    for digest in shared:
        assert lib.media_path(digest) is not None
    lib.delete(b)
    assert media_files(lib) == set() and rows(lib, "media") == 0
    with pytest.raises(LibraryError):
        lib.delete(b)
    with pytest.raises(LibraryError):
        lib.get(b)


def test_media_path_refuses_what_is_not_a_hash(tmp_path):
    lib = Library(tmp_path)
    lib.import_file(FIXTURES / "v5-encoded-names.siq")
    assert lib.media_path("../svoyak.db") is None
    assert lib.media_path("0" * 64) is None
    empty = hashlib.sha256(b"").hexdigest()  # the fixture's zero-length media
    assert lib.media_path(empty).read_bytes() == b""


def test_tables_share_the_event_store_file(tmp_path):
    """The library adds its tables to DATA/svoyak.db and leaves other tables alone."""
    db = tmp_path / "svoyak.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE games (id INTEGER PRIMARY KEY, rules TEXT)")
        conn.execute("INSERT INTO games (rules) VALUES ('tv')")
    lib = Library(tmp_path)
    lib.import_file(FIXTURES / "v5-classic-1.siq")
    assert rows(lib, "games") == 1 and rows(lib, "packages") == 1


def test_data_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SVOYAK_DATA", str(tmp_path / "box"))
    lib = Library()
    lib.import_file(FIXTURES / "v5-classic-2010-10.siq")
    assert (tmp_path / "box" / "svoyak.db").is_file()


# -- atomicity -----------------------------------------------------------------------------


def _siq_with_two_images(path: Path, corrupt_second: bool) -> None:
    content = """<?xml version="1.0" encoding="utf-8"?>
<package name="two" version="5"><rounds><round name="1"><themes><theme name="T">
<questions>
<question price="100"><params><param name="question" type="content">
<item type="image" isRef="True">a.png</item></param></params>
<right><answer>a</answer></right></question>
<question price="200"><params><param name="question" type="content">
<item type="image" isRef="True">b.png</item></param></params>
<right><answer>b</answer></right></question>
</questions></theme></themes></round></rounds></package>"""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("content.xml", content)
        z.writestr("Images/a.png", b"A" * 5000, compress_type=zipfile.ZIP_STORED)
        z.writestr("Images/b.png", b"B" * 5000, compress_type=zipfile.ZIP_STORED)
    if corrupt_second:
        data = bytearray(path.read_bytes())
        at = data.index(b"B" * 100)
        data[at + 50] = ord("X")  # the CRC no longer matches: found only while streaming
        path.write_bytes(bytes(data))


def test_failure_while_streaming_media_writes_nothing(tmp_path):
    lib = Library(tmp_path / "data")
    good = lib.import_file(FIXTURES / "v5-classic-1.siq")
    before = files_under(tmp_path / "data")
    bad = tmp_path / "bad.siq"
    _siq_with_two_images(bad, corrupt_second=True)
    with pytest.raises(PackageError, match=r"bad\.siq: entry «Images/b\.png»"):
        lib.import_file(bad)
    assert [p.id for p in lib.list()] == [good]
    assert rows(lib, "media") == rows(lib, "package_media") == 0
    after = {p for p in files_under(tmp_path / "data") if "-wal" not in p.name
             and "-shm" not in p.name}
    assert after == {p for p in before if "-wal" not in p.name and "-shm" not in p.name}
    assert media_files(lib) == set()  # the first image was staged, then removed


def test_failure_in_the_database_writes_no_media(tmp_path):
    lib = Library(tmp_path / "data")
    good = tmp_path / "good.siq"
    _siq_with_two_images(good, corrupt_second=False)
    lib.import_file(FIXTURES / "v5-classic-1.siq")  # creates the tables
    with sqlite3.connect(lib.db_path) as conn:  # a real SQLite failure mid-transaction
        conn.execute("CREATE TRIGGER no_media BEFORE INSERT ON package_media "
                     "BEGIN SELECT RAISE(ABORT, 'disk full (simulated by a trigger)'); END")
    with pytest.raises(LibraryError, match="disk full"):
        lib.import_file(good)
    assert rows(lib, "packages") == 1 and rows(lib, "media") == 0
    assert media_files(lib) == set()
    with sqlite3.connect(lib.db_path) as conn:
        conn.execute("DROP TRIGGER no_media")
    pid = lib.import_file(good)  # and the same file imports once the fault is gone
    assert len(media_files(lib)) == 2 and lib.info(pid).media_count == 2


# -- our own format: export and import back ------------------------------------------------


@pytest.mark.parametrize("name", MEDIA_FIXTURES + ["v3-old-namespace.siq"])
def test_export_imports_back_equal(name, tmp_path):
    lib = Library(tmp_path / "a")
    pid = lib.import_file(FIXTURES / name)
    out = lib.export(pid, tmp_path / "out.zip")
    other = Library(tmp_path / "b")  # a different box
    again = other.import_file(out)
    assert other.get(again) == lib.get(pid)
    assert other.info(again).format == "svoyak"
    for digest in (m for t in other.get(again).all_themes() for q in t.questions
                   for m in q.media):
        assert other.media_path(digest).read_bytes() == lib.media_path(digest).read_bytes()
        assert other.media_type(digest) == lib.media_type(digest)


def test_damaged_export_is_refused(tmp_path):
    lib = Library(tmp_path / "a")
    out = lib.export(lib.import_file(FIXTURES / "v5-encoded-names.siq"), tmp_path / "x.zip")
    with zipfile.ZipFile(out) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    media = next(n for n in entries if n.startswith("media/"))
    entries[media] = b"not the bytes that were hashed"
    with zipfile.ZipFile(out, "w") as z:
        for n, data in entries.items():
            z.writestr(n, data)
    other = Library(tmp_path / "b")
    with pytest.raises(PackageError, match="does not match"):
        other.import_file(out)
    assert other.list() == [] and media_files(other) == set()


def test_bare_json_package_imports(tmp_path):
    demo = ROOT / "appliance" / "data" / "demo-tv.json"
    lib = Library(tmp_path)
    pid = lib.import_file(demo)
    assert lib.get(pid) == jsonform.load(demo)


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@st.composite
def packages(draw):
    blobs = draw(st.lists(st.binary(max_size=300), min_size=1, max_size=3, unique=True))
    digests = [hashlib.sha256(b).hexdigest() for b in blobs]

    def item():
        if draw(st.booleans()):
            return Item(ItemType.TEXT, draw(_text), spoken=draw(st.booleans()),
                        duration_s=draw(st.none() | st.floats(0.5, 60, allow_nan=False)))
        return Item(draw(st.sampled_from([ItemType.IMAGE, ItemType.AUDIO, ItemType.VIDEO,
                                          ItemType.HTML])), draw(st.sampled_from(digests)))

    def question():
        kind = draw(st.sampled_from(list(Kind)))
        cat = None
        if kind == Kind.CAT:
            cat = Cat(theme=draw(_text),
                      price=CatPrice(values=draw(st.lists(st.integers(0, 5000), max_size=3)),
                                     low=draw(st.integers(0, 100)),
                                     high=draw(st.integers(100, 5000)),
                                     step=draw(st.integers(0, 500))),
                      may_keep=draw(st.booleans()), public_price=draw(st.booleans()),
                      no_question=draw(st.booleans()))
        return Question(
            price=draw(st.integers(-1, 10_000)), kind=kind,
            content=[item() for _ in range(draw(st.integers(0, 3)))],
            answer_content=[item() for _ in range(draw(st.integers(0, 1)))],
            right=draw(st.lists(_text, max_size=3)), wrong=draw(st.lists(_text, max_size=2)),
            comment=draw(_text), sources=draw(st.lists(_text, max_size=2)), cat=cat,
            factor=draw(st.integers(1, 5)),
        )

    rounds = [
        Round(name=draw(_text), final=draw(st.booleans()), themes=[
            Theme(name=draw(_text), comment=draw(_text),
                  questions=[question() for _ in range(draw(st.integers(1, 4)))])
            for _ in range(draw(st.integers(1, 3)))
        ])
        for _ in range(draw(st.integers(1, 3)))
    ]
    package = Package(name=draw(_text), rounds=rounds, author=draw(_text),
                      comment=draw(_text), language=draw(st.sampled_from(["ru", "en"])),
                      warnings=draw(st.lists(_text, max_size=2)))
    return package, dict(zip(digests, blobs, strict=True))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packages())
def test_property_export_then_import_is_equal(generated):
    package, blobs = generated
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        store = tmp / "blobs"
        store.mkdir()
        for digest, data in blobs.items():
            (store / digest).write_bytes(data)
        first = exchange.export(package, tmp / "first.zip", lambda h: store / h,
                                lambda h: "image/png")
        lib = Library(tmp / "box")
        pid = lib.import_file(first)
        assert lib.get(pid) == package
        second = lib.export(pid, tmp / "second.zip")
        other = Library(tmp / "box2")
        assert other.get(other.import_file(second)) == package


# -- the CLI -------------------------------------------------------------------------------


def svoyak(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svoyak.cli", "package", *args, "--data", str(data)],
        capture_output=True, text=True, cwd=ROOT,
    )


def test_cli_import_list_show_delete(tmp_path):
    data = tmp_path / "data"
    r = svoyak("import", str(FIXTURES / "v5-all-features.siq"), data=data)
    assert r.returncode == 0, r.stderr
    assert "imported package 1" in r.stdout and "custom" in r.stdout
    r = svoyak("list", "--json", data=data)
    listed = json.loads(r.stdout)
    assert [(p["id"], p["name"], p["questions"]) for p in listed] == [
        (1, "Тестовый пакет SIGame", 34)]
    r = svoyak("show", "1", "--json", data=data)
    shown = json.loads(r.stdout)
    assert shown["id"] == 1 and shown["rounds"][1]["final"] is True
    assert all(len(m) == 64 for r_ in shown["rounds"] for t in r_["themes"]
               for q in t["questions"] for m in q["media"])
    assert svoyak("show", "1", data=data).returncode == 0
    assert svoyak("delete", "1", data=data).returncode == 0
    r = svoyak("delete", "1", data=data)
    assert r.returncode == 1 and "no package 1" in r.stderr
    assert svoyak("show", "1", data=data).returncode == 1
    assert json.loads(svoyak("list", "--json", data=data).stdout) == []


def test_cli_inspect_json_schema_and_writes_nothing(tmp_path):
    data = tmp_path / "data"
    r = svoyak("inspect", str(FIXTURES / "v4-media.siq"), "--json", data=data)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert isinstance(doc["name"], str) and isinstance(doc["warnings"], list)
    assert doc["format"] == "siq4"
    assert doc["counts"] == {"rounds": 2, "themes": 5, "questions": 24}  # 25 minus one empty
    assert all(isinstance(w, str) for w in doc["warnings"])
    for rnd in doc["rounds"]:
        assert isinstance(rnd["name"], str) and isinstance(rnd["final"], bool)
        for theme in rnd["themes"]:
            assert isinstance(theme["name"], str)
            for q in theme["questions"]:
                assert isinstance(q["price"], int) and isinstance(q["text"], str)
                assert q["kind"] in {k.value for k in Kind}
                assert all(isinstance(a, str) for a in q["answers"])
                assert all(isinstance(m, str) for m in q["media"])
    first = doc["rounds"][0]["themes"][1]["questions"][2]
    assert first["media"] == ["Images/sample-boat-400x300.png"]
    assert not data.exists()  # inspect never imports


def test_cli_export_and_reimport(tmp_path):
    data = tmp_path / "data"
    assert svoyak("import", str(FIXTURES / "v5-encoded-names.siq"), data=data).returncode == 0
    out = tmp_path / "e.zip"
    r = svoyak("export", "1", str(out), data=data)
    assert r.returncode == 0, r.stderr
    r = svoyak("import", str(out), data=data)
    assert r.returncode == 0 and "imported package 2" in r.stdout
    lib = Library(data)
    assert lib.get(1) == lib.get(2)


def test_sweep_cleans_what_a_killed_import_left(tmp_path):
    lib = Library(tmp_path)
    pid = lib.import_file(FIXTURES / "v5-encoded-names.siq")
    kept = media_files(lib)
    staging = lib.media.root / ".staging-killed"
    staging.mkdir()
    (staging / "half").write_bytes(b"x" * 100)
    orphan = lib.media.path(hashlib.sha256(b"orphan").hexdigest())
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"orphan")  # moved into place, then the commit never happened
    lib.sweep()
    assert media_files(lib) == kept and not staging.exists()
    assert lib.get(pid).rounds
