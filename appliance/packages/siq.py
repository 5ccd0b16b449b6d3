"""SIGame packages (.siq): a zip with `content.xml` plus `Images/`, `Audio/`, `Video/`, `Html/`.

Three generations share one reader, because the element names barely changed:
- version 5: `question/@type`, `params/param` with content `item`s (`type`, `isRef`,
  `placement`, `duration`), `numberSet` prices and `selectionMode` for secret questions;
- version 4 (namespace ygpackage3.0) and version 3 (an older namespace): `type name=...`
  with `param`s (`theme`, `cost` such as `[100;500]/100`, `self`, `knows`) and
  `scenario/atom` content (`say`, `voice`, `image`, `video`, `html`, `marker`).
Namespaces are ignored (they only identify the generation), so a package is read by shape.
The XML is parsed with defusedxml: entity declarations and external references are refused.

Russian: пакет SIGame, «Кот в мешке» = secret/bagcat, «Аукцион» = stake/auction.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import defusedxml
import defusedxml.ElementTree as SafeET

from appliance.packages.archive import Limits, PackageError, SafeZip
from appliance.packages.errors import Place, notice
from appliance.packages.loaded import Loaded, guess_mime
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

# SIQ question type (v5 attribute or v3/v4 `type name`, lower-cased) -> our kind.
KINDS: dict[str, Kind] = {
    "": Kind.NORMAL,
    "simple": Kind.NORMAL,
    "withbutton": Kind.NORMAL,
    "stake": Kind.AUCTION,
    "auction": Kind.AUCTION,
    "stakeall": Kind.STAKE_ALL,
    "secret": Kind.CAT,
    "secretpublicprice": Kind.CAT,
    "secretnoquestion": Kind.CAT,
    "cat": Kind.CAT,
    "bagcat": Kind.CAT,
    "norisk": Kind.NO_RISK,
    "foryourself": Kind.NO_RISK,
    "sponsored": Kind.NO_RISK,
    "forall": Kind.FOR_ALL,
}

# Media folders of the archive by item type.
FOLDERS = {
    ItemType.IMAGE: "Images",
    ItemType.AUDIO: "Audio",
    ItemType.VIDEO: "Video",
    ItemType.HTML: "Html",
}

# v5 item types and v3/v4 atom types -> (item type, spoken).
V5_ITEMS = {
    "": ItemType.TEXT,
    "text": ItemType.TEXT,
    "image": ItemType.IMAGE,
    "audio": ItemType.AUDIO,
    "video": ItemType.VIDEO,
    "html": ItemType.HTML,
}
ATOMS = {
    "": (ItemType.TEXT, False),
    "text": (ItemType.TEXT, False),
    "say": (ItemType.TEXT, True),
    "image": (ItemType.IMAGE, False),
    "voice": (ItemType.AUDIO, False),
    "audio": (ItemType.AUDIO, False),
    "video": (ItemType.VIDEO, False),
    "html": (ItemType.HTML, False),
}

_COST = re.compile(r"^\[\s*(-?\d+)\s*;\s*(-?\d+)\s*\](?:\s*/\s*(\d+))?$")
_DURATION = re.compile(r"^(\d+):(\d{2}):(\d{2})$")


# Expat's messages (the English stays in the English message).
_EXPAT_RU = {
    "not well-formed (invalid token)": "недопустимый символ в XML",
    "mismatched tag": "закрывающий тег XML не совпадает с открывающим",
    "no element found": "XML пуст или обрывается",
    "unclosed token": "незакрытый тег XML",
    "junk after document element": "лишний текст после корневого элемента XML",
    "undefined entity": "неизвестная сущность XML",
    "syntax error": "синтаксическая ошибка XML",
}


def _printable(text: object) -> str:
    """A name from the file, shown quoted: printable characters only, bounded."""
    return "".join(c if c.isprintable() else "?" for c in str(text or ""))[:80]


def parse_xml(data: bytes, where: str) -> ET.Element:
    """Parse untrusted XML safely; errors name `where` and the line and column."""
    try:
        root = SafeET.fromstring(data)
    except defusedxml.EntitiesForbidden as e:
        name = _printable(e.name)
        if e.sysid or e.pubid:
            raise PackageError(
                f"{where}: объявляет внешнюю сущность «{name}»; внешние сущности не "
                "принимаются",
                f"{where}: declares the external entity «{name}» "
                f"({_printable(e.sysid or e.pubid)}); external entities are refused",
                "unsafe_xml") from e
        raise PackageError(
            f"{where}: объявляет XML-сущность «{name}» (подстановка сущностей не принимается)",
            f"{where}: declares the XML entity «{name}» (entity expansion is refused)",
            "unsafe_xml") from e
    except defusedxml.ExternalReferenceForbidden as e:
        ref = _printable(e.sysid or e.pubid)
        raise PackageError(
            f"{where}: ссылается на внешний ресурс «{ref}» (внешние сущности не принимаются)",
            f"{where}: refers to an external resource «{ref}» (external entities are refused)",
            "unsafe_xml") from e
    except defusedxml.DefusedXmlException as e:
        raise PackageError(f"{where}: небезопасный XML не принимается",
                           f"{where}: refused unsafe XML", "unsafe_xml") from e
    except ET.ParseError as e:
        line, col = e.position
        msg = str(e).split(":")[0]
        what = _EXPAT_RU.get(msg, "ошибка XML")
        raise PackageError(f"{where}: {what} в строке {line}, столбце {col + 1}",
                           f"{where}: invalid XML at line {line}, column {col + 1}: {msg}",
                           "bad_xml") from e
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.rsplit("}", 1)[1]
    return root


def _text(el: ET.Element | None) -> str:
    return "".join(el.itertext()).strip() if el is not None else ""


def _info(el: ET.Element) -> tuple[list[str], list[str], str]:
    """(authors, sources, comments) from an element's `info` child."""
    info = el.find("info")
    if info is None:
        return [], [], ""
    authors = [t for t in (_text(a) for a in info.iterfind("authors/author")) if t]
    sources = [t for t in (_text(s) for s in info.iterfind("sources/source")) if t]
    return authors, sources, _text(info.find("comments"))


def _bool(raw: str | None) -> bool:
    return (raw or "").strip().lower() in ("true", "1", "yes")


_KIND_RU = {ItemType.IMAGE: "картинка", ItemType.AUDIO: "звук", ItemType.VIDEO: "видео",
            ItemType.HTML: "страница", ItemType.TEXT: "текст"}


@dataclass
class _Ref:
    """A media reference waiting to be matched with an archive entry."""

    items: list[Item]
    item: Item
    place: Place


@dataclass
class _PendingMinMax:
    """A cat whose value is 'the round's minimum or maximum', known once the round is read."""

    price: CatPrice
    own_price: int


class _Reader:
    def __init__(self, where: str):
        self.where = where
        self.warnings: list[str] = []
        self.refs: list[_Ref] = []

    def warn(self, place: Place, ru: str, en: str) -> None:
        """Something left out or read otherwise: the import goes on, the host is told."""
        self.warnings.append(notice(f"{place.ru}: {ru}", f"{place.en}: {en}"))

    def fail(self, place: Place, ru: str, en: str, code: str) -> PackageError:
        return PackageError(f"{self.where}: {place.ru}: {ru}", f"{self.where}: {place.en}: {en}",
                            code)

    # -- package, rounds, themes ---------------------------------------------------------

    def package(self, root: ET.Element) -> tuple[Package, int]:
        if root.tag != "package":
            tag = str(root.tag)[:40]
            raise PackageError(
                f"{self.where}: корневой элемент — <{tag}>, а не <package>: это не пакет SIGame",
                f"{self.where}: the root element is <{tag}>, not <package>: "
                "not a SIGame package", "not_siq")
        version = self._version(root)
        authors, _, comment = _info(root)
        language = (root.get("language") or "ru").split("-")[0].lower() or "ru"
        rounds_el = root.findall("rounds/round")
        if not rounds_el:
            raise PackageError(f"{self.where}: в пакете нет раундов",
                               f"{self.where}: the package has no rounds", "no_rounds")
        rounds = [self.round(r, i + 1) for i, r in enumerate(rounds_el)]
        pkg = Package(
            name=(root.get("name") or "").strip() or Path(self.where).stem,
            rounds=rounds,
            author=", ".join(authors),
            comment=comment,
            language=language,
        )
        return pkg, version

    def _version(self, root: ET.Element) -> int:
        raw = (root.get("version") or "").strip()
        try:
            return int(float(raw))
        except ValueError:
            # No usable version: judge by shape (v5 has params, older ones scenarios).
            return 5 if root.find(".//question/params") is not None else 4

    def round(self, el: ET.Element, number: int) -> Round:
        name = (el.get("name") or "").strip() or str(number)
        place = Place(f"раунд {number} «{name}»", f"round {number} «{name}»")
        final = (el.get("type") or "").strip().lower() == "final"
        themes_el = el.findall("themes/theme")
        if not themes_el:
            raise self.fail(place, "в раунде нет тем", "the round has no themes", "no_themes")
        pending: list[_PendingMinMax] = []
        themes = []
        for i, t in enumerate(themes_el):
            theme = self.theme(t, place.then(f"тема {i + 1}", f"theme {i + 1}"), pending)
            if theme.questions:
                themes.append(theme)
            else:
                named = f"{i + 1} «{theme.name}»"
                self.warn(place.then(f"тема {named}", f"theme {named}"),
                          "нет вопросов; пропущена", "no questions; left out")
        if not themes:
            raise self.fail(place, "в раунде нет тем с вопросами",
                            "the round has no themes with questions", "no_themes")
        rnd = Round(name=name, themes=themes, final=final)
        for p in pending:
            prices = [pr for pr in rnd.prices if pr > 0]
            p.price.values = sorted({min(prices), max(prices)}) if prices else [p.own_price]
        return rnd

    def theme(self, el: ET.Element, place: Place, pending: list[_PendingMinMax]) -> Theme:
        name = (el.get("name") or "").strip()
        place = place.plus(f" «{name}»")
        _, _, comment = _info(el)
        questions = [
            self.question(q, place.then(f"вопрос {i + 1}", f"question {i + 1}"), name, pending)
            for i, q in enumerate(el.findall("questions/question"))
        ]
        return Theme(name=name, questions=questions, comment=comment)

    # -- questions -----------------------------------------------------------------------

    def question(
        self, el: ET.Element, place: Place, theme: str, pending: list[_PendingMinMax]
    ) -> Question:
        raw_price = el.get("price")
        if raw_price is None:
            raise self.fail(place, "у вопроса нет цены", "the question has no price",
                            "no_price")
        try:
            price = int(raw_price.strip())
        except ValueError:
            shown = raw_price.strip()[:40]
            raise self.fail(place, f"цена «{shown}» — не целое число",
                            f"price «{shown}» is not a whole number", "bad_price") from None
        place = place.plus(f" ({price})")
        _, sources, comment = _info(el)
        q = Question(price=price, comment=comment, sources=sources)
        q.right = [t for t in (_text(a) for a in el.iterfind("right/answer")) if t]
        q.wrong = [t for t in (_text(a) for a in el.iterfind("wrong/answer")) if t]

        type_el = el.find("type")  # v3/v4 (and deprecated in v5)
        type_name = el.get("type") or (type_el.get("name") if type_el is not None else "") or ""
        type_params = (
            {p.get("name", ""): _text(p) for p in type_el.iterfind("param")}
            if type_el is not None
            else {}
        )
        params = el.find("params")
        scenario = el.find("scenario")
        if params is not None:
            self._v5_content(q, params, place)
        if scenario is not None:
            self._atoms(q, scenario, place)

        if price < 0:
            if price != -1:
                self.warn(place, f"отрицательная цена {price}: пустая клетка",
                          f"negative price {price} read as an empty cell")
            q.kind = Kind.EMPTY
            return q
        kind = KINDS.get(type_name.strip().lower())
        if kind is None:
            self.warn(place, f"тип вопроса «{type_name}» не поддерживается; играется как обычный",
                      f"question type «{type_name}» is not supported; played as normal")
            kind = Kind.NORMAL
        q.kind = kind
        if kind == Kind.CAT:
            q.cat = self._cat(type_name.strip().lower(), type_params, params, theme, price,
                              place, pending)
        return q

    def _cat(
        self,
        type_name: str,
        type_params: dict[str, str],
        params: ET.Element | None,
        theme: str,
        price: int,
        place: Place,
        pending: list[_PendingMinMax],
    ) -> Cat:
        if type_name.startswith("secret"):  # version 5
            named = {p.get("name", ""): p for p in params} if params is not None else {}
            cat_theme = _text(named.get("theme"))
            number_set = named["price"].find("numberSet") if "price" in named else None
            cat_price = self._number_set(number_set, price, place, pending)
            return Cat(
                theme=cat_theme if cat_theme not in ("", "-") else theme,
                price=cat_price,
                may_keep=_text(named.get("selectionMode")).lower() == "any",
                public_price=type_name == "secretpublicprice",
                no_question=type_name == "secretnoquestion",
            )
        cat_theme = type_params.get("theme", "").strip()
        knows = type_params.get("knows", "after").strip().lower()
        return Cat(
            theme=cat_theme if cat_theme not in ("", "-") else theme,
            price=self._cost(type_params.get("cost", ""), price, place, pending),
            may_keep=_bool(type_params.get("self")),
            public_price=knows == "before",
            no_question=knows == "never",
        )

    def _number_set(
        self, el: ET.Element | None, price: int, place: Place, pending: list[_PendingMinMax]
    ) -> CatPrice:
        if el is None:
            return CatPrice(values=[price])
        try:
            low = int(el.get("minimum", "0"))
            high = int(el.get("maximum", "0"))
            step = int(el.get("step", "0"))
        except ValueError:
            self.warn(place, "цены вопроса с секретом не числа; берётся его цена",
                      "the secret question's price set is not numeric; uses its price")
            return CatPrice(values=[price])
        return self._price_range(low, high, step, price, place, pending)

    def _cost(
        self, raw: str, price: int, place: Place, pending: list[_PendingMinMax]
    ) -> CatPrice:
        raw = raw.strip()
        if not raw:
            return CatPrice(values=[price])
        m = _COST.match(raw)
        if m:
            low, high, step = int(m[1]), int(m[2]), int(m[3] or 0)
            return self._price_range(low, high, step, price, place, pending)
        try:
            value = int(raw)
        except ValueError:
            self.warn(place, f"цена кота «{raw}» не число; берётся цена вопроса",
                      f"cat cost «{raw}» is not a number; uses the question's price")
            return CatPrice(values=[price])
        return self._price_range(value, value, 0, price, place, pending)

    def _price_range(
        self, low: int, high: int, step: int, price: int, place: Place,
        pending: list[_PendingMinMax],
    ) -> CatPrice:
        """SIGame's price sets: 0 = min or max of the round; low = high: fixed; step 0 or
        missing with low < high: only the two ends; otherwise low..high by step."""
        if low > high:
            low, high = high, low
        if low == high == 0:
            cp = CatPrice()
            pending.append(_PendingMinMax(cp, price))
            return cp
        if low == high:
            return CatPrice(values=[low])
        if step <= 0:
            return CatPrice(values=[low, high])
        if step >= high - low:
            return CatPrice(values=[low, high])
        return CatPrice(low=low, high=high, step=step)

    # -- content -------------------------------------------------------------------------

    def _v5_content(self, q: Question, params: ET.Element, place: Place) -> None:
        for p in params.findall("param"):
            name = p.get("name", "")
            if name == "question":
                self._items(q.content, p, place)
            elif name == "answer":
                self._items(q.answer_content, p, place)
            elif name == "answerOptions":
                for opt in p.findall("param"):
                    label = opt.get("name", "")
                    words = " ".join(_text(i) for i in opt.iterfind("item") if not i.get("type")
                                     or i.get("type") == "text")
                    q.content.append(Item(ItemType.TEXT, f"{label}. {words}".strip()))

    def _items(self, target: list[Item], param: ET.Element, place: Place) -> None:
        if param.get("type", "content") != "content":
            return
        for el in param.findall("item"):
            raw_type = (el.get("type") or "").strip().lower()
            kind = V5_ITEMS.get(raw_type)
            if kind is None:
                self.warn(place, f"содержимое типа «{raw_type}» не поддерживается; пропущено",
                          f"content of type «{raw_type}» is not supported; left out")
                continue
            value = (el.text or "").strip()
            item = Item(
                type=kind,
                value=value,
                spoken=(el.get("placement") or "").lower() == "replic",
                duration_s=_duration(el.get("duration")),
            )
            if kind == ItemType.TEXT:
                if value:
                    target.append(item)
            elif _bool(el.get("isRef")):
                target.append(item)
                self.refs.append(_Ref(target, item, place))
            else:
                self.warn(place, f"внешняя ссылка ({_KIND_RU[kind]}) без сети недоступна; "
                                 "пропущена",
                          f"{kind.value} from an external link is not available offline; "
                          "left out")

    def _atoms(self, q: Question, scenario: ET.Element, place: Place) -> None:
        target = q.content
        for el in scenario.findall("atom"):
            raw_type = (el.get("type") or "").strip().lower()
            if raw_type == "marker":
                target = q.answer_content
                continue
            found = ATOMS.get(raw_type)
            if found is None:
                self.warn(place, f"содержимое типа «{raw_type}» не поддерживается; пропущено",
                          f"content of type «{raw_type}» is not supported; left out")
                continue
            kind, spoken = found
            value = (el.text or "").strip()
            duration = _float(el.get("time"))
            item = Item(type=kind, value=value, spoken=spoken,
                        duration_s=duration if duration and duration > 0 else None)
            if kind == ItemType.TEXT:
                if value:
                    target.append(item)
            elif value.startswith("@"):
                item.value = value[1:]
                target.append(item)
                self.refs.append(_Ref(target, item, place))
            else:
                self.warn(place, f"внешняя ссылка ({_KIND_RU[kind]}) без сети недоступна; "
                                 "пропущена",
                          f"{kind.value} from an external link is not available offline; "
                          "left out")


def _duration(raw: str | None) -> float | None:
    m = _DURATION.match((raw or "").strip())
    if not m:
        return None
    seconds = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
    return float(seconds) if seconds > 0 else None


def _float(raw: str | None) -> float | None:
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


def _media_index(names: list[str]) -> dict[tuple[str, str], str]:
    """(folder lower-cased, decoded file name) -> archive entry; names may be URL-encoded."""
    index: dict[tuple[str, str], str] = {}
    for name in names:
        folder, sep, rest = name.partition("/")
        if not sep or not rest:
            continue
        for key in ((folder.lower(), rest), (folder.lower(), unquote(rest))):
            index.setdefault(key, name)
    return index


def _resolve(reader: _Reader, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Match media references with archive entries; a missing file is a warning on the
    question and the item is left out (the game goes on without it)."""
    index = _media_index(names)
    by_file: dict[str, str] = {}
    for (_, file_name), stored in index.items():
        by_file.setdefault(file_name, stored)
    media: dict[str, str] = {}
    mime: dict[str, str] = {}
    for ref in reader.refs:
        folder = FOLDERS[ref.item.type]
        raw = ref.item.value
        entry = None
        for candidate in (raw, unquote(raw), quote(raw)):
            entry = index.get((folder.lower(), candidate))
            if entry:
                break
        else:
            entry = by_file.get(raw) or by_file.get(unquote(raw))
        if entry is None:
            reader.warn(ref.place, f"файла {folder}/{raw} нет в пакете; пропущен",
                        f"media file {folder}/{raw} is missing from the package; left out")
            ref.items.remove(ref.item)
            continue
        logical = f"{entry.partition('/')[0]}/{unquote(entry.partition('/')[2])}"
        ref.item.value = logical
        media[logical] = entry
        mime[logical] = guess_mime(logical, ref.item.type)
    return media, mime


def read_content(data: bytes, where: str) -> tuple[Package, int, _Reader]:
    """Parse content.xml bytes into a package whose media values are still raw names."""
    root = parse_xml(data, f"{where}: content.xml")
    reader = _Reader(where)
    package, version = reader.package(root)
    return package, version, reader


def load(path: str | Path, limits: Limits | None = None) -> Loaded:
    """Read a .siq file without importing it. The caller closes the result."""
    path = Path(path)
    archive = SafeZip(path, limits)
    try:
        entry = next((n for n in archive.names if n.lower() == "content.xml"), None)
        if entry is None:
            raise PackageError(f"{path.name}: в архиве нет content.xml: это не пакет SIGame",
                               f"{path.name}: no content.xml in the archive: not a SIGame "
                               "package", "not_siq")
        package, version, reader = read_content(archive.read(entry), path.name)
        media, mime = _resolve(reader, archive.names)
        package.warnings = reader.warnings
        return Loaded(package=package, format=f"siq{version}", source=path, archive=archive,
                      media=media, mime=mime)
    except BaseException:
        archive.close()
        raise
