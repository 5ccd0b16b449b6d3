"""Hostile and broken package files, each generated here and fed to the real CLI.

Every case must: exit non-zero, print a message naming the file and the place, and write
nothing (no rows, no media files) into a library that already holds a package.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from appliance.packages import siq
from appliance.packages.archive import Limits, PackageError, SafeZip

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "siq"
if not FIXTURES.is_dir():
    raise RuntimeError(f"SIQ fixtures are missing: expected them in {FIXTURES}")


def content(rounds: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            f'<package name="hostile" version="5"><rounds>{rounds}</rounds></package>\n')


GOOD_ROUND = ('<round name="R"><themes><theme name="T"><questions>'
              '<question price="100"><params><param name="question" type="content">'
              '<item>q</item></param></params><right><answer>a</answer></right></question>'
              '</questions></theme></themes></round>')


def siq_file(path: Path, entries: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def not_a_zip(d: Path) -> Path:
    p = d / "broken.siq"
    p.write_bytes(os.urandom(2000))
    return p


def no_content_xml(d: Path) -> Path:
    return siq_file(d / "empty.siq", {"Images/a.png": b"png"})


def invalid_xml(d: Path) -> Path:
    xml = content(GOOD_ROUND).replace("<theme name=\"T\">", "<theme name=\"T\"")
    return siq_file(d / "invalid.siq", {"content.xml": xml})


def entity_expansion(d: Path) -> Path:
    xml = ('<?xml version="1.0"?>\n<!DOCTYPE package [\n'
           '<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">\n'
           + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n'
                     for i in range(8))
           + ']>\n<package name="&i;" version="5"><rounds/></package>')
    return siq_file(d / "laughs.siq", {"content.xml": xml})


def external_entity(d: Path) -> Path:
    xml = ('<?xml version="1.0"?>\n<!DOCTYPE package [\n'
           '<!ENTITY secret SYSTEM "file:///etc/passwd">\n]>\n'
           '<package name="&secret;" version="5"><rounds/></package>')
    return siq_file(d / "xxe.siq", {"content.xml": xml})


def dot_dot(d: Path) -> Path:
    return siq_file(d / "dotdot.siq", {"content.xml": content(GOOD_ROUND),
                                       "Images/../../evil.sh": b"rm -rf"})


def absolute(d: Path) -> Path:
    return siq_file(d / "absolute.siq", {"content.xml": content(GOOD_ROUND),
                                         "/etc/evil.conf": b"x"})


def symlink(d: Path) -> Path:
    p = d / "symlink.siq"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("content.xml", content(GOOD_ROUND))
        info = zipfile.ZipInfo("Images/link.png")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    return p


def zip_bomb(d: Path) -> Path:
    p = d / "bomb.siq"
    with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("content.xml", content(GOOD_ROUND))
        with z.open("Images/zeros.png", "w") as f:
            block = bytes(1 << 20)
            for _ in range(24):  # 24 MB of zeros packs to ~24 KB
                f.write(block)
    return p


def price_not_a_number(d: Path) -> Path:
    xml = content(GOOD_ROUND.replace('price="100"', 'price="сто"'))
    return siq_file(d / "price.siq", {"content.xml": xml})


def round_without_themes(d: Path) -> Path:
    xml = content(GOOD_ROUND + '<round name="Пустой"><themes/></round>')
    return siq_file(d / "norounds.siq", {"content.xml": xml})


def text_not_utf8(d: Path) -> Path:
    p = d / "cp1251.txt"
    p.write_bytes("Тема 1. РЕКИ\n10. Самая длинная река Европы\nОтвет: Волга\n"
                  .encode("cp1251"))
    return p


CASES: list[tuple[Callable[[Path], Path], list[str], list[str]]] = [
    # (make the file, extra CLI options, words the message must contain)
    (not_a_zip, [], ["broken.siq", "not a zip"]),
    (no_content_xml, [], ["empty.siq", "no content.xml"]),
    (invalid_xml, [], ["invalid.siq", "content.xml", "invalid XML at line 2, column"]),
    (entity_expansion, [], ["laughs.siq", "content.xml", "entity", "refused"]),
    (external_entity, [], ["xxe.siq", "content.xml", "external entity", "refused"]),
    (dot_dot, [], ["dotdot.siq", "Images/../../evil.sh", "«..»"]),
    (absolute, [], ["absolute.siq", "/etc/evil.conf", "absolute path"]),
    (symlink, [], ["symlink.siq", "Images/link.png", "symbolic link"]),
    (zip_bomb, [], ["bomb.siq", "Images/zeros.png", "zip bomb"]),
    (price_not_a_number, [], ["price.siq", "round 1 «R», theme 1 «T», question 1",
                              "price «сто» is not a whole number"]),
    (round_without_themes, [], ["norounds.siq", "round 2 «Пустой»", "no themes"]),
    (text_not_utf8, [], ["cp1251.txt", "line 1", "not UTF-8"]),
]


def svoyak(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "svoyak.cli", "package", *args],
                          capture_output=True, text=True, cwd=ROOT)


def snapshot(data: Path) -> tuple[set[str], dict[str, int]]:
    files = {str(p.relative_to(data)) for p in data.rglob("*") if p.is_file()
             and not p.name.endswith(("-wal", "-shm"))}
    with sqlite3.connect(data / "svoyak.db") as conn:
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("packages", "media", "package_media")}
    return files, counts


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """A library that already holds a package with media: a failed import must not touch it."""
    data = tmp_path_factory.mktemp("box") / "data"
    r = svoyak("import", str(FIXTURES / "v5-encoded-names.siq"), "--data", str(data))
    assert r.returncode == 0, r.stderr
    return data


@pytest.mark.parametrize("make,options,words", CASES, ids=[c[0].__name__ for c in CASES])
def test_hostile_file_is_refused_cleanly(make, options, words, library, tmp_path):
    path = make(tmp_path)
    before = snapshot(library)
    r = svoyak("import", str(path), "--data", str(library), *options)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in r.stderr, f"{w!r} not in {r.stderr!r}"
    assert snapshot(library) == before
    assert not list((library / "media").glob(".staging-*"))
    # inspect refuses it the same way
    r = svoyak("inspect", str(path), "--json")
    assert r.returncode != 0 and words[0] in r.stderr and r.stdout == ""


def test_limits_are_settings(tmp_path):
    """Entry count, total size and ratio limits come from options and the environment."""
    many = siq_file(tmp_path / "many.siq", {"content.xml": content(GOOD_ROUND),
                                            **{f"Images/{i}.png": b"x" for i in range(20)}})
    r = svoyak("import", str(many), "--data", str(tmp_path / "d"), "--max-entries", "10")
    assert r.returncode != 0 and "21 entries" in r.stderr and "limit of 10" in r.stderr
    big = siq_file(tmp_path / "big.siq", {"content.xml": content(GOOD_ROUND),
                                          "Video/v.mp4": os.urandom(3 << 20)})
    r = svoyak("import", str(big), "--data", str(tmp_path / "d"), "--max-unpacked-mb", "2")
    assert r.returncode != 0 and "more than 2 MB" in r.stderr
    assert not (tmp_path / "d").exists()
    # the defaults accept it; the environment can tighten them
    assert svoyak("inspect", str(big)).returncode == 0
    assert Limits.from_env({"SVOYAK_PACKAGE_MAX_MB": "2"}).max_total_bytes == 2 << 20
    with pytest.raises(PackageError, match="more than 2 MB"):
        SafeZip(big, Limits.from_env({"SVOYAK_PACKAGE_MAX_MB": "2"}))
    # a lower ratio limit refuses what the default allows
    packed = siq_file(tmp_path / "packed.siq", {"content.xml": content(GOOD_ROUND),
                                                "Audio/a.mp3": b"".join(
                                                    os.urandom(64) + bytes(1984)
                                                    for _ in range(1024))})
    with zipfile.ZipFile(packed) as z:
        info = z.getinfo("Audio/a.mp3")
    ratio = info.file_size / info.compress_size
    assert 2 < ratio < Limits().max_ratio
    siq.load(packed).close()
    with pytest.raises(PackageError, match="zip bomb"):
        siq.load(packed, Limits(max_ratio=ratio / 2))


def test_missing_media_is_a_warning_not_a_failure(tmp_path):
    xml = content(GOOD_ROUND.replace(
        "<item>q</item>", '<item>q</item><item type="image" isRef="True">gone.png</item>'))
    p = siq_file(tmp_path / "missing.siq", {"content.xml": xml})
    r = svoyak("import", str(p), "--data", str(tmp_path / "d"))
    assert r.returncode == 0, r.stderr
    assert "question 1 (100): media file Images/gone.png is missing" in r.stdout
