"""Tournament screens: the director's page in admin (entries, draw, battles, corrections,
results) and the public screens — the bracket on the TV paged by stage, the "next battle"
call, the podium, the results table and printable protocols and bracket.

Handlers only translate forms into tournament commands (through the box's tournament shell,
`appliance.runtime.tournament.TournamentShell`, i.e. the game loop: `Services.tournament`,
built once by the composition root) and views into templates; the rules live in
`appliance.rules.tournament`. Pages are plain HTML forms; the TV pages refresh themselves
from webui/static/js/tournament-board.js when the box pushes a change ("tourney" on
Socket.IO, `Hub.tourney_changed`): nothing polls.
"""

from __future__ import annotations

import logging
import math
import secrets
from typing import Any

from flask import Blueprint, Flask, Response, abort, redirect, request

from appliance.packages import jsonform
from appliance.packages.model import Package
from appliance.rules.protocol import Refused
from appliance.rules.tournament import stages as st
from appliance.rules.tournament import views
from appliance.rules.tournament.battles import can_supply, theme_needs, themes_needed
from appliance.rules.tournament.state import PLAYING, READY, STOPPED, Tournament
from appliance.runtime.tournament import TournamentShell
from webui import i18n
from webui.pages import is_host, lang, render, services

log = logging.getLogger("svoyak.webui")
public = Blueprint("tournament", __name__, url_prefix="/tournament")
admin = Blueprint("tournament_admin", __name__, url_prefix="/admin/tournament")

PAGE_BATTLES = 12  # battles on one TV page: 4 columns × 3 rows at 1920×1080
AUTOPAGE_S = 12


def register(app: Flask) -> None:
    app.register_blueprint(public)
    app.register_blueprint(admin)


def director() -> TournamentShell | None:
    """The box's tournament shell, when there is a tournament to drive."""
    shell: TournamentShell = services().tournament
    return shell if shell.game is not None else None


def state() -> Tournament | None:
    return services().tournament.state


def _name(key: str) -> str:
    ru, en = st.stage_label(key)
    return ru if lang() == "ru" else en


def _winner_of(battle_id: str) -> str:
    """A seat still to be filled, named by its battle's number as the director and the TV
    call it («победитель боя 1»), never by the draw's internal id («Q1»)."""
    s = state()
    b = s.battle(battle_id) if s is not None else None
    if b is None:
        return i18n.translate("tournament.winner_of", lang(), battle=battle_id)
    return i18n.translate("tournament.winner_of_battle", lang(), n=b.drawn.number)


@public.context_processor
@admin.context_processor
def _names() -> dict[str, Any]:
    return {"winner_of": _winner_of}


# -- public screens ----------------------------------------------------------------------------
def _current_stage(s: Tournament) -> str | None:
    for b in s.battles:
        if b.status in (PLAYING, READY):
            return b.drawn.stage
    return s.plan.stages[-1].key if s.plan else None


def board_pages(s: Tournament) -> list[dict[str, Any]]:
    """The TV's pages: each stage in order, split into pages of `PAGE_BATTLES`."""
    pages = []
    for stage in views.stages_json(s):
        battles = stage["battles"]
        count = max(1, math.ceil(len(battles) / PAGE_BATTLES))
        for k in range(count):
            pages.append({"stage": stage["key"], "page": k + 1, "pages": count,
                          "battles": battles[k * PAGE_BATTLES:(k + 1) * PAGE_BATTLES]})
    return pages


@public.get("/board")
def board() -> str:
    s = state()
    if s is None or not s.drawn:
        return render("tournament/empty.html")
    pages = board_pages(s)
    stage = request.args.get("stage") or _current_stage(s)
    try:
        page = max(1, int(request.args.get("page", "1")))
    except ValueError:
        page = 1
    chosen = next((p for p in pages if p["stage"] == stage and p["page"] == page),
                  next((p for p in pages if p["stage"] == stage), pages[0]))
    nxt = set(views.view(s, "board")["next"])
    # The TV's default (no stage asked for) holds every page of the stage in play, the first
    # shown: the page turns them in place (tournament-board.js), with nothing fetched.
    auto = "stage" not in request.args
    sheets = [p for p in pages if p["stage"] == chosen["stage"]] if auto else [chosen]
    return render("tournament/board.html", s=s, sheet=chosen, sheets=sheets, pages=pages,
                  next_ids=nxt, stage_name=_name, autopage_s=AUTOPAGE_S)


@public.get("/call")
def call() -> str:
    s = state()
    b = views.next_battles(s, 1)[0] if s is not None and views.next_battles(s, 1) else None
    battle = views.battle_json(s, b) if s is not None and b is not None else None
    playing = [views.battle_json(s, x) for x in s.battles if x.status == PLAYING] if s else []
    stopped = [views.battle_json(s, x) for x in s.battles if x.status == STOPPED] if s else []
    return render("tournament/call.html", s=s, battle=battle, playing=playing,
                  stopped=stopped, stage_name=_name)


@public.get("/podium")
def podium() -> str:
    s = state()
    rows = views.view(s, "board").get("podium", []) if s is not None else []
    return render("tournament/podium.html", s=s, rows=rows)


@public.get("/results")
def results() -> str:
    s = state()
    if s is None:
        return render("tournament/empty.html")
    return render("tournament/results.html", s=s, stages=views.stages_json(s),
                  standings=views.standings(s), stage_name=_name)


@public.get("/results.csv")
def results_file() -> Response:
    s = state()
    if s is None:
        abort(404)
    return Response("\ufeff" + views.results_csv(s), mimetype="text/csv",
                    headers={"Content-Disposition": "attachment; filename=results.csv"})


@public.get("/print/bracket")
def print_bracket() -> str:
    s = state()
    if s is None or not s.drawn:
        return render("tournament/empty.html")
    return render("tournament/print_bracket.html", s=s, stages=views.stages_json(s),
                  stage_name=_name)


@public.get("/print/protocol/<battle_id>")
def protocol(battle_id: str) -> str:
    s = state()
    b = s.battle(battle_id) if s is not None else None
    if s is None or b is None:
        abort(404)
    n = themes_needed(s, b)
    themes = list(b.themes) + [""] * max(0, n - len(b.themes))
    red_from = st.THEMES_FINAL - st.RED_THEMES_FINAL if b.id == "F" else len(themes)
    rows = [{"name": t, "values": [v * (2 if i >= red_from else 1) for v in (10, 20, 30, 40,
                                                                             50)],
             "red": i >= red_from} for i, t in enumerate(themes)]
    return render("tournament/protocol.html", s=s, b=views.battle_json(s, b), themes=rows,
                  stage_name=_name)


# -- the director's page -----------------------------------------------------------------------
@admin.before_request
def _require_host() -> Any:
    if not is_host():
        if request.method == "GET":
            return redirect(f"/login?next={request.path}")
        abort(403)
    return None


def _page(message: str = "", status: int = 200,
          confirm_replay: str | None = None) -> tuple[str, int]:
    s = state()
    battles = [{**views.battle_json(s, b), "in_play": in_play(s, b)}
               for b in s.battles] if s is not None else []
    packages = services().list_packages()
    nxt = views.next_battles(s, 1) if s is not None else []
    needs = theme_needs(s) if s is not None else []
    supply = _supply(s, packages) if s is not None and needs else []
    usable = [p for p in supply if p["enough"]]
    return render("tournament/director.html", s=s, message=message, failed=status >= 400,
                  battles=battles,
                  view=views.view(s, "director") if s is not None else None,
                  packages=usable, supply=supply, needs=needs,
                  need_total=sum(x["left"] for x in needs),
                  stage_name=_name, seed=secrets.randbelow(10**9),
                  sport_package=_sport_package(usable), confirm_replay=confirm_replay,
                  next_battle=nxt[0].id if nxt else None), status


_THEMES: dict[str, Package | None] = {}  # package id (+ its size) -> the parsed package


def _supply(s: Tournament, packages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each package with how many unplayed themes it holds against what the rest of the
    tournament needs; a package that cannot be read is listed as not enough."""
    from webui.games import Games

    out = []
    for p in packages:
        if p.get("rules") not in (None, "battle"):
            continue  # the TV demo: not a sport package
        cache = f"{p['id']}:{p.get('questions')}:{p['name']}"
        if cache not in _THEMES:
            try:
                data = Games(services().loop, services().library).package_json(p["id"],
                                                                               "battle")
                _THEMES[cache] = jsonform.from_dict(data)
            except Exception:  # a broken package is simply not offered
                log.exception("package %s could not be read", p["id"])
                _THEMES[cache] = None
        pkg = _THEMES[cache]
        info = can_supply(s, pkg) if pkg is not None else {"need": 0, "fresh": 0,
                                                           "enough": False}
        out.append({**p, **info})
    return out


def _sport_package(packages: list[dict[str, Any]]) -> str | None:
    """The package a battle's chooser starts on: the sport demo, never the TV one."""
    return next((p["id"] for p in packages if p.get("rules") == "battle"), None)


def _refused(r: Refused) -> tuple[str, int]:
    return _page(r.message_ru if lang() == "ru" else r.message_en, 400)


@admin.get("/")
def page() -> tuple[str, int]:
    # A battle whose game the host has just ended is recorded by the shell's loop
    # subscriber on the notifier thread, which may not have run yet when the host's «Следующий
    # бой турнира» lands here: the page records what the log already holds first
    # (idempotent), so it never shows that battle still in play.
    shell = director()
    if shell is not None:
        try:
            shell.reconcile()
        except Refused as r:  # a result that does not fit: the subscriber logged it too
            log.warning("a battle's result was refused: %s", r.message_en)
    return _page()


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _command(cmd: dict[str, Any]) -> Any:
    d = director()
    if d is None:
        return _page(i18n.translate("tournament.none", lang()), 400)
    try:
        d.submit(cmd)
    except Refused as r:
        return _refused(r)
    return redirect("/admin/tournament/")


@admin.post("/create")
def create() -> Any:
    f = request.form
    setup: dict[str, Any] = {"title": f.get("title", "")[:200],
                             "final_ties": f.get("final_ties") or "shared"}
    if f.get("bracket"):
        setup["bracket"] = _int(f["bracket"])
    try:
        services().tournament.create(setup)
    except Refused as r:
        return _refused(r)
    return redirect("/admin/tournament/")


@admin.post("/entry")
def add_entry() -> Any:
    f = request.form
    return _command({"type": "add_entry", "name": f.get("name", ""), "team": f.get("team", ""),
                     "city": f.get("city", ""), "rating": f.get("rating") or None})


@admin.post("/entry/<int:entry>")
def edit_entry(entry: int) -> Any:
    f = request.form
    if f.get("withdraw"):
        return _command({"type": "withdraw_entry", "entry": entry})
    return _command({"type": "edit_entry", "entry": entry, "name": f.get("name", ""),
                     "team": f.get("team", ""), "city": f.get("city", ""),
                     "rating": f.get("rating") or None})


@admin.post("/import")
def import_entries() -> Any:
    upload = request.files.get("file")
    if upload is None:
        return _page(i18n.translate("tournament.no_file", lang()), 400)
    from appliance.rules.tournament import entries as en
    try:
        text = en.decode(upload.read(en.MAX_CSV_BYTES + 1))
    except Refused as r:
        return _refused(r)
    return _command({"type": "import_entries", "csv": text})


@admin.post("/draw")
def draw() -> Any:
    f = request.form
    s = state()
    if s is not None and s.drawn and f.get("confirm") != "1":
        # Drawing again throws the bracket away: only from the confirmation's own button.
        return _page(i18n.translate("tournament.redraw_unconfirmed", lang()), 400)
    cmd: dict[str, Any] = {"type": "draw", "seed": _int(f.get("seed"))}
    if cmd["seed"] is None:
        cmd["seed"] = secrets.randbits(63)
    if f.get("bracket"):
        cmd["bracket"] = _int(f["bracket"])
    if f.get("seeded"):
        cmd["seeded"] = True  # not in the regulation: only when the director ticks it
    return _command(cmd)


@admin.post("/start")
def start() -> Any:
    d = director()
    if d is None:
        return _page(i18n.translate("tournament.none", lang()), 400)
    battle_id = request.form.get("battle", "")
    package_id = request.form.get("package") or "demo:battle"
    from webui.games import Games
    try:
        data = Games(services().loop, services().library).package_json(package_id, "battle")
        d.start_battle(battle_id, d.setup_for(battle_id, jsonform.from_dict(data)))
    except Refused as r:
        return _refused(r)
    except (ValueError, KeyError, TypeError) as e:
        return _page(str(e), 400)
    return redirect("/admin/tournament/")


@admin.post("/walkover")
def walkover() -> Any:
    absent = [e for e in (_int(x) for x in request.form.getlist("absent")) if e is not None]
    return _command({"type": "walkover", "battle": request.form.get("battle", ""),
                     "absent": absent})


@admin.post("/replay")
def replay() -> Any:
    """A battle in play is replayed only from the confirmation's own button, which the first
    tap shows with what is lost (its game, questions, scores); a finished or stopped one at
    once."""
    d = director()
    if d is None:
        return _page(i18n.translate("tournament.none", lang()), 400)
    battle_id = request.form.get("battle", "")
    s = d.state
    b = s.battle(battle_id) if s is not None else None
    if b is not None and b.status == PLAYING and request.form.get("confirm") != "1":
        # the first tap: the row names what is lost and offers the confirmation
        return _page(i18n.translate("tournament.replay_unconfirmed", lang()), 400,
                     confirm_replay=b.id)
    try:
        d.replay(battle_id)
    except Refused as r:
        return _refused(r)
    return redirect("/admin/tournament/")


@admin.post("/award")
def award() -> Any:
    return _command({"type": "award_leader", "battle": request.form.get("battle", ""),
                     "reason": request.form.get("reason", "")})


def in_play(s: Tournament, b: Any) -> dict[str, Any] | None:
    """What a replay of a battle in play loses: its game, questions played, scores."""
    if b.status != PLAYING or b.game is None:
        return None
    try:
        rules, game_state = services().loop.snapshot(b.game)
        summary = rules.summary(game_state)
    except Exception:  # the page must render even if the game cannot be read
        return {"game": b.game, "questions": "?", "scores": "?"}
    return {"game": b.game, "questions": len(summary.get("questions") or []),
            "scores": ":".join(str(x) for x in summary.get("scores") or [])}


@admin.post("/swap")
def swap() -> Any:
    return _command({"type": "swap_players", "a": _int(request.form.get("a")),
                     "b": _int(request.form.get("b"))})


@admin.post("/settings")
def settings() -> Any:
    f = request.form
    cmd: dict[str, Any] = {"type": "configure"}
    if "title" in f:
        cmd["title"] = f["title"]
    if f.get("final_ties"):
        cmd["final_ties"] = f["final_ties"]
    return _command(cmd)
