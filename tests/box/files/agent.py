"""The test box's command agent: the host's hand inside the VM (test image only).

It listens on TCP 7000 of the VM's test-only Ethernet (QEMU user networking, `restrict=on`,
reached from the host only through a forward on loopback) and runs the shell commands the
harness posts, as root, returning their exit code and output. It starts before everything
else in the boot, so a box that never finishes booting can still be looked into.
A Raspberry Pi image has no such thing: tests/box/guest.py adds it to the test disk only.
"""

from __future__ import annotations

import json
import subprocess
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = 7000


class Agent(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.reply(200, {"ok": True})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        try:
            r = subprocess.run(["bash", "-c", request["cmd"]], capture_output=True,
                               timeout=float(request.get("timeout", 120)),
                               input=request.get("input", "").encode())
            self.reply(200, {"rc": r.returncode, "out": r.stdout.decode(errors="replace"),
                             "err": r.stderr.decode(errors="replace")})
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace")
            self.reply(200, {"rc": -1, "out": out, "err": "agent: timed out"})

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", PORT), Agent).serve_forever()
