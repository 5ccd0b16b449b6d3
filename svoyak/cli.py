"""The `svoyak` command. Each area registers its own subcommands, so this file only lists
them: the CLI mirrors the library, one module per concern."""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules with `register(subparsers)`; each adds its subcommands.
COMMAND_MODULES: list[str] = ["svoyak.serve", "gpio.cli", "appliance.packages.cli",
                              "appliance.runtime.cli", "appliance.tournament.cli",
                              "rooms.cli"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="svoyak", description="Svoyak: a box that runs live games of «Своя игра»."
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _version() -> str:
    from appliance import __version__

    return f"svoyak {__version__}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
