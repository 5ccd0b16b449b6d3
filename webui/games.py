"""Packages to choose from and how a host's "new game" becomes an engine setup.

The demo packages ship in `appliance/data`; the package library (when installed) adds the
club's own. A package is passed to the engine inside the setup, in the project's JSON form,
so the log alone can replay the game."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from appliance.packages import jsonform
from appliance.packages.library import LibraryError
from appliance.rules import arbiter, registry
from appliance.rules.describe import SetupSpec
from appliance.rules.protocol import Refused

log = logging.getLogger("svoyak.webui")

DEMO_DIR = Path(__file__).resolve().parent.parent / "appliance" / "data"


def specs() -> dict[str, SetupSpec]:
    """What the new-game dialog offers: each engine's own description of its setup."""
    return registry.setups()


def demo_file(rules: str) -> str | None:
    spec = specs().get(rules)
    return None if spec is None else f"{spec.demo}.json"


class Games:
    def __init__(self, loop: Any, library: Any = None):
        self.loop = loop
        self.library = library

    def list_packages(self) -> list[dict[str, Any]]:
        out = []
        for rules, spec in specs().items():
            file = f"{spec.demo}.json"
            path = DEMO_DIR / file
            if path.exists():
                name = json.loads(path.read_text("utf-8")).get("name", file)
                out.append({"id": f"demo:{rules}", "name": name, "rules": rules, "demo": True})
        if self.library is not None:
            try:
                for info in self.library.list():
                    out.append({"id": str(info.id), "name": info.name, "rules": None,
                                "demo": False, "questions": info.questions})
            except Exception:  # the admin page shows library errors; the host page must open
                log.exception("package list failed")
        return out

    def package_json(self, package_id: str | None, rules: str) -> dict[str, Any]:
        package_id = package_id or f"demo:{rules}"
        if package_id.startswith("demo:"):
            file = demo_file(package_id.split(":", 1)[1])
            if file is None:
                raise Refused("Нет такого пакета.", "No such package.", "no_package")
            return json.loads((DEMO_DIR / file).read_text("utf-8"))
        if self.library is None:
            raise Refused("Библиотека пакетов недоступна.", "The package library is missing.",
                          "no_package")
        try:
            return jsonform.to_dict(self.library.get(int(package_id)))
        except (ValueError, LookupError, LibraryError) as e:
            raise Refused("Нет такого пакета.", "No such package.", "no_package") from e

    def setup(self, rules: str, players: list[str], package_id: str | None,
              options: dict[str, Any] | None = None) -> dict[str, Any]:
        """The engine's setup, built by the engine's own description (`SETUP_SPEC`) from
        the dialog's options (flat, by option name; the older ``{"timers": {...}}`` form is
        read too). Demo packages go by name (the engines load them themselves); a library
        package goes in whole, so the log alone replays the game."""
        spec = specs().get(rules)
        if spec is None:
            raise Refused("Неизвестные правила.", "Unknown rules.", "unknown_rules")
        package_id = package_id or f"demo:{rules}"
        options = dict(options or {})
        values = {**(options.pop("timers", None) or {}), **options}
        if package_id.startswith("demo:"):
            demo = demo_file(package_id.split(":", 1)[1])
            if demo is None:
                raise Refused("Нет такого пакета.", "No such package.", "no_package")
            package: Any = demo.removesuffix(".json")
        else:
            # The whole package goes into the setup, so the log replays without the
            # library; each engine takes what it plays from it (the battle: themes by stage).
            package = self.package_json(package_id, rules)
        setup = spec.build(players, package, values)
        # The box's measured settle window, written into the setup so the log says it.
        setup["settings"] = {"settle_ms": arbiter.BOX_SETTLE_MS, **setup.get("settings", {})}
        return setup

    def start(self, rules: str, players: list[str], package_id: str | None,
              options: dict[str, Any] | None = None) -> int:
        setup = self.setup(rules, players, package_id, options)
        return int(self.loop.new_game(rules, setup).result(10))
