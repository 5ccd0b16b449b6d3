"""Helpers for the web UI tests: an app over a real game loop and a real SQLite file, and a
real `svoyak serve` process on loopback for the browser tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store, db_path
from appliance.runtime.tournament import TournamentShell
from webui import localserver
from webui.app import Services, create_app
from webui.games import Games
from webui.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# Debian's Chromium on a closed network: no background traffic, no sandbox as root.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--autoplay-policy=no-user-gesture-required"]
# axe-core (a dev dependency: `make test` runs npm ci in webui/) and the audit the browser
# tests run with it: WCAG 2.1 A and AA, the serious and critical violations, a few nodes each.
AXE = ROOT / "webui" / "node_modules" / "axe-core" / "axe.min.js"
AXE_RUN = """async () => {
  const r = await axe.run(document, {runOnly: {type: "tag",
    values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]});
  return r.violations.filter((x) => ["serious", "critical"].includes(x.impact)).map((x) =>
    x.id + ": " + x.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | "));
}"""


@dataclass
class Kit:
    app: Any
    socketio: Any
    hub: Any
    loop: GameLoop
    store: Store
    services: Services
    games: Games

    def close(self) -> None:
        self.services.tournament.close()
        self.loop.stop()
        self.store.close()

    def host(self, **kw: Any) -> Any:
        """A logged-in host socket (the PIN login sets the session cookie)."""
        fc = self.app.test_client()
        r = fc.post("/login", data={"pin": self.services.settings.pin})
        assert r.status_code == 302, r.status_code
        return self.socketio.test_client(self.app, flask_test_client=fc,
                                         auth={"role": "host", **kw})

    def client(self, role: str, **kw: Any) -> Any:
        return self.socketio.test_client(self.app, auth={"role": role, **kw})


def make_kit(tmp: Path, *, simulate: bool = True, library: Any = None) -> Kit:
    store = Store(db_path(tmp))
    loop = GameLoop(store).start()
    games = Games(loop, library)
    services = Services(loop=loop, settings=Settings(tmp), data_dir=tmp, simulate=simulate,
                        start_game=games.start, list_packages=games.list_packages,
                        library=library, store=store, tournament=TournamentShell(loop))
    services.export_game = lambda g: {"game": g, "events": [
        e.to_json() for e in store.log(g)]}
    app, socketio, hub = create_app(services)
    app.config["TESTING"] = True
    return Kit(app, socketio, hub, loop, store, services, games)


def views(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "view"]


# --- a real server --------------------------------------------------------------------------

class Server:
    """`svoyak serve --simulate` in a subprocess on a free loopback port (`simulate=False`:
    as a box serves, GPIO buttons or none)."""

    def __init__(self, data: Path, port: int | None = None, *extra: str,
                 simulate: bool = True):
        self.data = data
        self.simulate = simulate
        self.port = port or localserver.free_port()
        self.extra = extra
        self.proc: subprocess.Popen[str] | None = None
        self.base = f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.log = open(self.data.parent / f"server-{self.port}.log", "a")  # noqa: SIM115
        try:
            self.proc = localserver.start(self.data, self.port, *self.extra, stdout=self.log,
                                          env=env, simulate=self.simulate)
        except RuntimeError as e:
            raise RuntimeError(f"{e}: {self.output()}") from e
        return self

    def output(self) -> str:
        return (self.data.parent / f"server-{self.port}.log").read_text()

    @property
    def pin(self) -> str:
        return str(json.loads((self.data / "settings.json").read_text())["pin"])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.proc = None
        if getattr(self, "log", None):
            self.log.close()
