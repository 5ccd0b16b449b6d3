"""HTML pages (host, board, play), the PIN login, QR codes and the simulator's press hook."""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    jsonify,
    redirect,
    render_template,
    request,
    send_file,
    session,
    url_for,
)

from webui import auth, i18n, qr

bp = Blueprint("pages", __name__)


def services() -> Any:
    return current_app.extensions["svoyak"]


def hub() -> Any:
    return current_app.extensions["svoyak_hub"]


def lang() -> str:
    return i18n.pick(request.cookies.get("lang") or services().settings.get()["language"])


def render(template: str, **ctx: Any) -> str:
    code = lang()
    settings = services().settings.public()
    # The page's data for its scripts, through |tojson in a JSON block (never |safe): a
    # box name like "</script><script>…" stays text.
    # `lang_own`: this browser picked its language (/lang/…); otherwise it follows the box's.
    page = {"lang": code, "catalogue": i18n.catalogue(code),
            "lang_own": request.cookies.get("lang") in i18n.LANGUAGES,
            "box_language": i18n.pick(settings["language"]),
            "box": {"simulate": services().simulate, "sound": settings["sound"],
                    "name": settings["box_name"]}}
    disk_full = hub().hooks.card_full()
    problems = [*services().problems, *services().settings.problems,
                *([{"code": "disk_full", **{c: i18n.translate("host.disk_full", c)
                                             for c in i18n.LANGUAGES}}] if disk_full else [])
                ] if is_host() else []
    return render_template(
        template, lang=code, t=lambda k, **f: i18n.translate(k, code, **f), page_data=page,
        problems=problems, simulate=services().simulate, settings=settings,
        disk_full=disk_full, **ctx)


def is_host() -> bool:
    """This request carries a live host session (see `auth.Generation`)."""
    return bool(current_app.extensions["svoyak_generation"].matches(session.get("host")))


def safe_next(value: str | None, default: str) -> str:
    """A redirect target on the box: a plain path. Browsers ignore tabs and newlines and
    read a backslash as a slash, so "/\t/evil" would leave the box: refused."""
    if not value or not value.startswith("/") or len(value) > 500:
        return default
    if any(c in "\\ " or ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return default
    parts = urlsplit(value)
    if value.startswith("//") or parts.scheme or parts.netloc:
        return default
    return value


def host_required(view: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(view)
    def wrapped(*a: Any, **kw: Any) -> Any:
        if not is_host():
            return redirect(url_for("pages.login", next=request.path))
        return view(*a, **kw)

    return wrapped


@bp.get("/")
def index() -> str:
    return render("index.html")


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    error = ""
    status = 200
    nxt = safe_next(request.values.get("next"), "/host")
    if request.method == "POST":
        guard = current_app.extensions["svoyak_pin_guard"]
        device = auth.device_id(current_app, request)
        address = request.remote_addr or "?"
        from webui.admission import is_loopback

        ok, wait = guard.check(f"device:{device}" if device else address,
                               request.form.get("pin", ""), services().settings.pin,
                               known=device is not None or is_loopback(address))
        if ok:
            session.clear()
            session["host"] = current_app.extensions["svoyak_generation"].value
            session.permanent = True
            resp = redirect(nxt)
            auth.remember_device(current_app, resp, device)
            if services().settings.host_logged_in():
                hub().broadcast()  # the TV stops showing the first PIN
            return resp
        if wait > 0:
            error = i18n.translate("login.locked", lang(), seconds=int(wait + 0.999))
            status = 429
        else:
            error = i18n.translate("login.wrong", lang())
            status = 403
    return render("login.html", error=error, next=nxt), status


@bp.post("/logout")
def logout() -> Any:
    """Ends every host session, on every device (a tablet left in the hall included)."""
    if is_host():
        end_host_sessions()
    session.clear()
    return redirect(url_for("pages.index"))


def end_host_sessions() -> None:
    current_app.extensions["svoyak_generation"].revoke()
    hub().disconnect_hosts()


@bp.get("/lang/<code>")
def set_lang(code: str) -> Any:
    resp = redirect(safe_next(request.args.get("next"), "/"))
    auth.set_relative_cookie(resp, "lang", i18n.pick(code), 365 * 24 * 3600, httponly=False)
    return resp


@bp.get("/host")
@host_required
def host() -> str:
    from appliance.rules.tv.presets import PRESETS
    from webui.games import specs

    # A TV rule-set seats its own number of players: the start screen shows as many names.
    seats = {name: preset.players_max for name, preset in PRESETS.items()}
    return render("host.html", packages=services().list_packages(), setups=specs(),
                  preset_seats=seats)


@bp.get("/protocol/<int:game>")
@host_required
def protocol(game: int) -> Any:
    """A printable protocol of one game: standings, every verdict, per-player statistics.
    The data rides in a JSON data island; the page's script lays it out."""
    loop = hub().loop
    try:
        rules, state = loop.snapshot(game)
    except (KeyError, LookupError, ValueError):
        abort(404)
    data = {"game": game, "rules": rules.NAME, "finished": loop.is_finished(game),
            "view": rules.view(state, "host"), "summary": rules.summary(state)}
    return render("protocol.html", data=data)


@bp.get("/board")
def board() -> Any:
    """The TV's board. Served to the kiosk on the box itself (loopback) while the box's
    first PIN is unseen, its idle screen shows that PIN, so a fresh box's club can log in
    with no keyboard; a phone on the Wi-Fi opening /board never gets it (docs/webui.md,
    "The first PIN")."""
    from webui.admission import is_loopback

    first_pin = services().settings.first_pin() if is_loopback(request.remote_addr) else None
    page = render("board.html", host_url=host_url(), play_url=play_url(), first_pin=first_pin)
    return page if first_pin is None else Response(page, headers={"Cache-Control": "no-store"})


@bp.get("/play")
def play() -> str:
    return render("play.html")


def host_url() -> str:
    """The address a tablet should open: a setting (the box's name on its own Wi-Fi),
    else the address this request came in on — the box's LAN address for a request on
    loopback, but only when the server listens on every address (started with
    HOST=127.0.0.1, no other device can reach it: the QR code names what works)."""
    configured = services().settings.get().get("host_url")
    if configured:
        return str(configured)
    h = request.host
    listen = services().listen
    if h.startswith(("localhost", "127.")) and listen in (None, "", "0.0.0.0", "::"):
        ip = _lan_address()
        if ip:
            port = h.split(":", 1)[1] if ":" in h else ""
            h = f"{ip}:{port}" if port else ip
    return f"http://{h}/host"


def play_url() -> str:
    """The players' page, beside the host page: what the idle TV's phone QR code names."""
    return host_url().removesuffix("/host") + "/play"


def _lan_address() -> str | None:
    """The box's own IPv4 address on its first non-loopback interface (Linux ioctl; no
    packet is sent). None when there is none."""
    import fcntl
    import struct

    siocgifaddr = 0x8915
    try:
        names = [n for _, n in socket.if_nameindex() if n != "lo"]
    except OSError:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in names:
            try:
                req = struct.pack("256s", name.encode()[:15])
                addr = fcntl.ioctl(s.fileno(), siocgifaddr, req)[20:24]
            except OSError:
                continue
            return socket.inet_ntoa(addr)
    return None


@bp.get("/qr/wifi.svg")
def qr_wifi() -> Response:
    wifi = services().settings.get()["wifi"]
    if not wifi.get("ssid"):
        abort(404)
    payload = qr.wifi_payload(wifi["ssid"], wifi.get("password", ""),
                              wifi.get("security") or "WPA")
    return Response(qr.svg(payload), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@bp.get("/qr/play.svg")
def qr_play() -> Response:
    return Response(qr.svg(play_url()), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@bp.get("/qr/host.svg")
def qr_host() -> Response:
    return Response(qr.svg(host_url()), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@bp.post("/api/sim/press")
def sim_press() -> Any:
    """The simulator's test hook: the same press path as board keys, phones and GPIO."""
    if not services().simulate:
        abort(404)
    data: Any = request.get_json(silent=True) or request.form
    try:
        player = int(data.get("player"))
    except (TypeError, ValueError):
        return jsonify({"ok": False, "error": "player must be a seat number"}), 400
    return jsonify(hub().press(player, "sim"))


@bp.get("/media/<digest>")
def media(digest: str) -> Any:
    """Package media (images, audio, video) from the library's content-addressed store."""
    lib = services().library
    if lib is None:
        abort(404)
    path = lib.media_path(digest)
    if path is None:
        abort(404)
    return send_file(path, mimetype=lib.media_type(digest) or None, conditional=True,
                     max_age=365 * 24 * 3600)
