"""SIQ import of the real SIGame fixtures (versions 3, 4, 5).

Expected counts are taken from the XML by this test's own few lines of ElementTree and a
kind table written from the issue's mapping, and cross-checked with literal numbers read
off the files, never from the importer.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
import zipfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

from appliance.packages import siq
from appliance.packages.library import Library
from appliance.packages.model import CatPrice, ItemType, Kind

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "siq"
if not FIXTURES.is_dir():  # loud, never a skip: the importer must be tested on real files
    raise RuntimeError(f"SIQ fixtures are missing: expected them in {FIXTURES}")

ALL = sorted(p.name for p in FIXTURES.glob("*.siq"))

# The mapping, restated here independently of appliance.packages.siq.
SPEC_KINDS = {
    "": "normal", "simple": "normal", "withbutton": "normal",
    "stake": "auction", "auction": "auction", "stakeall": "stake_all",
    "secret": "cat", "secretpublicprice": "cat", "secretnoquestion": "cat",
    "cat": "cat", "bagcat": "cat",
    "norisk": "no_risk", "foryourself": "no_risk", "sponsored": "no_risk",
    "forall": "for_all",
}

# Literal figures read off each content.xml: (rounds, themes per round, questions, kinds).
LITERAL = {
    "v3-old-namespace.siq": (4, [6, 6, 6, 7], 97,
                             {"normal": 84, "cat": 6, "auction": 5, "no_risk": 2}),
    "v4-media.siq": (2, [2, 3], 25,
                     {"normal": 17, "cat": 5, "auction": 1, "no_risk": 1, "empty": 1}),
    "v5-all-features.siq": (2, [4, 3], 35,
                            {"normal": 24, "cat": 5, "for_all": 2, "auction": 1, "no_risk": 1,
                             "empty": 1, "stake_all": 1}),
    "v5-classic-1.siq": (4, [6, 6, 6, 7], 97,
                         {"normal": 84, "cat": 6, "auction": 5, "no_risk": 2}),
    "v5-classic-2007-1.siq": (4, [6, 6, 6, 7], 97, {"normal": 85, "auction": 6, "cat": 6}),
    "v5-classic-2010-10.siq": (4, [6, 6, 6, 7], 97,
                               {"normal": 84, "cat": 7, "auction": 4, "no_risk": 2}),
    "v5-encoded-names.siq": (1, [1], 2, {"normal": 2}),
}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def xml_counts(name: str) -> tuple[int, list[int], int, dict[str, int]]:
    """Count rounds, themes, questions and kinds straight from content.xml."""
    with zipfile.ZipFile(FIXTURES / name) as z:
        root = ET.fromstring(z.read("content.xml"))
    rounds = [e for e in root.iter() if _local(e.tag) == "round"]
    themes = [sum(1 for e in r.iter() if _local(e.tag) == "theme") for r in rounds]
    kinds: Counter[str] = Counter()
    questions = 0
    for q in (e for e in root.iter() if _local(e.tag) == "question"):
        questions += 1
        if q.get("price") == "-1":
            kinds["empty"] += 1
            continue
        type_el = next((c for c in q if _local(c.tag) == "type"), None)
        raw = q.get("type") or (type_el.get("name") if type_el is not None else "") or ""
        kinds[SPEC_KINDS.get(raw.lower(), "normal")] += 1
    return len(rounds), themes, questions, dict(kinds)


def test_every_fixture_is_covered():
    assert set(ALL) == set(LITERAL), "a fixture was added or removed: update LITERAL"


@pytest.mark.parametrize("name", ALL)
def test_counts_match_the_xml(name):
    expected = xml_counts(name)
    assert expected == LITERAL[name]  # the hand count agrees with ElementTree
    with siq.load(FIXTURES / name) as loaded:
        p = loaded.package
    kinds = Counter(q.kind.value for t in p.all_themes() for q in t.questions)
    got = (len(p.rounds), [len(r.themes) for r in p.rounds],
           sum(len(t.questions) for t in p.all_themes()), dict(kinds))
    assert got == expected


@pytest.mark.parametrize("name", ALL)
def test_final_rounds_are_final(name):
    with zipfile.ZipFile(FIXTURES / name) as z:
        root = ET.fromstring(z.read("content.xml"))
    finals = [r.get("type") == "final" for r in root.iter() if _local(r.tag) == "round"]
    with siq.load(FIXTURES / name) as loaded:
        assert [r.final for r in loaded.package.rounds] == finals


@pytest.mark.parametrize("name", ALL)
def test_imports_into_the_library(name, tmp_path):
    lib = Library(tmp_path)
    package_id = lib.import_file(FIXTURES / name)
    info = lib.info(package_id)
    assert info.source == name
    assert info.rounds == LITERAL[name][0]
    assert lib.get(package_id).rounds[0].themes


def _questions(p):
    return {(t.name, q.price): q for t in p.all_themes() for q in t.questions}


def test_v5_question_types_and_cats():
    with siq.load(FIXTURES / "v5-all-features.siq") as loaded:
        p = loaded.package
    assert loaded.format == "siq5"
    qs = {q.price: q for q in p.rounds[0].themes[0].questions}
    assert qs[200].kind == Kind.AUCTION
    assert qs[200].right == ["Ответ", "Альтернативный ответ для зачёта человеком/компьютером"]
    assert qs[200].wrong == ["Неправильная версия для незачёта/для бота"]
    fixed = qs[300].cat
    assert fixed and fixed.theme == "Новая тема" and fixed.price.fixed == 2000
    assert not fixed.may_keep and not fixed.public_price
    # numberSet 0..0: the receiver picks the round's minimum or maximum (100 or 1400).
    assert qs[400].cat.price == CatPrice(values=[100, 1400])
    ranged = qs[500].cat
    assert ranged.may_keep  # selectionMode any
    assert [v for v in range(0, 1200) if ranged.price.allows(v)] == [100, 300, 500, 700, 900]
    assert qs[600].cat.public_price and qs[600].cat.price.values == [100, 500]
    assert qs[700].cat.no_question and qs[700].cat.price.fixed == 700
    assert qs[800].kind == Kind.NO_RISK
    assert qs[-1].kind == Kind.EMPTY
    assert qs[900].kind == Kind.NORMAL
    assert any("custom" in w and "question 10" in w for w in p.warnings)
    assert qs[1000].kind == Kind.STAKE_ALL
    assert qs[1100].kind == Kind.FOR_ALL
    assert qs[100].comment.startswith("Это комментарий к вопросу")


def test_v5_content_items():
    with siq.load(FIXTURES / "v5-all-features.siq") as loaded:
        p = loaded.package
    content = {q.price: q for q in p.rounds[0].themes[1].questions}
    spoken, timed = content[200].content
    assert spoken.spoken and spoken.type == ItemType.TEXT
    assert timed.duration_s == 8.0 and not timed.spoken
    assert content[300].content[0].type == ItemType.IMAGE
    assert content[300].content[0].value == "Images/sample-boat-400x300.png"
    assert content[300].shown_text == ""  # the only text is the host's remark
    assert content[400].media == ["Audio/sample-3s.mp3"]
    assert [i.type for i in content[900].answer_content] == [ItemType.IMAGE]
    assert len(content[1200].content) == 4
    html = [q for q in p.rounds[0].themes[3].questions]
    assert html[0].content[0].type == ItemType.HTML
    assert html[0].content[0].value == "Html/nature_trivia (2).html"
    assert loaded.media["Html/nature_trivia (2).html"] == "Html/nature_trivia%20(2).html"
    assert loaded.mime["Images/sample-boat-400x300.png"] == "image/png"
    assert loaded.mime["Html/trivia-process-demo.html"] == "text/html"
    options = p.rounds[0].themes[2].questions[0]
    assert [i.value for i in options.content][1:] == ["A. Вариант 1", "B. Вариант 2",
                                                      "C. Вариант 3", "D. Вариант 4"]


def test_v4_types_params_and_atoms():
    with siq.load(FIXTURES / "v4-media.siq") as loaded:
        p = loaded.package
    assert loaded.format == "siq4"
    qs = {q.price: q for q in p.rounds[0].themes[0].questions}
    assert qs[200].kind == Kind.AUCTION
    assert qs[300].cat.price.fixed == 2000 and not qs[300].cat.may_keep
    assert qs[400].cat.price.values == [100, 1200]  # cost 0: the round's min or max
    assert qs[500].cat.may_keep  # self=true
    assert (qs[500].cat.price.low, qs[500].cat.price.high, qs[500].cat.price.step) == (
        100, 1000, 200)
    assert qs[600].cat.price.values == [100, 500] and qs[600].cat.public_price  # before
    assert qs[700].cat.no_question and qs[700].cat.theme == "Вопросы разных типов"  # never, "-"
    assert qs[800].kind == Kind.NO_RISK  # sponsored
    content = {q.price: q for q in p.rounds[0].themes[1].questions}
    assert content[200].content[0].spoken  # say
    assert content[200].content[1].duration_s == 8.0
    assert content[400].content[0].type == ItemType.AUDIO  # voice
    assert content[400].media == ["Audio/sample-3s.mp3"]
    # marker: what follows is answer content
    assert [i.type for i in content[900].content] == [ItemType.TEXT]
    assert [i.type for i in content[900].answer_content] == [ItemType.IMAGE]
    assert content[1100].answer_content[0].type == ItemType.VIDEO
    # external links cannot be played offline: left out, with a warning naming the question
    assert content[800].content == [] and content[1200].content == []
    assert sum("external link" in w for w in p.warnings) == 2
    assert any("question 8 (800)" in w for w in p.warnings)


def test_v3_bagcat_costs():
    with siq.load(FIXTURES / "v3-old-namespace.siq") as loaded:
        p = loaded.package
    assert loaded.format == "siq3"
    cats = [q for t in p.all_themes() for q in t.questions if q.kind == Kind.CAT]
    by_theme = {q.cat.theme: q.cat for q in cats}
    assert by_theme["МЁРТВЫЕ ДУШИ"].price.values == [500, 1000]
    assert by_theme["МЁРТВЫЕ ДУШИ"].public_price
    assert by_theme["ЗАБОЛЕВАНИЯ"].price.allows(1300)
    assert not by_theme["ЗАБОЛЕВАНИЯ"].price.allows(1350)
    assert by_theme["ЗАБОЛЕВАНИЯ"].may_keep
    assert by_theme["КОРАБЛИ"].price.fixed == 700


def _entry_bytes(name: str) -> dict[str, bytes]:
    """Media files straight from the zip, keyed by decoded name."""
    with zipfile.ZipFile(FIXTURES / name) as z:
        return {unquote(n): z.read(n) for n in z.namelist() if "/" in n}


def xml_media_refs(name: str) -> int:
    """Media references in content.xml: v5 `item isRef="True"`, v3/v4 atoms with `@`."""
    with zipfile.ZipFile(FIXTURES / name) as z:
        root = ET.fromstring(z.read("content.xml"))
    v5 = sum(1 for e in root.iter() if _local(e.tag) == "item" and e.get("isRef") == "True")
    old = sum(1 for e in root.iter()
              if _local(e.tag) == "atom" and (e.text or "").startswith("@"))
    return v5 + old


@pytest.mark.parametrize("name,refs", [
    ("v5-all-features.siq", 19),
    ("v4-media.siq", 9),
    ("v5-encoded-names.siq", 2),
])
def test_media_resolve_to_stored_files(name, refs, tmp_path):
    assert xml_media_refs(name) == refs
    with siq.load(FIXTURES / name) as loaded:
        logical = [m for t in loaded.package.all_themes() for q in t.questions for m in q.media]
    assert len(logical) == refs  # every reference found its file
    raw = _entry_bytes(name)
    lib = Library(tmp_path)
    package = lib.get(lib.import_file(FIXTURES / name))
    stored = [m for t in package.all_themes() for q in t.questions for m in q.media]
    assert len(stored) == len(logical)  # no media lost on the way
    for before, digest in zip(logical, stored, strict=True):
        path = lib.media_path(digest)
        assert path is not None and path.is_file()
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest
        assert data == raw[before]  # the same bytes as in the package
        assert lib.media_type(digest)


def test_encoded_names_resolve():
    with siq.load(FIXTURES / "v5-encoded-names.siq") as loaded:
        p = loaded.package
        assert p.warnings == []
        media = [m for t in p.all_themes() for q in t.questions for m in q.media]
        assert media == ["Video/videoplayback (8)_2 (1).mp4",
                         "Images/[alliance]  King of Baking Kim Tak Goo E17-0-47-21-574.jpg"]
        assert loaded.media[media[0]] == "Video/videoplayback%20(8)_2%20(1).mp4"
        assert loaded.mime[media[1]] == "image/jpeg"
