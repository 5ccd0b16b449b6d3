"""`svoyak package …`: import, list, show, delete, inspect and export question packages.

The CLI mirrors `appliance.packages.library`; every failure prints one clear line naming the
file and the place, and exits non-zero. The line is in the language of `--lang`, else of
SVOYAK_LANG or the locale (LC_ALL, LC_MESSAGES, LANG: ru… or en…); with none of them (a
C locale, a bare console) it is printed in Russian, then in English.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Any

from appliance.packages import formats
from appliance.packages.archive import Limits, PackageError
from appliance.packages.errors import BilingualError, notice_in
from appliance.packages.library import Library, LibraryError, counts
from appliance.packages.model import Package


def normalized(package: Package, **extra: Any) -> dict[str, Any]:
    """The documented JSON shape of a package (docs/packages.md, `inspect --json`)."""
    return {
        "name": package.name,
        "author": package.author,
        **extra,
        "counts": counts(package),
        "rounds": [
            {
                "name": r.name,
                "final": r.final,
                "themes": [
                    {
                        "name": t.name,
                        "questions": [
                            {
                                "price": q.price,
                                "kind": q.kind.value,
                                "text": q.text,
                                "answers": list(q.right),
                                "wrong": list(q.wrong),
                                "comment": q.comment,
                                "media": q.media,
                                "cat": dataclasses.asdict(q.cat) if q.cat else None,
                            }
                            for q in t.questions
                        ],
                    }
                    for t in r.themes
                ],
            }
            for r in package.rounds
        ],
        "warnings": list(package.warnings),
    }


def language(args: argparse.Namespace, env: dict[str, str] | None = None) -> str | None:
    """"ru", "en", or None (not said: print both)."""
    env = dict(os.environ if env is None else env)
    chosen = getattr(args, "lang", None) or env.get("SVOYAK_LANG", "")
    if chosen in ("ru", "en"):
        return chosen
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):  # the first one set decides, as in libc
        value = env.get(var, "")
        if value:
            return "ru" if value.startswith("ru") else "en" if value.startswith("en") else None
    return None


def _warning(text: str, args: argparse.Namespace) -> str:
    """A package's warning in the reader's language (both when it is not known)."""
    lang = language(args)
    return ("предупреждение: " if lang == "ru" else "warning: ") + notice_in(text, lang)


def report(command: str, e: Exception, args: argparse.Namespace) -> None:
    """One failure on stderr in the reader's language (both when it is not known)."""
    if isinstance(e, BilingualError):
        ru, en = e.message_ru, e.message_en
    elif isinstance(e, OSError):  # writing an export
        name = os.path.basename(str(e.filename or ""))
        ru = f"{name}: не удаётся записать файл ({e.strerror or e.errno})"
        en = f"{name}: cannot write the file ({e.strerror or e.errno})"
    else:
        ru = en = str(e)
    lang = language(args)
    lines = ([f"ошибка: {ru}"] if lang == "ru" else [f"error: {en}"] if lang == "en"
             else [f"ошибка: {ru}", f"error: {en}"])
    for line in lines:
        print(f"svoyak package {command}: {line}", file=sys.stderr)


def _limits(args: argparse.Namespace) -> Limits:
    base = Limits.from_env()
    changes: dict[str, Any] = {}
    if args.max_unpacked_mb is not None:
        changes["max_total_bytes"] = int(args.max_unpacked_mb * (1 << 20))
    if args.max_entries is not None:
        changes["max_entries"] = args.max_entries
    if args.max_ratio is not None:
        changes["max_ratio"] = args.max_ratio
    return dataclasses.replace(base, **changes)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


def _summary(name: str, package: Package) -> str:
    c = counts(package)
    return (f"«{name}»: {c['rounds']} rounds, {c['themes']} themes, "
            f"{c['questions']} questions")


def cmd_import(args: argparse.Namespace) -> int:
    lib = Library(args.data, limits=_limits(args))
    failed = 0
    for path in args.files:
        try:
            package_id = lib.import_file(path)
        except (PackageError, LibraryError) as e:
            report("import", e, args)
            failed += 1
            continue
        info = lib.info(package_id)
        if args.json:
            _print_json(info.to_json())
        else:
            print(f"imported package {package_id} «{info.name}» from {info.source}: "
                  f"{info.rounds} rounds, {info.themes} themes, {info.questions} questions, "
                  f"{info.media_count} media files, {info.warnings} warnings")
            for w in lib.get(package_id).warnings:
                print(f"  {_warning(w, args)}")
    return 1 if failed else 0


def cmd_list(args: argparse.Namespace) -> int:
    rows = Library(args.data).list()
    if args.json:
        _print_json([r.to_json() for r in rows])
        return 0
    if not rows:
        print("the library is empty")
    for r in rows:
        print(f"{r.id:4}  {r.name}  [{r.format}, {r.rounds} rounds, {r.themes} themes, "
              f"{r.questions} questions, {r.media_count} media]")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    lib = Library(args.data)
    try:
        info = lib.info(args.id)
        package = lib.get(args.id)
    except LibraryError as e:
        report("show", e, args)
        return 1
    if args.json:
        _print_json(normalized(package, id=info.id, format=info.format, source=info.source,
                               imported=info.imported))
        return 0
    print(f"{info.id}: {_summary(package.name, package)} ({info.format}, from {info.source}, "
          f"imported {info.imported})")
    if package.author:
        print(f"author: {package.author}")
    for r in package.rounds:
        print(f"{'final' if r.final else 'round'} «{r.name}»")
        for t in r.themes:
            prices = " ".join(
                f"{q.price}{'' if q.kind.value == 'normal' else '/' + q.kind.value}"
                for q in t.questions
            )
            print(f"  {t.name}: {prices}")
    for w in package.warnings:
        print(_warning(w, args))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    try:
        Library(args.data).delete(args.id)
    except LibraryError as e:
        report("delete", e, args)
        return 1
    print(f"deleted package {args.id}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    try:
        with formats.load(args.file, _limits(args)) as loaded:
            package = loaded.package
            fmt = loaded.format
    except PackageError as e:
        report("inspect", e, args)
        return 1
    if args.json:
        _print_json(normalized(package, format=fmt))
        return 0
    print(f"{_summary(package.name, package)} ({fmt})")
    for w in package.warnings:
        print(_warning(w, args))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    try:
        out = Library(args.data).export(args.id, args.out)
    except (LibraryError, PackageError, OSError) as e:
        report("export", e, args)
        return 1
    print(f"exported package {args.id} to {out}")
    return 0


def _limit_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-unpacked-mb", type=float, metavar="MB",
                   help="refuse archives that unpack to more (default 2048)")
    p.add_argument("--max-entries", type=int, metavar="N",
                   help="refuse archives with more entries (default 10000)")
    p.add_argument("--max-ratio", type=float, metavar="R",
                   help="refuse entries compressed more than R:1 (default 200)")


def register(subparsers: argparse._SubParsersAction) -> None:
    pkg = subparsers.add_parser("package", help="question packages: import, list, show…",
                                description="Question packages in the box's library.")
    sub = pkg.add_subparsers(dest="package_command", metavar="ACTION", required=True)

    def add(name: str, help_: str, func: Any) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--data", metavar="DIR",
                       help="data directory (default $SVOYAK_DATA or ./data)")
        p.add_argument("--lang", choices=("ru", "en"),
                       help="language of error messages (default: $SVOYAK_LANG, the "
                       "locale, else both)")
        p.set_defaults(func=func)
        return p

    p = add("import", "import package files (.siq, .txt, .zip export, .json)", cmd_import)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print each imported row as JSON")
    _limit_options(p)

    p = add("list", "list the packages in the library", cmd_list)
    p.add_argument("--json", action="store_true")

    p = add("show", "show one package of the library", cmd_show)
    p.add_argument("id", type=int)
    p.add_argument("--json", action="store_true", help="the package as JSON (media: hashes)")

    p = add("delete", "delete a package and the media only it used", cmd_delete)
    p.add_argument("id", type=int)

    p = add("inspect", "read a package file and print it normalized, without importing",
            cmd_inspect)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print the normalized package as JSON")
    _limit_options(p)

    p = add("export", "export a package with its media as a zip that imports back equal",
            cmd_export)
    p.add_argument("id", type=int)
    p.add_argument("out", metavar="OUT.zip")
