"""Captive portal: answers the operating systems' connectivity probes.

The box has no internet and its DNS answers every name with the box's own address, so a
phone that joins the Wi-Fi sends its connectivity probe here. The answer decides what the
phone does (docs/appliance.md has the decision per OS):

- a client the box has not seen yet gets a redirect to the portal page (`/captive`): the
  phone opens its sign-in window on the box's start page;
- once the client has tapped through the portal (`/captive/continue`), its probes get the
  answer each OS expects from a working network, so the phone closes the sign-in window,
  marks the Wi-Fi as usable and stays on it instead of falling back to mobile data.

Probes are recognised by path only, never by host name: every name leads here anyway.
A request for any other path under a foreign host name (an address typed by hand) is sent
to the box. Clients are told apart by IP address (the DHCP lease keeps it stable).
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from flask import Blueprint, Response, redirect, render_template_string, request
from werkzeug.wrappers import Response as WerkzeugResponse

# Path -> (status, content type, body) that the OS takes for "this network works".
ONLINE_ANSWERS: dict[str, tuple[int, str, str]] = {
    # Android and ChromeOS (and Chrome's own check): an empty 204.
    "/generate_204": (204, "text/plain", ""),
    "/gen_204": (204, "text/plain", ""),
    # Apple iOS, iPadOS and macOS: this exact page.
    "/hotspot-detect.html": (
        200, "text/html",
        "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>",
    ),
    "/library/test/success.html": (
        200, "text/html",
        "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>",
    ),
    # Windows 10/11 and older Windows (NCSI).
    "/connecttest.txt": (200, "text/plain", "Microsoft Connect Test"),
    "/ncsi.txt": (200, "text/plain", "Microsoft NCSI"),
    # Firefox and Linux desktops (NetworkManager's check).
    "/success.txt": (200, "text/plain", "success\n"),
    "/check_network_status.txt": (200, "text/plain", "NetworkManager is online\n"),
}
# Windows opens this path in the browser when its probe fails: always the portal.
PORTAL_ALIASES = ("/redirect",)
PORTAL_PATH = "/captive"
CONTINUE_PATH = "/captive/continue"
REMEMBER_S = 12 * 3600
# Addresses remembered at most (a Wi-Fi of 120 phones, leases renewed all evening, fits many
# times over); beyond it the longest unseen is forgotten and sees the portal again.
MAX_CLIENTS = 4096

PORTAL_PAGE = """<!doctype html>
<html lang="ru"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Своя игра</title>
<style>
 body{font-family:sans-serif;margin:0;padding:1.5rem;background:#0b1d5b;color:#fff;text-align:center}
 a{display:block;margin:1rem auto;max-width:22rem;padding:1rem;border-radius:.6rem;
   background:#f2c230;color:#0b1d5b;font-size:1.3rem;font-weight:bold;text-decoration:none}
 p{max-width:28rem;margin:1rem auto;line-height:1.4} .en{opacity:.75;font-size:.9rem}
</style></head><body>
<h1>Своя игра</h1>
<p>Вы подключены к игровой приставке. Интернета здесь нет — он и не нужен.</p>
<p class="en">You are on the game box's Wi-Fi. There is no internet here, and none is needed.</p>
<a href="{{ cont }}?next=/host">Я ведущий · Host</a>
<a href="{{ cont }}?next=/play">Я игрок · Player</a>
<a href="{{ cont }}?next=/">Главная · Start page</a>
<p>Если окно входа не закроется само, нажмите «Готово» и откройте
<b>http://{{ address }}/</b> в браузере.</p>
<p class="en">If this sign-in window stays open, tap “Done” and open
<b>http://{{ address }}/</b> in your browser.</p>
</body></html>"""


class Clients:
    """The client addresses that have passed the portal, forgotten after `remember_s`
    without a request (a new lease, another day's game)."""

    def __init__(self, remember_s: float = REMEMBER_S,
                 clock: Callable[[], float] = time.monotonic):
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self.remember_s = remember_s
        self.clock = clock

    def admit(self, addr: str) -> None:
        now = self.clock()
        with self._lock:
            self._seen.pop(addr, None)
            self._seen[addr] = now  # most recently seen last
            while len(self._seen) > MAX_CLIENTS:  # the oldest first
                del self._seen[next(iter(self._seen))]
            oldest = next(iter(self._seen))
            if now - self._seen[oldest] > self.remember_s:  # forget the expired, oldest first
                self._seen = {a: t for a, t in self._seen.items()
                              if now - t <= self.remember_s}

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def admitted(self, addr: str) -> bool:
        now = self.clock()
        with self._lock:
            seen = self._seen.get(addr)
            if seen is None or now - seen > self.remember_s:
                self._seen.pop(addr, None)
                return False
            del self._seen[addr]
            self._seen[addr] = now  # most recently seen last
            return True


def is_foreign_host(host: str, own_hosts: Iterable[str] = ()) -> bool:
    """True for a DNS name of the outside world (which our DNS pointed at the box).

    The box's own names are: an IP literal, a single label (`svoyak`, `localhost`), any
    `.local` (mDNS) name, and `own_hosts`. Everything else with a dot is foreign."""
    name = host.strip().lower()
    if name.startswith("["):  # [IPv6]:port
        return False
    name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    name = name.rstrip(".")
    if not name:
        return False
    try:
        ipaddress.ip_address(name)
        return False
    except ValueError:
        pass
    if name in {h.lower() for h in own_hosts}:
        return False
    return "." in name and not name.endswith((".local", ".localhost"))


def _safe_next(target: str | None) -> str:
    """Only a local path: the portal must not become an open redirect."""
    if not target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


def blueprint(address: str = "10.42.0.1", *, own_hosts: Iterable[str] = ("svoyak",),
              redirect_foreign: bool = True, clients: Clients | None = None) -> Blueprint:
    """The captive-portal routes, to register in the app factory.

    address: the box's address on its Wi-Fi (the portal's links and redirects use it, since
    a probe arrives under a foreign host name). redirect_foreign: send any request under a
    foreign host name to the box (off for a developer's laptop, where names are real)."""
    bp = Blueprint("captive", __name__)
    known = clients if clients is not None else Clients()
    bp.clients = known  # type: ignore[attr-defined]
    own = tuple(own_hosts)
    base = f"http://{address}"

    def portal() -> WerkzeugResponse:
        # 302 with a short body: every OS follows it into its sign-in window.
        resp = redirect(base + PORTAL_PATH, code=302)
        resp.headers["Cache-Control"] = "no-store"
        return resp

    def probe(path: str) -> WerkzeugResponse:
        if not known.admitted(request.remote_addr or ""):
            return portal()
        status, ctype, body = ONLINE_ANSWERS[path]
        resp = Response(body, status=status, content_type=ctype)
        resp.headers["Cache-Control"] = "no-store"
        return resp

    for path in ONLINE_ANSWERS:
        bp.add_url_rule(path, f"probe{path.replace('/', '_').replace('.', '_')}",
                        lambda path=path: probe(path), methods=["GET", "HEAD"])
    for path in PORTAL_ALIASES:
        bp.add_url_rule(path, "windows_redirect", portal, methods=["GET", "HEAD"])

    @bp.route(PORTAL_PATH, methods=["GET", "HEAD"])
    def page():
        resp = Response(render_template_string(PORTAL_PAGE, cont=base + CONTINUE_PATH,
                                               address=address))
        resp.headers["Cache-Control"] = "no-store"
        return resp

    @bp.route(CONTINUE_PATH, methods=["GET", "POST"])
    def cont():
        known.admit(request.remote_addr or "")
        return redirect(base + _safe_next(request.args.get("next")), code=302)

    @bp.before_app_request
    def foreign_host():
        if not redirect_foreign or request.method not in ("GET", "HEAD"):
            return None
        if request.path in ONLINE_ANSWERS or request.path in PORTAL_ALIASES:
            return None
        if not is_foreign_host(request.host, own):
            return None
        if known.admitted(request.remote_addr or ""):
            return redirect(base + "/", code=302)
        return portal()

    return bp
