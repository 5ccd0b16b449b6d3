"""Package archives and contents beyond what the box should play (issue 13): each was
accepted before and is refused now, with a one-line message and nothing written."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import pytest

from appliance.packages import bounds, jsonform
from appliance.packages.archive import PackageError, SafeZip
from appliance.packages.library import Library
from appliance.packages.model import Item, ItemType, Package, Question, Round, Theme

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "siq"
CONTENT = ('<?xml version="1.0" encoding="utf-8"?>\n<package name="p" version="5"><rounds>'
           '<round name="R"><themes><theme name="T"><questions><question price="100">'
           '<params><param name="question" type="content"><item>q</item></param></params>'
           '<right><answer>a</answer></right></question></questions></theme></themes>'
           '</round></rounds></package>\n')


def nothing_written(lib: Library) -> bool:
    return lib.list() == [] and not any(p.is_file() for p in lib.media.root.rglob("*")) \
        if lib.media.root.exists() else lib.list() == []


def test_a_zip_bomb_split_into_small_entries_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.siq"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("content.xml", CONTENT)
        chunk = b"\0" * (1 << 20)  # 1 MiB each: under the per-entry ratio test's floor
        for i in range(100):
            z.writestr(f"Images/{i}.png", chunk)
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(PackageError, match="zip bomb") as e:
        SafeZip(bomb)
    assert "\n" not in str(e.value)
    lib = Library(tmp_path / "data")
    with pytest.raises(PackageError):
        lib.import_file(bomb)
    assert nothing_written(lib)


def test_duplicate_entry_names_are_refused(tmp_path: Path) -> None:
    dup = tmp_path / "dup.siq"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate it writes
        with zipfile.ZipFile(dup, "w") as z:
            z.writestr("content.xml", CONTENT)
            z.writestr("content.xml", CONTENT.replace('name="p"', 'name="other"'))
    with pytest.raises(PackageError, match="appears twice"):
        SafeZip(dup)


def test_an_encrypted_entry_says_so_in_one_line(tmp_path: Path) -> None:
    enc = tmp_path / "enc.siq"
    with zipfile.ZipFile(enc, "w") as z:
        z.writestr("content.xml", CONTENT)
    # Mark the entry encrypted as a password-protected archive does (bit 0 of the general
    # purpose flags, in the local header and in the central directory); zipfile cannot
    # write real encryption.
    raw = bytearray(enc.read_bytes())
    raw[6] |= 0x1
    central = raw.index(b"PK\x01\x02")
    raw[central + 8] |= 0x1
    enc.write_bytes(bytes(raw))
    with pytest.raises(PackageError) as e:
        Library(tmp_path / "data").import_file(enc)
    message = str(e.value)
    assert "encrypted" in message and "ZipInfo" not in message and "\n" not in message


def test_a_truncated_archive_says_it_is_cut_short(tmp_path: Path) -> None:
    whole = (FIXTURES / "v4-media.siq").read_bytes()
    cut = tmp_path / "cut.siq"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(PackageError, match="cut short"):
        Library(tmp_path / "data").import_file(cut)


def package_file(tmp_path: Path, package: Package) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(jsonform.to_dict(package), ensure_ascii=False))
    return path


def question(price: int) -> Question:
    return Question(price=price, content=[Item(ItemType.TEXT, "q")], right=["a"])


@pytest.mark.parametrize("price", [10 ** 30, -(10 ** 30), bounds.MAX_PRICE + 1])
def test_prices_beyond_the_bounds_are_refused(tmp_path: Path, price: int) -> None:
    package = Package("p", [Round("R", [Theme("T", [question(100), question(price)])])])
    lib = Library(tmp_path / "data")
    with pytest.raises(PackageError, match="price") as e:
        lib.import_file(package_file(tmp_path, package))
    assert len(str(e.value)) < 200
    assert lib.list() == []


def test_a_theme_of_ten_thousand_questions_is_refused(tmp_path: Path) -> None:
    package = Package("p", [Round("R", [Theme("T", [question(100)] * 10_000)])])
    with pytest.raises(PackageError, match="10000 questions"):
        Library(tmp_path / "data").import_file(package_file(tmp_path, package))


def test_real_packages_are_within_the_bounds(tmp_path: Path) -> None:
    lib = Library(tmp_path / "data")
    for siq in sorted(FIXTURES.glob("*.siq")):
        lib.import_file(siq)
    assert len(lib.list()) == len(list(FIXTURES.glob("*.siq")))


def test_the_box_cleans_a_killed_import_at_start(tmp_path: Path) -> None:
    """Staging folders and media published before a commit that never came."""
    import hashlib

    from svoyak.serve import build

    lib = Library(tmp_path)
    lib.import_file(FIXTURES / "v4-media.siq")
    kept = sorted(p.name for p in lib.media.root.glob("??/*"))
    staging = lib.media.root / ".staging-killed"
    staging.mkdir()
    (staging / "half").write_bytes(b"x" * 100)
    orphan = lib.media.path(hashlib.sha256(b"orphan").hexdigest())
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"orphan")
    box = build(tmp_path, simulate=True, pins=None, demo=False)
    try:
        assert not staging.exists() and not orphan.exists()
        assert sorted(p.name for p in lib.media.root.glob("??/*")) == kept
    finally:
        box.close()
