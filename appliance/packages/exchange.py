"""The project's own exchange format: `package.json` (the JSON form) with media beside it.

A zip holding
- `package.json`: the package in the JSON form of `jsonform`, media items naming their
  content hash;
- `media/<sha256>`: each media file, named by the hash of its bytes;
- `media.json`: `{"<sha256>": "<content type>"}` so screens get the right type back.
Importing an export gives an equal package: the hashes do not change. A bare `.json`
file in the same form (no media) imports too, e.g. the demo packages.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

from appliance.packages import jsonform
from appliance.packages.archive import Limits, PackageError, SafeZip, read_document
from appliance.packages.errors import notice
from appliance.packages.loaded import Loaded, guess_mime
from appliance.packages.media import is_hash
from appliance.packages.model import Item, Package

PACKAGE_JSON = "package.json"
MEDIA_JSON = "media.json"
MEDIA_DIR = "media/"


def export(
    package: Package,
    out: str | Path,
    media_file: Callable[[str], Path | None],
    media_type: Callable[[str], str | None],
) -> Path:
    """Write `package` (media values are hashes) and its media to the zip `out`.

    Written to a temporary name and renamed, so a half-written export never exists."""
    out = Path(out)
    tmp = out.with_name(f".{out.name}.part")
    digests = sorted({i.value for i in _media_items(package)})
    manifest: dict[str, str] = {}
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr(PACKAGE_JSON, jsonform.dumps(package))
            for digest in digests:
                src = media_file(digest)
                if src is None or not src.is_file():
                    raise PackageError(f"медиафайла {digest[:12]}… пакета «{package.name}» "
                                       "нет в хранилище медиафайлов",
                                       f"media {digest[:12]}… of «{package.name}» is missing "
                                       "from the media store", "media_missing")
                z.write(src, MEDIA_DIR + digest, compress_type=zipfile.ZIP_STORED)
                manifest[digest] = media_type(digest) or "application/octet-stream"
            z.writestr(MEDIA_JSON, json.dumps(manifest, indent=1))
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out


def _media_items(package: Package) -> list[Item]:
    return [
        i
        for t in package.all_themes()
        for q in t.questions
        for i in q.content + q.answer_content
        if i.is_media
    ]


def _drop_unavailable(package: Package, available: set[str], where: str) -> None:
    """Media the file cannot provide become warnings, as for SIQ packages."""
    for r in package.rounds:
        for t in r.themes:
            for n, q in enumerate(t.questions):
                for items in (q.content, q.answer_content):
                    for item in list(items):
                        if item.is_media and item.value not in available:
                            items.remove(item)
                            package.warnings.append(notice(
                                f"{where}: раунд «{r.name}», тема «{t.name}», вопрос "
                                f"{n + 1} ({q.price}): файла {item.value} нет; пропущен",
                                f"{where}: round «{r.name}», theme «{t.name}», question "
                                f"{n + 1} ({q.price}): media {item.value} is missing; left out"
                            ))


def _parse(data: bytes, where: str) -> Package:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise PackageError(f"{where}: не текст в UTF-8 (байт {e.start}): сохраните файл в UTF-8",
                           f"{where}: not UTF-8 text (byte {e.start}): save the file as UTF-8",
                           "not_utf8") from e
    try:
        return jsonform.loads(text)
    except jsonform.PackageFormatError as e:  # it says where and what, in both languages
        raise PackageError(f"{where}: {e.message_ru}", f"{where}: {e.message_en}",
                           e.code if e.code in ("bad_json", "not_svoyak") else "bad_package"
                           ) from e


def load_json(path: str | Path, limits: Limits | None = None) -> Loaded:
    """A bare JSON package (no media files)."""
    path = Path(path)
    limits = limits or Limits()
    data = read_document(path, limits)
    package = _parse(data, path.name)
    _drop_unavailable(package, set(), path.name)
    return Loaded(package=package, format="svoyak", source=path)


def load(path: str | Path, limits: Limits | None = None) -> Loaded:
    """Read an export zip without importing it. The caller closes the result."""
    path = Path(path)
    archive = SafeZip(path, limits)
    try:
        if not archive.has(PACKAGE_JSON):
            raise PackageError(f"{path.name}: в архиве нет {PACKAGE_JSON} (и нет content.xml"
                               "): это не пакет", f"{path.name}: no {PACKAGE_JSON} (nor "
                               "content.xml) in the archive: not a package", "not_package")
        package = _parse(archive.read(PACKAGE_JSON), f"{path.name}: {PACKAGE_JSON}")
        manifest: dict[str, str] = {}
        if archive.has(MEDIA_JSON):
            try:
                raw = json.loads(archive.read(MEDIA_JSON).decode("utf-8"))
                manifest = {str(k): str(v) for k, v in dict(raw).items()}
            except (ValueError, TypeError) as e:
                raise PackageError(f"{path.name}: {MEDIA_JSON} повреждён",
                                   f"{path.name}: {MEDIA_JSON} is not valid",
                                   "bad_json") from e
        available = {
            n[len(MEDIA_DIR):]
            for n in archive.names
            if n.startswith(MEDIA_DIR) and is_hash(n[len(MEDIA_DIR):])
        }
        _drop_unavailable(package, available, path.name)
        media: dict[str, str] = {}
        mime: dict[str, str] = {}
        for item in _media_items(package):
            media[item.value] = MEDIA_DIR + item.value
            mime[item.value] = manifest.get(item.value) or guess_mime("", item.type)
        return Loaded(package=package, format="svoyak", source=path, archive=archive,
                      media=media, mime=mime)
    except BaseException:
        archive.close()
        raise
