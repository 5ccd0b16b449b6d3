"""Safe reading of zip archives (SIQ packages and our own exports).

A package file comes from anyone with a USB stick, so the archive is checked before a
single byte is unpacked: entry names (no `..`, no absolute paths, no symlinks, no name
twice), no encrypted entry, entry count, total unpacked size and compression ratio — per
entry and for the whole archive, so a bomb split into many small entries is refused too.
The declared sizes are then enforced again while streaming, because a crafted archive may
lie about them.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from appliance.packages.errors import BilingualError

CHUNK = 1 << 20  # bytes per read when streaming an entry


class PackageError(BilingualError, ValueError):
    """A package cannot be imported; the messages (Russian, English) name the file and the
    place, the code says what kind of problem it is (`docs/packages.md`)."""

    def __init__(self, message_ru: str, message_en: str, code: str = "package"):
        super().__init__(message_ru, message_en, code)


_OS_REASONS_RU = {
    errno.ENOENT: "файла нет", errno.EACCES: "нет доступа", errno.EPERM: "нет доступа",
    errno.EIO: "ошибка чтения носителя", errno.EISDIR: "это папка",
}


def unreadable(path: Path, e: OSError) -> PackageError:
    """The file itself cannot be read (gone, no permission, an I/O error of the card)."""
    code = errno.errorcode.get(e.errno or 0, "?")
    ru = _OS_REASONS_RU.get(e.errno or 0, f"ошибка {code}")
    return PackageError(f"{path.name}: не удаётся прочитать файл ({ru})",
                        f"{path.name}: cannot read the file ({e.strerror or code})",
                        "unreadable")


def _mb(n: int) -> int:
    return n >> 20


@dataclass(frozen=True)
class Limits:
    """Settings that bound what an archive may unpack to (zip bombs, huge files).

    Environment overrides: SVOYAK_PACKAGE_MAX_MB, SVOYAK_PACKAGE_MAX_ENTRIES,
    SVOYAK_PACKAGE_MAX_RATIO, SVOYAK_PACKAGE_MAX_XML_MB.
    """

    max_total_bytes: int = 2 << 30  # everything unpacked, media included
    max_entries: int = 10_000
    max_ratio: float = 200.0  # unpacked / compressed, per entry
    ratio_floor_bytes: int = 1 << 20  # entries smaller than this skip the ratio test
    # The whole archive: everything unpacked / the archive file's size. Real packages are
    # mostly media that is compressed already (about 1); XML reaches 10-20.
    max_archive_ratio: float = 50.0
    archive_ratio_floor_bytes: int = 32 << 20  # archives unpacking to less skip the test
    max_xml_bytes: int = 64 << 20  # content.xml / package.json / a text package

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Limits:
        """Defaults overridden by the environment (sizes in MB)."""
        env = dict(os.environ if env is None else env)
        base = cls()

        def get(key: str, default: float, scale: int = 1) -> float:
            raw = env.get(key, "").strip()
            return float(raw) * scale if raw else default

        return cls(
            max_total_bytes=int(get("SVOYAK_PACKAGE_MAX_MB", base.max_total_bytes, 1 << 20)),
            max_entries=int(get("SVOYAK_PACKAGE_MAX_ENTRIES", base.max_entries)),
            max_ratio=get("SVOYAK_PACKAGE_MAX_RATIO", base.max_ratio),
            max_xml_bytes=int(get("SVOYAK_PACKAGE_MAX_XML_MB", base.max_xml_bytes, 1 << 20)),
        )


def _bad_name(name: str) -> tuple[str, str] | None:
    """Why an entry name is unsafe to unpack (Russian, English), or None."""
    if "\x00" in name:
        return "содержит нулевой байт", "contains a NUL byte"
    unified = name.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        return "— абсолютный путь", "is an absolute path"
    if ".." in unified.split("/"):
        return "содержит «..»", "contains «..»"
    return None


def _entry(path: Path, name: str) -> tuple[str, str]:
    """An entry of the archive named for the host (printable, quoted, not a repr)."""
    shown = "".join(c if c.isprintable() else "?" for c in name)[:200]
    return f"{path.name}: файл «{shown}» в архиве", f"{path.name}: entry «{shown}»"


def _starts_like_zip(path: Path) -> bool:
    """A file that begins as a zip (a local file header) but has no central directory at
    its end is a cut-short copy, not some other kind of file."""
    try:
        with path.open("rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    mode = info.external_attr >> 16
    return info.create_system == 3 and stat.S_ISLNK(mode)



def read_document(path: Path, limits: Limits) -> bytes:
    """A whole package document (a bare JSON or a text package) from disk, refused above the
    document size limit before a byte of it is read."""
    try:
        if path.stat().st_size > limits.max_xml_bytes:
            raise PackageError(f"{path.name}: больше {_mb(limits.max_xml_bytes)} МБ (предел)",
                               f"{path.name}: larger than {_mb(limits.max_xml_bytes)} MB "
                               "(the limit)", "too_large")
        return path.read_bytes()
    except OSError as e:
        raise unreadable(path, e) from e


class SafeZip:
    """A zip archive checked against `Limits` on open; entries are read as streams.

    Use as a context manager. Raises PackageError (naming the file and the entry) when the
    archive is not a zip, or any entry is unsafe.
    """

    def __init__(self, path: str | Path, limits: Limits | None = None):
        self.path = Path(path)
        self.limits = limits or Limits()
        self._streamed = 0
        try:
            self._zip = zipfile.ZipFile(self.path)
        except zipfile.BadZipFile as e:
            if _starts_like_zip(self.path):
                raise PackageError(
                    f"{self.path.name}: архив обрывается (копия или загрузка не "
                    "завершилась?): скопируйте его ещё раз",
                    f"{self.path.name}: the archive is cut short (an incomplete copy or "
                    "download?): copy it again", "truncated") from e
            raise PackageError(f"{self.path.name}: это не zip-архив (и не пакет SIGame)",
                               f"{self.path.name}: not a zip archive (nor a SIGame package)",
                               "not_zip") from e
        except OSError as e:
            raise unreadable(self.path, e) from e
        try:
            self._check()
        except PackageError:
            self._zip.close()
            raise

    def _check(self) -> None:
        infos = self._zip.infolist()
        lim = self.limits
        if len(infos) > lim.max_entries:
            raise PackageError(
                f"{self.path.name}: в архиве {len(infos)} файлов, больше предела "
                f"({lim.max_entries})",
                f"{self.path.name}: {len(infos)} entries in the archive, "
                f"more than the limit of {lim.max_entries}", "too_many_entries")
        total = 0
        self._infos: dict[str, zipfile.ZipInfo] = {}
        seen: set[str] = set()
        for info in infos:
            where_ru, where = _entry(self.path, info.filename)
            reason = _bad_name(info.filename)
            if reason:
                raise PackageError(f"{where_ru} {reason[0]}: такой архив не распаковывается",
                                   f"{where} {reason[1]}: such an archive is not unpacked",
                                   "unsafe_name")
            if _is_symlink(info):
                raise PackageError(f"{where_ru} — символическая ссылка",
                                   f"{where} is a symbolic link", "symlink")
            unified = info.filename.replace("\\", "/")
            if unified in seen:
                # Tools disagree on which copy counts (we would play the last, others show
                # the first): a package must say one thing.
                raise PackageError(f"{where_ru} встречается дважды: пакет должен быть "
                                   "однозначным", f"{where} appears twice in the archive",
                                   "duplicate_entry")
            seen.add(unified)
            if info.flag_bits & 0x1:
                raise PackageError(f"{where_ru} зашифрован (защищён паролем): сохраните "
                                   "пакет без пароля",
                                   f"{where} is encrypted (password-protected): save the "
                                   "package without a password", "encrypted")
            if info.file_size > lim.ratio_floor_bytes and (
                info.compress_size == 0 or info.file_size / info.compress_size > lim.max_ratio
            ):
                ratio = info.file_size / max(info.compress_size, 1)
                raise PackageError(
                    f"{where_ru} распаковывается в {ratio:.0f} раз больше своего сжатого "
                    f"размера (предел {lim.max_ratio:g}): zip-бомба?",
                    f"{where} unpacks {ratio:.0f} times its packed size "
                    f"(limit {lim.max_ratio:g}): a zip bomb?", "zip_bomb")
            total += info.file_size
            if total > lim.max_total_bytes:
                raise PackageError(
                    f"{self.path.name}: распаковывается больше чем в "
                    f"{_mb(lim.max_total_bytes)} МБ (предел): zip-бомба?",
                    f"{self.path.name}: unpacks to more than {_mb(lim.max_total_bytes)} MB "
                    "(the limit): a zip bomb?", "zip_bomb")
            if not info.is_dir():
                self._infos[info.filename] = info
        archive_size = max(self.path.stat().st_size, 1)
        if total > lim.archive_ratio_floor_bytes and total / archive_size > lim.max_archive_ratio:
            raise PackageError(
                f"{self.path.name}: распаковывается в {_mb(total)} МБ, в "
                f"{total / archive_size:.0f} раз больше своего размера (предел "
                f"{lim.max_archive_ratio:g}): zip-бомба?",
                f"{self.path.name}: unpacks to {_mb(total)} MB, {total / archive_size:.0f} "
                f"times its size (limit {lim.max_archive_ratio:g}): a zip bomb?", "zip_bomb")

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()

    @property
    def names(self) -> list[str]:
        return list(self._infos)

    def size(self, name: str) -> int:
        return self._infos[name].file_size

    def has(self, name: str) -> bool:
        return name in self._infos

    def chunks(self, name: str) -> Iterator[bytes]:
        """Stream one entry, never more than its declared size nor the total limit."""
        info = self._infos[name]
        where_ru, where = _entry(self.path, name)
        seen = 0
        try:
            with self._zip.open(info) as f:
                while True:
                    chunk = f.read(CHUNK)
                    if not chunk:
                        break
                    seen += len(chunk)
                    self._streamed += len(chunk)
                    if seen > info.file_size:
                        raise PackageError(f"{where_ru} больше, чем заявлено в архиве: "
                                           "архив повреждён или подделан",
                                           f"{where} is larger than it declares: the "
                                           "archive is damaged or forged", "damaged")
                    if self._streamed > self.limits.max_total_bytes:
                        raise PackageError(
                            f"{self.path.name}: распаковывается больше чем в "
                            f"{_mb(self.limits.max_total_bytes)} МБ (предел)",
                            f"{self.path.name}: unpacks to more than "
                            f"{_mb(self.limits.max_total_bytes)} MB (the limit)", "zip_bomb")
                    if (
                        seen > self.limits.ratio_floor_bytes
                        and seen / max(info.compress_size, 1) > self.limits.max_ratio
                    ):
                        raise PackageError(f"{where_ru} распаковывается далеко за пределы "
                                           "своего сжатого размера: zip-бомба?",
                                           f"{where} unpacks far beyond its packed size: "
                                           "a zip bomb?", "zip_bomb")
                    yield chunk
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as e:
            raise PackageError(f"{where_ru} повреждён: скопируйте пакет ещё раз",
                               f"{where} is damaged: copy the package again", "damaged") from e
        except NotImplementedError as e:  # unsupported compression method
            raise PackageError(f"{where_ru} сжат неподдерживаемым методом (№ "
                               f"{info.compress_type}): сохраните пакет обычным zip",
                               f"{where} is compressed with an unsupported method (number "
                               f"{info.compress_type}): save the package as a plain zip",
                               "unsupported_compression") from e
        except RuntimeError as e:  # encrypted entry (checked on open; kept for safety)
            raise PackageError(f"{where_ru} зашифрован (защищён паролем): сохраните пакет "
                               "без пароля",
                               f"{where} is encrypted (password-protected): save the "
                               "package without a password", "encrypted") from e

    def read(self, name: str, max_bytes: int | None = None) -> bytes:
        """A whole (small) entry in memory, e.g. content.xml; bounded by `max_xml_bytes`."""
        limit = self.limits.max_xml_bytes if max_bytes is None else max_bytes
        if self._infos[name].file_size > limit:
            where_ru, where = _entry(self.path, name)
            raise PackageError(f"{where_ru} больше {_mb(limit)} МБ (предел)",
                               f"{where} is larger than {_mb(limit)} MB (the limit)",
                               "too_large")
        return b"".join(self.chunks(name))
