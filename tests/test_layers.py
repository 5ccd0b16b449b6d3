"""Who may import whom (docs/architecture.md), checked on the source: the domain imports no
adapter, the two adapters never import each other, and only the composition root (`svoyak/`)
imports both. The rules import nothing that runs (no store, no loop, no thread)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imports(package: str) -> dict[str, set[str]]:
    """Top-level-qualified modules each file of `package` imports (lazy imports included)."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "import_module" and node.args
                  and isinstance(node.args[0], ast.Constant)):
                names.add(str(node.args[0].value))
        out[str(path.relative_to(ROOT))] = names
    return out


def offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return [f"{f} imports {n}" for f, names in imports(package).items() for n in sorted(names)
            if any(n == p or n.startswith(p + ".") for p in forbidden)]


# What a rules engine may not import: anything that runs (the runtime and the shells over it),
# the adapters, and the modules that reach the disk, the network, threads or the clock.
PURE = ("appliance.runtime", "appliance.tournament", "appliance.storage", "webui", "rooms",
        "gpio", "svoyak", "sqlite3", "sqlite_utils", "threading", "multiprocessing", "asyncio",
        "time", "socket", "os", "pathlib", "shutil", "tempfile", "subprocess", "signal")


@pytest.mark.parametrize("package, forbidden", [
    ("appliance", ("gpio", "webui", "rooms", "svoyak")),
    ("gpio", ("webui", "rooms", "svoyak")),
    ("webui", ("gpio", "rooms", "svoyak")),
    ("rooms", ("gpio", "webui", "svoyak")),
    ("appliance/rules", PURE),
    ("appliance/rules/tv", PURE),
    ("appliance/rules/battle", PURE),
    ("appliance/rules/tournament", PURE),
    # Packages read files, but they sit below the runtime and the shells, never above them.
    ("appliance/packages", ("appliance.runtime", "appliance.tournament")),
])
def test_layer_imports_only_what_it_may(package: str, forbidden: tuple[str, ...]):
    assert offenders(package, forbidden) == []


def test_storage_is_the_bottom_of_the_box():
    """Every writer of the card stands on `appliance.storage`, so it imports none of them."""
    ours = {n for n in imports("appliance")["appliance/storage.py"]
            if n.split(".")[0] in ("appliance", "gpio", "webui", "rooms", "svoyak")}
    assert ours == set()


def test_every_engine_is_held_to_the_rules_layer():
    """An engine of the box registered from outside appliance/rules/ would escape the check
    above (the tournament once lived in appliance/tournament/). Read from the registry's
    source: tests register engines of their own at run time."""
    tree = ast.parse((ROOT / "appliance/rules/registry.py").read_text("utf-8"))
    table = next(node.value for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                 and isinstance(node.target, ast.Name) and node.target.id == "REGISTRY")
    assert isinstance(table, ast.Dict)
    engines = {ast.literal_eval(k): ast.literal_eval(v)
               for k, v in zip(table.keys, table.values, strict=True) if k is not None}
    assert {"battle", "tv", "tournament"} <= set(engines)
    assert {n: m for n, m in engines.items() if not m.startswith("appliance.rules.")} == {}


def test_the_composition_root_is_the_one_place_with_both_adapters():
    both = []
    for package in ("appliance", "gpio", "webui", "rooms", "svoyak"):
        for f, names in imports(package).items():
            uses = {n.split(".")[0] for n in names}
            if {"gpio", "webui"} <= uses:
                both.append(f)
    assert both == ["svoyak/serve.py"]


def test_the_check_sees_a_lazy_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    pkg.joinpath("m.py").write_text("def f():\n    import gpio.x\n    from webui import y\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert offenders("pkg", ("gpio", "webui")) == ["pkg/m.py imports gpio.x",
                                                   "pkg/m.py imports webui",
                                                   "pkg/m.py imports webui.y"]


def set_from_outside(package: str, names: tuple[str, ...] = ("hub", "services")) -> list[str]:
    """Attributes assigned on the web hub or the web UI's services from another module
    (`hub.x = …`, `services().x = …`): both are built whole, once, by `create_app` from
    what the composition root hands it."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel == "webui/hub.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
            for t in targets:
                if not isinstance(t, ast.Attribute):
                    continue
                owner = t.value.func if isinstance(t.value, ast.Call) else t.value
                if isinstance(owner, ast.Name) and owner.id in names:
                    found.append(f"{rel}:{t.lineno} sets {owner.id}.{t.attr}")
    return found


@pytest.mark.parametrize("package", ["appliance", "gpio", "webui", "rooms", "svoyak"])
def test_nothing_sets_the_hub_or_the_services_after_they_are_built(package: str):
    assert set_from_outside(package) == []


def test_the_check_sees_a_hook_set_after_construction(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    pkg.joinpath("m.py").write_text("def f(hub, services):\n    hub.press_fn = print\n"
                                    "    services().rooms = None\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert set_from_outside("pkg") == ["pkg/m.py:2 sets hub.press_fn",
                                       "pkg/m.py:3 sets services.rooms"]
