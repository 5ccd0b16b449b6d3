"""Every script the box serves parses.

A syntax error in one page's script (a stray parenthesis) leaves that page dead in every
browser while the server and its HTTP tests stay green; the browser tests walk only some
pages, so each file is checked on its own with Node's parser, which `make test` installs
for the front-end build anyway.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

STATIC_JS = Path(__file__).resolve().parent.parent / "webui" / "static" / "js"
SCRIPTS = sorted(STATIC_JS.glob("*.js"))


def test_there_are_scripts_to_check() -> None:
    assert len(SCRIPTS) >= 5, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_parses(script: Path) -> None:
    node = shutil.which("node")
    assert node, "node is installed by scripts/webui-deps.sh, which make test runs"
    done = subprocess.run([node, "--check", str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
