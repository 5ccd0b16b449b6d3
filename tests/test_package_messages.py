"""Every refusal of a package or the library speaks Russian and English (issue 13).

Each case feeds a broken file (or a broken library) to the real code and checks the error's
two messages: both non-empty, the Russian one in Russian, neither a Python repr nor an
exception's own English words. A source walk then checks that every raise site in
`appliance/packages/` gives both messages and a code, and that every code there is met by a
case here. Last, the admin upload page and the CLI show the message in the reader's
language."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from webui_kit import Kit, make_kit

from appliance.packages import bounds, exchange, formats, text
from appliance.packages.archive import Limits, PackageError, SafeZip, read_document
from appliance.packages.errors import BilingualError
from appliance.packages.library import Library, LibraryError
from appliance.packages.media import MediaStore
from appliance.packages.model import Item, ItemType, Package, Question, Round, Theme

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ROOT / "appliance" / "packages"
FIXTURES = ROOT.parent / "shared" / "fixtures" / "siq"
QUESTION = ('<question price="100"><params><param name="question" type="content">'
            '<item>q</item></param></params><right><answer>a</answer></right></question>')
ROUND = f'<round name="R"><themes><theme name="T"><questions>{QUESTION}</questions></theme>' \
        '</themes></round>'


def xml(rounds: str = ROUND, root: str = "package") -> str:
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<{root} name="p" version="5">'
            f'<rounds>{rounds}</rounds></{root}>\n')


def zipped(path: Path, entries: dict[str, bytes | str],
           method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=method) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def good_siq(d: Path) -> Path:
    return zipped(d / "good.siq", {"content.xml": xml()})


def patch_central(path: Path, name: str, *, flag: int | None = None,
                  method: int | None = None) -> Path:
    """Set an entry's general-purpose flag or compression method in both its headers (what
    a crafting tool writes; zipfile itself refuses to write such entries)."""
    raw = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = raw.find(sig)
        while at != -1:
            name_at = at + (30 if sig == b"PK\x03\x04" else 46)
            size_at = at + (26 if sig == b"PK\x03\x04" else 28)
            length = int.from_bytes(raw[size_at:size_at + 2], "little")
            if raw[name_at:name_at + length] == name.encode():
                if flag is not None:
                    raw[at + flag_at:at + flag_at + 2] = flag.to_bytes(2, "little")
                if method is not None:
                    raw[at + method_at:at + method_at + 2] = method.to_bytes(2, "little")
            at = raw.find(sig, at + 4)
    path.write_bytes(bytes(raw))
    return path


def question(price: int, factor: int = 2) -> Question:
    return Question(price=price, content=[Item(ItemType.TEXT, "q")], right=["a"],
                    factor=factor)


def package(*questions: Question, themes: int = 1, rounds: int = 1) -> Package:
    return Package("p", [Round(f"Р{r}", [Theme(f"Т{t}", list(questions))
                                         for t in range(themes)]) for r in range(rounds)])


def library_with_package(d: Path) -> Library:
    lib = Library(d / "data")
    lib.import_file(FIXTURES / "v4-media.siq")
    return lib


# -- the cases: (code, how to make it fail) ---------------------------------------------------

def c_truncated(d: Path) -> None:
    whole = good_siq(d).read_bytes()
    (d / "cut.siq").write_bytes(whole[: len(whole) // 2])
    formats.load(d / "cut.siq")


def c_not_zip(d: Path) -> None:
    (d / "noise.siq").write_bytes(b"\x01\x02" * 500)
    SafeZip(d / "noise.siq")


def c_missing_file(d: Path) -> None:
    formats.load(d / "nowhere.siq")


def c_a_folder(d: Path) -> None:
    (d / "folder.siq").mkdir()
    SafeZip(d / "folder.siq")


def c_document_unreadable(d: Path) -> None:
    (d / "folder.json").mkdir()
    read_document(d / "folder.json", Limits())


def c_encrypted(d: Path) -> None:
    path = zipped(d / "secret.siq", {"content.xml": xml(), "Images/a.png": b"x" * 100})
    formats.load(patch_central(path, "Images/a.png", flag=0x1))


def c_duplicate(d: Path) -> None:
    formats.load(_twice(d))


def _twice(d: Path) -> Path:
    path = d / "twice.siq"
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "w") as z:  # zipfile warns, and
        z.writestr("content.xml", xml())                              # writes it anyway
        z.writestr("content.xml", xml(ROUND.replace("100", "200")))
    return path


def c_split_bomb(d: Path) -> None:
    entries: dict[str, bytes | str] = {"content.xml": xml()}
    entries |= {f"Images/{i}.png": bytes(1 << 20) for i in range(60)}
    formats.load(zipped(d / "split.siq", entries))


def c_entry_bomb(d: Path) -> None:
    formats.load(zipped(d / "bomb.siq", {"content.xml": xml(), "Video/v.mp4": bytes(8 << 20)}))


def c_total_limit(d: Path) -> None:
    SafeZip(zipped(d / "big.siq", {"content.xml": xml(), "a.bin": os.urandom(3 << 20)}),
            Limits(max_total_bytes=2 << 20))


def c_streamed_bomb(d: Path) -> None:
    # The header says it is small; the stream says otherwise (checked while unpacking).
    path = zipped(d / "liar.siq", {"content.xml": xml(), "a.bin": bytes(3 << 20)})
    with SafeZip(path) as z:
        z._streamed = z.limits.max_total_bytes  # as if the rest had been unpacked already
        list(z.chunks("a.bin"))


def c_too_many_entries(d: Path) -> None:
    SafeZip(zipped(d / "many.siq", {f"{i}.txt": "x" for i in range(12)}),
            Limits(max_entries=10))


def c_dot_dot(d: Path) -> None:
    SafeZip(zipped(d / "up.siq", {"../../evil.sh": "x"}))


def c_absolute(d: Path) -> None:
    SafeZip(zipped(d / "abs.siq", {"/etc/evil.conf": "x"}))


def c_symlink(d: Path) -> None:
    path = d / "link.siq"
    with zipfile.ZipFile(path, "w") as z:
        info = zipfile.ZipInfo("Images/link.png")
        info.create_system = 3
        info.external_attr = (0o120777 << 16)
        z.writestr(info, "/etc/passwd")
    SafeZip(path)


def c_damaged_entry(d: Path) -> None:
    path = zipped(d / "crc.siq", {"content.xml": xml(), "a.bin": b"A" * 5000},
                  zipfile.ZIP_STORED)
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"A" * 100, b"B" * 100, 1))
    with SafeZip(path) as z:
        z.read("a.bin")


def c_unsupported_method(d: Path) -> None:
    path = zipped(d / "method.siq", {"content.xml": xml(), "a.bin": b"data"},
                  zipfile.ZIP_STORED)
    with SafeZip(patch_central(path, "a.bin", method=97)) as z:
        z.read("a.bin")


def c_entry_too_large(d: Path) -> None:
    with SafeZip(good_siq(d), Limits(max_xml_bytes=100)) as z:
        z.read("content.xml")


def c_document_too_large(d: Path) -> None:
    (d / "big.txt").write_text("x" * 200)
    read_document(d / "big.txt", Limits(max_xml_bytes=100))


def c_no_content_xml(d: Path) -> None:
    formats.load(zipped(d / "empty.siq", {"Images/a.png": b"png"}))


def c_bad_xml(d: Path) -> None:
    formats.load(zipped(d / "bad.siq", {"content.xml": xml().replace("<theme name=\"T\">",
                                                                     "<theme name=\"T\"")}))


def c_entity(d: Path) -> None:
    doc = ('<?xml version="1.0"?><!DOCTYPE p [<!ENTITY lol "lol">]>'
           '<package name="&lol;"><rounds/></package>')
    formats.load(zipped(d / "lol.siq", {"content.xml": doc}))


def c_external_entity(d: Path) -> None:
    doc = ('<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           '<package name="&x;"><rounds/></package>')
    formats.load(zipped(d / "xxe.siq", {"content.xml": doc}))


def c_wrong_root(d: Path) -> None:
    formats.load(zipped(d / "root.siq", {"content.xml": xml(root="quiz")}))


def c_no_rounds(d: Path) -> None:
    formats.load(zipped(d / "norounds.siq", {"content.xml": xml(rounds="")}))


def c_round_without_themes(d: Path) -> None:
    formats.load(zipped(d / "r.siq", {"content.xml": xml(ROUND + '<round name="П"><themes/>'
                                                          '</round>')}))


def c_themes_without_questions(d: Path) -> None:
    formats.load(zipped(d / "t.siq", {"content.xml": xml(
        '<round name="R"><themes><theme name="T"><questions/></theme></themes></round>')}))


def c_no_price(d: Path) -> None:
    formats.load(zipped(d / "np.siq", {"content.xml": xml(ROUND.replace(' price="100"', ""))}))


def c_bad_price(d: Path) -> None:
    formats.load(zipped(d / "bp.siq", {"content.xml": xml(ROUND.replace('"100"', '"сто"'))}))


def c_price_out_of_bounds(d: Path) -> None:
    bounds.check(package(question(100), question(10 ** 30)), "huge.siq")


def c_factor_out_of_bounds(d: Path) -> None:
    bounds.check(package(question(100, factor=1000)), "factor.siq")


def c_too_many_questions(d: Path) -> None:
    bounds.check(package(*[question(100)] * (bounds.MAX_QUESTIONS + 1)), "long.siq")


def c_too_many_themes(d: Path) -> None:
    bounds.check(package(question(100), themes=bounds.MAX_THEMES + 1), "wide.siq")


def c_too_many_rounds(d: Path) -> None:
    bounds.check(package(question(100), rounds=bounds.MAX_ROUNDS + 1), "deep.siq")


def c_cat_values(d: Path) -> None:
    from appliance.packages.model import Cat, CatPrice
    q = question(100)
    q.cat = Cat(theme="x", price=CatPrice(values=list(range(bounds.MAX_CAT_VALUES + 1))))
    bounds.check(package(q), "cat.siq")


def c_json_not_utf8(d: Path) -> None:
    (d / "p.json").write_bytes(b'{"format": "\xff"}')
    formats.load(d / "p.json")


def c_json_invalid(d: Path) -> None:
    (d / "p.json").write_text('{"format": ')
    formats.load(d / "p.json")


def c_json_too_deep(d: Path) -> None:
    (d / "p.json").write_text("[" * 100_000 + "]" * 100_000)
    exchange.load_json(d / "p.json")


def c_json_not_svoyak(d: Path) -> None:
    (d / "p.json").write_text('{"format": "other"}')
    formats.load(d / "p.json")


def c_json_bad_price(d: Path) -> None:
    doc = {"format": "svoyak-package", "name": "p", "rounds": [{"name": "R", "themes": [
        {"name": "T", "questions": [{"price": "много"}]}]}]}
    (d / "p.json").write_text(json.dumps(doc))
    formats.load(d / "p.json")


def c_json_missing_field(d: Path) -> None:
    (d / "p.json").write_text('{"format": "svoyak-package", "rounds": []}')
    formats.load(d / "p.json")


def c_json_wrong_type(d: Path) -> None:
    (d / "p.json").write_text('{"format": "svoyak-package", "name": "p", "rounds": ["R"]}')
    formats.load(d / "p.json")


def c_export_without_package_json(d: Path) -> None:
    exchange.load(zipped(d / "x.zip", {"media.json": "{}"}))


def c_export_bad_media_json(d: Path) -> None:
    doc = '{"format": "svoyak-package", "name": "p", "rounds": []}'
    formats.load(zipped(d / "x.zip", {"package.json": doc, "media.json": "[1, 2"}))


def c_export_media_missing(d: Path) -> None:
    lib = library_with_package(d)
    for f in lib.media.root.rglob("*"):
        if f.is_file():
            f.unlink()
    lib.export(lib.list()[0].id, d / "out.zip")


def c_export_media_damaged(d: Path) -> None:
    lib = library_with_package(d)
    pid = lib.list()[0].id
    out = lib.export(pid, d / "out.zip")
    with zipfile.ZipFile(out) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    name = next(n for n in entries if n.startswith("media/"))
    entries[name] = b"not the bytes of this hash"
    Library(d / "other").import_file(zipped(d / "forged.zip", entries))


def c_text_binary(d: Path) -> None:
    (d / "p.txt").write_bytes(b"\x00\x01binary")
    text.load(d / "p.txt")


def c_text_not_utf8(d: Path) -> None:
    (d / "p.txt").write_bytes("Тема 1. РЕКИ\n10. Река\nОтвет: Волга\n".encode("cp1251"))
    text.load(d / "p.txt")


TEXT_CASES = {
    "values": "Стоимости: 10 двадцать\nТема 1. А\n1. q\nОтвет: a\n",
    "no values": "Стоимости: ,\nТема 1. А\n1. q\nОтвет: a\n",
    "answers first": "Ответы:\n1. a\n",
    "answers to no theme": "Тема 1. А\n1. q\nОтветы к теме 5\n1. a\n",
    "question first": "Пакет: п\nАвтор: я\n1. q\n",
    "question twice": "Тема 1. А\n1. q\nОтвет: a\n1. q2\nОтвет: b\n",
    "answer first": "Тема 1. А\nОтвет: a\n",
    "second answer": "Тема 1. А\n1. q\nОтвет: a\nОтвет: b\n",
    "comment first": "Тема 1. А\nЗачёт: x\n",
    "no themes": "просто текст\n",
    "round without themes": "Тема 1. А\n1. q\nОтвет: a\nРаунд 2. Б\n",
    "theme without questions": "Тема 1. А\nТема 2. Б\n1. q\nОтвет: a\n",
    "question without text": "Тема 1. А\n1.\nОтвет: a\n",
    "question without answer": "Тема 1. А\n1. q\n",
    "answer beyond": "Тема 1. А\n10. q\n20. q2\nОтветы\n1. a\n2. b\n3. c\n",
    "answer to nothing": "Тема 1. А\n1. q\n2. q2\nОтветы\n1. a\n5. b\n",
    "answer twice": "Тема 1. А\n1. q\nОтвет: a\nОтветы\n1. b\n",
}


def text_case(source: str) -> Callable[[Path], None]:
    def case(d: Path) -> None:
        text.parse(source, "p.txt")
    return case


def c_unknown_package(d: Path) -> None:
    library_with_package(d).info(999)


def c_unknown_package_get(d: Path) -> None:
    library_with_package(d).get(999)


def c_delete_unknown(d: Path) -> None:
    library_with_package(d).delete(999)


def c_delete_in_empty_library(d: Path) -> None:
    Library(d / "empty").delete(1)


def c_database_damaged(d: Path) -> None:
    lib = Library(d / "data")
    lib.data.mkdir(parents=True)
    lib.db_path.write_bytes(b"this is not a database" * 100)
    lib.import_file(good_siq(d))


def c_database_unopenable(d: Path) -> None:
    lib = Library(d / "data")
    lib.data.mkdir(parents=True)
    lib.db_path.mkdir()  # a folder where the database file should be
    lib.import_file(good_siq(d))


def c_database_full(d: Path) -> None:
    lib = library_with_package(d)
    with sqlite3.connect(lib.db_path) as conn:  # a real SQLite failure mid-transaction
        conn.execute("CREATE TRIGGER full BEFORE INSERT ON packages "
                     "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    lib.import_file(good_siq(d))


def c_not_a_media_hash(d: Path) -> None:
    MediaStore(d / "media").path("../../etc/passwd")


CASES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "truncated": ("truncated", c_truncated),
    "not a zip": ("not_zip", c_not_zip),
    "missing file": ("unreadable", c_missing_file),
    "a folder": ("unreadable", c_a_folder),
    "document unreadable": ("unreadable", c_document_unreadable),
    "encrypted": ("encrypted", c_encrypted),
    "duplicate names": ("duplicate_entry", c_duplicate),
    "zip bomb split over entries": ("zip_bomb", c_split_bomb),
    "zip bomb in one entry": ("zip_bomb", c_entry_bomb),
    "total size limit": ("zip_bomb", c_total_limit),
    "bomb found while streaming": ("zip_bomb", c_streamed_bomb),
    "too many entries": ("too_many_entries", c_too_many_entries),
    "dot dot": ("unsafe_name", c_dot_dot),
    "absolute path": ("unsafe_name", c_absolute),
    "symlink": ("symlink", c_symlink),
    "damaged entry": ("damaged", c_damaged_entry),
    "unsupported compression": ("unsupported_compression", c_unsupported_method),
    "entry too large": ("too_large", c_entry_too_large),
    "document too large": ("too_large", c_document_too_large),
    "missing content.xml": ("not_siq", c_no_content_xml),
    "bad XML": ("bad_xml", c_bad_xml),
    "entity expansion": ("unsafe_xml", c_entity),
    "external entity": ("unsafe_xml", c_external_entity),
    "wrong root": ("not_siq", c_wrong_root),
    "no rounds": ("no_rounds", c_no_rounds),
    "round without themes": ("no_themes", c_round_without_themes),
    "themes without questions": ("no_themes", c_themes_without_questions),
    "no price": ("no_price", c_no_price),
    "price not a number": ("bad_price", c_bad_price),
    "price out of bounds": ("out_of_bounds", c_price_out_of_bounds),
    "factor out of bounds": ("out_of_bounds", c_factor_out_of_bounds),
    "too many questions": ("out_of_bounds", c_too_many_questions),
    "too many themes": ("out_of_bounds", c_too_many_themes),
    "too many rounds": ("out_of_bounds", c_too_many_rounds),
    "cat with too many values": ("out_of_bounds", c_cat_values),
    "JSON not UTF-8": ("not_utf8", c_json_not_utf8),
    "JSON invalid": ("bad_json", c_json_invalid),
    "JSON too deep": ("bad_json", c_json_too_deep),
    "JSON not ours": ("not_svoyak", c_json_not_svoyak),
    "JSON bad price": ("bad_package", c_json_bad_price),
    "JSON missing field": ("bad_package", c_json_missing_field),
    "JSON wrong type": ("bad_package", c_json_wrong_type),
    "export without package.json": ("not_package", c_export_without_package_json),
    "export with a bad media.json": ("bad_json", c_export_bad_media_json),
    "export of missing media": ("media_missing", c_export_media_missing),
    "export with forged media": ("damaged", c_export_media_damaged),
    "text package binary": ("not_package", c_text_binary),
    "text package not UTF-8": ("not_utf8", c_text_not_utf8),
    **{f"text: {k}": ("bad_text", text_case(v)) for k, v in TEXT_CASES.items()},
    "unknown package": ("no_package", c_unknown_package),
    "unknown package body": ("no_package", c_unknown_package_get),
    "delete unknown": ("no_package", c_delete_unknown),
    "delete in an empty library": ("no_package", c_delete_in_empty_library),
    "damaged database": ("database", c_database_damaged),
    "database cannot open": ("database", c_database_unopenable),
    "database full": ("disk_full", c_database_full),
    "not a media hash": ("bad_media_hash", c_not_a_media_hash),
}

CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
# What a Python repr or an exception's own text looks like inside a message.
LEAKS = re.compile(r"Error\(|Exception|\\x[0-9a-f]{2}|<class |object at 0x|\[Errno|b'|"
                   r"'[^']*'|Traceback|File is not a zip|Bad CRC|compression method")


@pytest.mark.parametrize("name", list(CASES))
def test_every_refusal_has_a_russian_and_an_english_message(name: str, tmp_path: Path) -> None:
    code, make = CASES[name]
    with pytest.raises(BilingualError) as caught:
        make(tmp_path)
    e = caught.value
    assert isinstance(e, PackageError | LibraryError)
    assert e.code == code, (e.code, e.message_en)
    ru, en = e.message_ru, e.message_en
    assert ru.strip() and en.strip() and ru != en
    # Russian: Cyrillic words outside what the file itself says (its names, «quoted»).
    assert CYRILLIC.search(re.sub(r"«[^»]*»", "", ru)), ru
    for message in (ru, en):
        assert not LEAKS.search(message), message
        assert "\n" not in message and len(message) < 400, message
    assert str(e) == en and e.message("ru") == ru and e.message("en") == en
    assert e.to_json() == {"code": code, "ru": ru, "en": en}


def raise_sites() -> Iterator[tuple[str, int, ast.Call]]:
    for path in sorted(PACKAGES.glob("*.py")):
        if path.name == "jsonform.py":  # the rules engineer's module; its errors are wrapped
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                    f, ast.Attribute) else ""
                if name in ("PackageError", "LibraryError", "fail"):
                    yield path.name, node.lineno, node


def test_every_raise_site_gives_two_messages_and_a_known_code() -> None:
    """The cases above meet every code a raise site can give, and no site gives one message."""
    sites = list(raise_sites())
    assert len(sites) > 45
    codes: set[str] = set()
    for file, line, call in sites:
        where = f"{file}:{line}"
        name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr  # type: ignore[union-attr]
        if name == "fail" and file == "text.py":
            assert len(call.args) == 3, where  # (line, ru, en); the code is bad_text
            codes.add("bad_text")
            continue
        wanted = 4 if name == "fail" else 3  # siq's fail(place, ru, en, code)
        assert len(call.args) == wanted, f"{where}: (ru, en, code) expected"
        code = call.args[-1]
        if isinstance(code, ast.Constant):
            codes.add(code.value)
        else:  # a computed code: the constants it is made of
            codes |= {c.value for c in ast.walk(code)
                      if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    met = {code for code, _ in CASES.values()}
    assert codes - met == set(), f"codes no case produces: {codes - met}"
    assert met - codes == set()


# -- where the host reads them --------------------------------------------------------------

@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path, library=Library(tmp_path))
    yield k
    k.close()


BROKEN = {  # file name -> bytes: a few of the cases as uploads
    "cut.siq": lambda d: good_siq(d).read_bytes()[:150],
    "twice.siq": lambda d: _twice(d).read_bytes(),
    "huge.txt": lambda d: "Стоимости: 10 1000000000000000000000000000000\nТема 1. А\n1. q\n"
                          "Ответ: a\n2. q\nОтвет: b\n".encode(),
    "bad.siq": lambda d: zipped(d / "bad.siq", {"content.xml": "<package><rounds>"}
                                ).read_bytes(),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_admin_upload_shows_the_message_in_the_pages_language(name: str, kit: Kit,
                                                              tmp_path: Path) -> None:
    c = kit.app.test_client()
    c.post("/login", data={"pin": kit.services.settings.pin})
    body = BROKEN[name](tmp_path)
    for lang in ("ru", "en"):
        c.set_cookie("lang", lang)
        r = c.post("/admin/packages", data={"file": (io.BytesIO(body), name)},
                   content_type="multipart/form-data")
        assert r.status_code == 400
        answer = r.get_json()
        assert answer["ok"] is False and answer["code"] == answer["refused"]["code"]
        assert answer["error"] == answer["refused"][lang], answer
        assert name in answer["error"]
        cyrillic = CYRILLIC.search(re.sub(r"«[^»]*»", "", answer["error"]))
        assert bool(cyrillic) == (lang == "ru"), answer["error"]
        assert not LEAKS.search(answer["error"])
    assert kit.services.library.list() == []


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("LC_ALL", "LC_MESSAGES", "LANG", "SVOYAK_LANG")}
    return subprocess.run([sys.executable, "-m", "svoyak.cli", "package", *args],
                          capture_output=True, text=True, cwd=ROOT, env={**clean, **env})


def test_cli_speaks_the_readers_language(tmp_path: Path) -> None:
    (tmp_path / "noise.siq").write_bytes(b"\x01\x02" * 500)
    args = ("import", str(tmp_path / "noise.siq"), "--data", str(tmp_path / "data"))
    ru = cli(*args, env={"LANG": "ru_RU.UTF-8"})
    en = cli(*args, env={"LC_ALL": "en_GB.UTF-8", "LANG": "ru_RU.UTF-8"})
    both = cli(*args, env={"LANG": "C.UTF-8"})
    chosen = cli(*args, "--lang", "en", env={"LANG": "ru_RU.UTF-8"})
    for r in (ru, en, both, chosen):
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert ru.stderr == "svoyak package import: ошибка: noise.siq: это не zip-архив " \
                        "(и не пакет SIGame)\n"
    assert en.stderr == chosen.stderr == "svoyak package import: error: noise.siq: not a " \
                                         "zip archive (nor a SIGame package)\n"
    assert both.stderr == ru.stderr + en.stderr
    assert not (tmp_path / "data").exists()
