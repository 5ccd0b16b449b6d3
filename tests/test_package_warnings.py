"""A package that imports with warnings (something left out or read otherwise) tells the
host in Russian and English, like a refusal does: every warning the real SIQ fixtures and
a hand-made package raise has a Russian first line and an English second; the CLI and the
admin preview give the reader's language; a warning stored by an older import (one English
line) still reads."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from webui_kit import Kit, make_kit

from appliance.packages import siq
from appliance.packages.errors import notice, notice_in
from appliance.packages.library import Library

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "siq"
CYRILLIC = re.compile(r"[А-Яа-яЁё]")


def _plain(text: str) -> str:
    """The words of a warning without what the package itself says («…», file names)."""
    return re.sub(r"«[^»]*»|\S+/\S+", "", text)


# Every kind of warning the SIQ reader gives: an empty theme, a negative price, an unknown
# question type, a cat cost that is not a number, an unknown content type, an external
# link, a missing media file.
WARNED = """<?xml version="1.0" encoding="utf-8"?>
<package name="p" version="5"><rounds><round name="R"><themes>
<theme name="Пустая"><questions/></theme>
<theme name="T"><questions>
<question price="-5"><params><param name="question" type="content"><item>q</item></param>
</params><right><answer>a</answer></right></question>
<question price="100" type="странный"><params><param name="question" type="content">
<item>q</item></param></params><right><answer>a</answer></right></question>
<question price="200" type="secret"><params>
<param name="price" type="numberSet"><numberSet minimum="x" maximum="1" step="1"/></param>
<param name="question" type="content"><item>q</item></param></params>
<right><answer>a</answer></right></question>
<question price="300"><params><param name="question" type="content">
<item type="hologram">x</item><item type="image">pic.png</item>
<item type="image" isRef="True">absent.png</item></param></params>
<right><answer>a</answer></right></question>
</questions></theme></themes></round></rounds></package>
"""


def warned_siq(d: Path) -> Path:
    path = d / "warned.siq"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("content.xml", WARNED)
    return path


def _load_warnings(path: Path) -> list[str]:
    with siq.load(path) as loaded:
        return list(loaded.package.warnings)


def test_every_warning_is_russian_then_english(tmp_path: Path) -> None:
    warnings = _load_warnings(warned_siq(tmp_path))
    for fixture in sorted(FIXTURES.glob("*.siq")):
        warnings += _load_warnings(fixture)
    assert len(warnings) >= 7
    for w in warnings:
        ru, sep, en = w.partition("\n")
        assert sep and ru and en and "\n" not in en, w
        assert CYRILLIC.search(_plain(ru)), ru
        assert not CYRILLIC.search(_plain(en)), en
        assert notice_in(w, "ru") == ru and notice_in(w, "en") == en


def test_each_kind_of_warning_is_met(tmp_path: Path) -> None:
    english = [notice_in(w, "en") for w in _load_warnings(warned_siq(tmp_path))]
    for words in ("no questions; left out", "negative price -5", "question type «странный»",
                  "price set is not numeric", "«hologram» is not supported",
                  "external link", "absent.png is missing"):
        assert any(words in w for w in english), (words, english)


def test_an_older_one_line_warning_reads_in_every_language() -> None:
    old = "round 1: media x.png is missing from the package; left out"
    assert notice_in(old, "ru") == notice_in(old, "en") == notice_in(old, None) == old
    assert notice_in(notice("а", "b"), None) == "а / b"


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path, library=Library(tmp_path))
    yield k
    k.close()


def test_admin_preview_lists_the_warnings_in_the_pages_language(kit: Kit,
                                                                tmp_path: Path) -> None:
    c = kit.app.test_client()
    c.post("/login", data={"pin": kit.services.settings.pin})
    body = warned_siq(tmp_path).read_bytes()
    r = c.post("/admin/packages", data={"file": (io.BytesIO(body), "warned.siq")},
               content_type="multipart/form-data")
    assert r.status_code == 200, r.get_json()
    pid = r.get_json()["package"]["id"]
    for lang in ("ru", "en"):
        c.set_cookie("lang", lang)
        texts = c.get(f"/admin/packages/{pid}").get_json()["warning_texts"]
        assert len(texts) >= 7
        assert all(bool(CYRILLIC.search(_plain(t))) == (lang == "ru") for t in texts), texts


def test_cli_prints_warnings_in_the_readers_language(tmp_path: Path) -> None:
    path = warned_siq(tmp_path)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("LC_ALL", "LC_MESSAGES", "LANG", "SVOYAK_LANG")}
    out = {}
    for lang in ("ru", "en"):
        done = subprocess.run([sys.executable, "-m", "svoyak.cli", "package", "inspect",
                               str(path), "--lang", lang], capture_output=True, text=True,
                              cwd=ROOT, env=clean)
        assert done.returncode == 0, done.stderr
        out[lang] = [line for line in done.stdout.splitlines()
                     if line.startswith(("warning:", "предупреждение:"))]
    assert len(out["ru"]) == len(out["en"]) >= 7
    assert all(line.startswith("предупреждение:") and CYRILLIC.search(_plain(line[15:]))
               for line in out["ru"])
    assert all(line.startswith("warning:") and not CYRILLIC.search(_plain(line))
               for line in out["en"])
