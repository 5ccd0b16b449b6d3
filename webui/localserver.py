"""`svoyak serve --simulate` as a child process on loopback.

The screenshots, the fan-out bench and the browser tests all need a real server to talk to;
this is the one way they start it and wait until the board page answers.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(data: Path, port: int, *extra: str, stdout: int | IO[Any] = subprocess.DEVNULL,
          env: dict[str, str] | None = None, wait_s: float = 30.0,
          simulate: bool = True) -> subprocess.Popen[Any]:
    """Start the simulator on 127.0.0.1:`port` with its data in `data` (its own process
    group, so a caller can stop the server and its worker together) and return once
    /board answers 200. Raises RuntimeError if it exits or does not answer in `wait_s`.
    `simulate=False` serves as a box does (GPIO buttons; off where the machine has none),
    for what the simulator would hide: phone buttons that follow the admin's setting."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "svoyak.cli", "serve", *(["--simulate"] if simulate else []),
         "--data", str(data),
         "--host", "127.0.0.1", "--port", str(port), *extra],
        cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.STDOUT,
        start_new_session=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/board", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"svoyak serve on port {port} did not start"
                       + (f" (exit code {proc.returncode})" if proc.poll() is not None else ""))
