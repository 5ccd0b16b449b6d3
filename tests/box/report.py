"""What the booted-box tests measure, kept in build/test-box/report.json (and said)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPORT_DIR = Path(__file__).resolve().parents[2] / "build/test-box"


def record(key: str, value: object) -> None:
    """Keep a measurement in the report (and say it)."""
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    path = REPORT_DIR / "report.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = value
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    shown = value if isinstance(value, int | float) else "\n" + str(value)
    print(f"[box] {key}: {shown}", file=sys.stderr)
