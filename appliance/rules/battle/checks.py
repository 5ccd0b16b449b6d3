"""The battle's argument checks and refusals, shared by its command modules (`commands`,
`corrections`), over the codes both engines share (`appliance.rules.kit`)."""

from __future__ import annotations

from typing import Any

from appliance.rules import kit
from appliance.rules.battle.state import PHASE_RU, Battle
from appliance.rules.protocol import Command, Refused


def refuse(ru: str, en: str, code: str = "refused") -> Refused:
    return Refused(ru, en, code)


def out_of_phase(cmd: Command, state: Battle) -> Refused:
    return kit.out_of_phase(f"«{cmd.type}» в фазе «{PHASE_RU[state.phase]}»",
                            f"{cmd.type!r} in phase {state.phase!r}")


def seat(state: Battle, v: Any) -> int:
    return kit.seat(v, state.seats)
