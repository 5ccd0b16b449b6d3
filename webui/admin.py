"""The admin page (behind the host PIN): box settings, PIN change, sound, the package
library and protocol export. Handlers call the library and store; no logic of their own."""

from __future__ import annotations

import json
import logging
import math
import tempfile
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, abort, jsonify, request
from werkzeug.utils import secure_filename

from appliance import storage
from appliance.packages.archive import PackageError
from appliance.packages.errors import notice_in
from appliance.packages.library import LibraryError
from webui import auth, i18n, wifi_rules
from webui.pages import end_host_sessions, hub, is_host, lang, render, services

bp = Blueprint("admin", __name__, url_prefix="/admin")
_log = logging.getLogger(__name__)


@bp.before_request
def _require_host() -> Any:
    if not is_host():
        from flask import redirect, url_for

        if request.method == "GET" and not request.path.startswith("/admin/api"):
            return redirect(url_for("pages.login", next=request.path))
        abort(403)
    return None


def _hardware() -> dict[str, Any] | None:
    hw = services().hardware
    if hw is None:
        return None
    try:
        return dict(hw.status())
    except Exception:  # the admin page must open even if the buttons misbehave
        return None


@bp.get("/")
def page() -> str:
    return render("admin.html", pin=services().settings.pin, packages=services().list_packages(),
                  games=_games(), hardware=_hardware())


@bp.post("/settings")
def save_settings() -> Any:
    f = request.form
    changes: dict[str, Any] = {"problems": []}  # the host has seen the settings page
    if "box_name" in f:
        changes["box_name"] = f["box_name"].strip()[:40] or "Svoyak"
    message = "admin.saved"
    if "ssid" in f:
        ssid, password = f["ssid"].strip(), f.get("password", "")
        current = services().settings.get()["wifi"]
        if (ssid, password) != (current.get("ssid", ""), current.get("password", "")):
            try:  # exactly what the box's set-up tool (root) accepts, in its words
                wifi_rules.check(ssid, password)
            except wifi_rules.WifiRefused as e:
                return _back("", 400, text=e.text(lang()))
            # The access point belongs to the box's set-up tool (root): ask it. In the
            # simulator there is none, so the settings change at once.
            services().settings.request_wifi(ssid, password)
            if services().simulate:
                changes["wifi"] = {"ssid": ssid, "password": password}
            else:
                message = "admin.wifi_requested"
    if "network" in f:  # the venue network mode, applied by the box's set-up tool (root)
        mode, vssid, vpass = f["network"], f.get("venue_ssid", "").strip(), f.get(
            "venue_password", "")
        if mode not in ("hotspot", "venue-wifi", "venue-ethernet"):
            return _back("admin.network_bad", 400)
        if mode == "venue-wifi":
            try:
                wifi_rules.check(vssid, vpass, venue=True)
            except wifi_rules.WifiRefused as e:
                return _back("", 400, text=e.text(lang()))
        services().settings.request_wifi(vssid, vpass, network=mode)
        message = "admin.network_requested"
    if "volume" in f:
        try:
            volume = float(f["volume"])
        except ValueError:
            volume = math.nan
        if not math.isfinite(volume):  # "nan" or "inf" would make settings.json invalid
            return _back("admin.volume_bad", 400)
        changes["sound"] = {"volume": min(max(volume, 0.0), 1.0), "mute": f.get("mute") == "on"}
    if "language" in f:
        changes["language"] = i18n.pick(f["language"])
    if "host_url" in f:
        changes["host_url"] = f["host_url"].strip()[:200]
    if "buzzer_form" in f:
        changes["casual_buzzer"] = f.get("casual_buzzer") == "on"
        changes["phone_pick_direct"] = f.get("phone_pick_direct") == "on"
    services().settings.update(changes)
    hub().broadcast()
    return _back(message)


@bp.post("/language")
def box_language() -> Any:
    """The host made the language of its own page the box's default (from the host page,
    confirmed there): the TV and the phones that picked none follow it at once."""
    data = request.get_json(silent=True) or {}
    code = data.get("language") if isinstance(data, dict) else None
    if code not in i18n.LANGUAGES:
        return jsonify({"ok": False, "refused": {
            "code": "malformed", "ru": "Нет такого языка.", "en": "No such language."}}), 400
    services().settings.update({"language": code})
    hub().broadcast()
    return jsonify({"ok": True, "language": code})


@bp.post("/pin")
def change_pin() -> Any:
    pin = request.form.get("pin", "").strip()
    if not auth.valid_pin(pin):
        return _back("admin.pin_bad", 400)
    services().settings.update({"pin": pin, "pin_on_board": False})
    # Whoever knew the old PIN is logged out everywhere; this tablet stays logged in.
    end_host_sessions()
    from flask import current_app, session

    session["host"] = current_app.extensions["svoyak_generation"].value
    return _back("admin.pin_changed")


FORMS = ("box", "network", "sound", "buzzer", "pin")


def _back(key: str, status: int = 200, *, text: str | None = None) -> Any:
    """The page again with the message beside the form that was sent (its hidden `form`
    field), not at the top of a long page."""
    message = text if text is not None else i18n.translate(key, lang())
    where = request.form.get("form", "")
    return render("admin.html", pin=services().settings.pin, message=message,
                  message_for=where if where in FORMS else "",
                  failed=status >= 400, packages=services().list_packages(), games=_games(),
                  hardware=_hardware()), status


@bp.get("/hardware.json")
def hardware() -> Any:
    """The buttons' live state for the admin's button test (polled while it is open)."""
    return jsonify(_hardware() or {})


# --- package library ------------------------------------------------------------------------

def _library() -> Any:
    lib = services().library
    if lib is None:
        abort(503)
    return lib


@bp.post("/packages")
def upload_package() -> Any:
    lib = _library()
    try:  # Werkzeug spools the body to a temporary file (TMPDIR: the data partition)
        upload = request.files.get("file")
    except OSError as e:
        return _upload_failed(e)
    if upload is None or not upload.filename:
        return jsonify({"ok": False, "error": i18n.translate("admin.no_file", lang())}), 400
    name = secure_filename(upload.filename) or "package"
    # Staged on the data partition (the root file system is small, or RAM under an
    # overlay root), beside the library it goes into.
    staging = services().data_dir / "tmp"
    staging.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=staging) as tmp:
        path = Path(tmp) / name
        try:
            upload.save(path)  # streamed to disk by Werkzeug, never held in memory whole
            package_id = lib.import_file(path)
        except OSError as e:
            return _upload_failed(e)
        except (PackageError, LibraryError) as e:
            # In the page's language; the code for scripts and tests (docs/packages.md).
            return jsonify({"ok": False, "error": e.message(lang()), "code": e.code,
                            "refused": e.to_json()}), 400
    hub().broadcast()
    hub().packages_changed(services().list_packages())
    return jsonify({"ok": True, "package": lib.info(package_id).to_json()})


def _upload_failed(e: OSError) -> Any:
    """A full card says so (nothing was added, nothing else changed); other I/O errors as
    they are."""
    if storage.disk_full(e):
        return jsonify({"ok": False, "error": i18n.translate("admin.disk_full", lang())}), 507
    _log.warning("package upload failed: %s", e)  # the OS's own (English) words: the log
    return jsonify({"ok": False, "error": i18n.translate("admin.upload_io_error", lang())}), 400


@bp.get("/packages/<int:pid>")
def preview_package(pid: int) -> Any:
    """The package's outline for the admin: rounds, themes, prices and kinds (the admin is
    the host, so answers may show)."""
    lib = _library()
    try:
        package = lib.get(pid)
        info = lib.info(pid).to_json()
    except LibraryError:
        abort(404)
    return jsonify({**info, "warning_texts": [notice_in(w, lang()) for w in package.warnings],
                    "rounds": [
        {"name": r.name, "final": r.final, "themes": [
            {"name": t.name, "questions": [
                {"price": q.price, "kind": str(q.kind), "text": q.text[:200],
                 "answers": q.right} for q in t.questions]} for t in r.themes]}
        for r in package.rounds]})


@bp.post("/packages/<int:pid>/delete")
def delete_package(pid: int) -> Any:
    lib = _library()
    try:
        lib.delete(pid)
    except LibraryError as e:
        if e.code == "no_package":
            abort(404)
        return jsonify({"ok": False, "error": e.message(lang()), "code": e.code,
                        "refused": e.to_json()}), 507 if e.code == "disk_full" else 500
    from appliance.runtime import space

    space.keep(services().data_dir)  # room again: the reserve for the next full card
    hub().broadcast()
    hub().packages_changed(services().list_packages())
    return jsonify({"ok": True})


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: getattr(o, "__dict__", str(o))))


# --- protocols --------------------------------------------------------------------------------

def _games() -> list[dict[str, Any]]:
    store = services().store
    lister = getattr(store, "games", None)
    if lister is None:
        return []
    try:
        games = [g.to_json() if hasattr(g, "to_json") else _jsonable(g) for g in lister()]
    except Exception:  # a listing problem must not take the admin page down
        return []
    return [{**g, "when": _when(g.get("created"))} for g in games]


def _when(created: Any) -> str:
    """A game's start as people read it, «01.12.2026 12:39», in the box's time zone (the
    page's script rewrites it in the tablet's); the stored ISO stamp stays in the markup."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(created)).astimezone().strftime("%d.%m.%Y %H:%M")
    except ValueError:
        return ""


@bp.get("/export/<int:game>.json")
def export_game(game: int) -> Response:
    exporter = services().export_game
    if exporter is None:
        abort(503)
    try:
        body = exporter(game)
    except (KeyError, LookupError):
        abort(404)
    return Response(json.dumps(body, ensure_ascii=False, indent=1), mimetype="application/json",
                    headers={"Content-Disposition": f"attachment; filename=game-{game}.json"})


@bp.get("/api/stats")
def stats() -> Any:
    """What the edge refused and dropped (sockets per role, messages over a rate limit,
    requests the admission refused): for the host's curiosity and the flood bench."""
    from flask import current_app

    admission = current_app.extensions.get("svoyak_admission")
    return jsonify({"hub": hub().stats(),
                    "admission": admission.stats() if admission is not None else None})
