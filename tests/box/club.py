"""The club's side of a booted box, from outside it: the host logging in with the box's PIN
and running a game over the box's real Socket.IO, and the TV board watching."""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
import socketio


class Screen:
    """A Socket.IO client in one role that keeps the last view the box sent it."""

    def __init__(self, base: str, auth: dict[str, Any], cookie: str | None = None) -> None:
        self.last: dict[str, Any] = {}
        self.changed = threading.Condition()
        self.sio = socketio.Client(reconnection=False)
        self.sio.on("view", self._view)
        headers = {"Cookie": cookie} if cookie else {}
        self.sio.connect(base, auth=auth, headers=headers, transports=["websocket"],
                         wait_timeout=60)

    def _view(self, data: dict[str, Any]) -> None:
        with self.changed:
            self.last = data
            self.changed.notify_all()

    def wait(self, test: Any, timeout: float = 30, what: str = "") -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not self._holds(test):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{what or 'view'} not within {timeout} s: "
                                         f"{str(self.last.get('view'))[:1500]}")
                self.changed.wait(left)
            return self.last

    def _holds(self, test: Any) -> bool:
        try:
            return bool(self.last) and bool(test(self.last))
        except (KeyError, TypeError, IndexError):
            return False

    def close(self) -> None:
        self.sio.disconnect()


class Host(Screen):
    """The host's tablet: logs in with the PIN (the session cookie), then commands."""

    def __init__(self, base: str, pin: str) -> None:
        self.base = base
        self.http = http = requests.Session()
        r = http.post(base + "/login", data={"pin": pin}, allow_redirects=False, timeout=60)
        assert r.status_code == 302, (r.status_code, r.text[:500])
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        super().__init__(base, {"role": "host"}, cookie)

    def send(self, name: str, data: dict[str, Any]) -> dict[str, Any]:
        res = self.sio.call(name, data, timeout=60)
        assert res and res.get("ok"), (name, data, res)
        return res

    def settings(self, **form: str) -> None:
        """The admin page's settings form."""
        r = self.http.post(self.base + "/admin/settings", data=form, timeout=60,
                           headers={"Origin": self.base})
        assert r.status_code == 200, (r.status_code, r.text[:500])

    def actions(self) -> dict[str, dict[str, Any]]:
        return {a["type"]: a for a in self.last.get("actions", [])}

    def act(self, kind: str, **args: Any) -> dict[str, Any]:
        """A command the host's view offers now; arguments not given take their first
        choice."""
        self.wait(lambda v: kind in {a["type"] for a in v.get("actions", [])}, 30,
                  f"the action {kind}")
        offered = self.actions()[kind]
        for name, spec in offered.get("args", {}).items():
            if name not in args and isinstance(spec, list):
                args[name] = spec[0]["value"]
        return self.send("command", {"type": kind, **args})


def phase(v: dict[str, Any]) -> str:
    return str(v["view"]["phase"])
