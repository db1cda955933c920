"""``dxserial match A B``: two follower engines play each other, dxserial relays and referees.

Its options are made from :data:`~dxserial.cli.match_settings.SETTINGS`, and checked by it.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging, option_given
from dxserial.cli.display import Publish, run_watched, stdout_progress
from dxserial.cli.match_settings import SETTINGS
from dxserial.cli.options import link_kind, parameters
from dxserial.errors import ConfigError
from dxserial.game import adjudication
from dxserial.game.adjudication import Adjudication
from dxserial.game.arbiter import ArbiterSettings
from dxserial.line_settings import check_nulmodem
from dxserial.match.rules import GameStart, MatchConfig
from dxserial.match.runner import Match
from dxserial.protocol.links import NulModemSettings
from dxserial.setting import checked
from dxserial.tournament.engines import engine_endpoint, load_engines
from dxserial.tournament.hub_time import HubTime
from dxserial.tournament.spec import EngineEntry, check_scores
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions
from dxserial.transports.serial import SerialSettings

#: The options the arbiter's and adjudication's own checks take together.
_ARBITER_KEYS = ArbiterSettings.KEYS
_ADJUDICATION = tuple(adjudication.KEYS)


def move_limit(max_moves: int, old_moves: int | None, given: bool) -> int:
    """--max-moves, or its old name --moves (which did the same: the limit, and the
    GAMEREQ's moves unless --time-moves says otherwise); ``given``: --max-moves was."""
    if old_moves is None:
        return max_moves
    if given:
        raise ConfigError("--moves is the old name of --max-moves: give only --max-moves")
    return old_moves


def match_command(ctx: typer.Context, **given: Any) -> None:
    """Play a match between two follower engines; dxserial is the initiator to both.

    Moves are relayed byte for byte after a strict referee has checked them; an illegal
    move loses the game and is not relayed. Shows a live line on a terminal (plain lines
    otherwise) and a results table at the end. Exit code 0 when the match ran to its last game
    (forfeits included); 1 when it stopped early (--on-engine-failure stop, Ctrl-C, SIGTERM).
    """
    configure_logging(given["verbose"], given["quiet"])
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    values["max_moves"] = move_limit(values["max_moves"], values.pop("moves"),
                                     option_given(ctx, "max_moves", given["max_moves"]))
    arbiter = ArbiterSettings.checked({k: values[k] for k in _ARBITER_KEYS}, _flag)
    named = load_engines(values["engines"]) if values["engines"] is not None else {}
    sides = (values["endpoint_a"], values["endpoint_b"])
    entries = [named.get(t) or EngineEntry(t, t) for t in sides]
    timing = HubTime.checked(
        {"increment": values["increment"], "move_time": values["move_time"],
         "time_moves": values["time_moves"] if values["increment"] else None},
        entries, "dxserial match", plain="--time and --time-moves")
    judged = Adjudication.checked(
        {k: values[k] for k in _ADJUDICATION if values[k] is not None}, _flag)
    if judged.on:
        check_scores(entries, judged, "dxserial match")
    endpoints = _endpoints(values, {n: timing.told(e) for n, e in named.items()})
    config = dataclasses.replace(_config(values, timing, judged), arbiter=arbiter)
    match = Match(endpoints[0], endpoints[1], config, progress=stdout_progress())
    _play(match, values["web"], values["allow"] or [])


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _endpoints(values: dict[str, Any], named: dict[str, EngineEntry]) -> list[EngineEndpoint]:
    """Both sides' endpoints: a name of --engines is its table's, with --link-a/--link-b
    over the table's link, the table's link and baud over --link and --baud."""
    nulmodem = NulModemSettings(values["start_byte"], values["end_byte"],
                                values["echo_timeout"], values["max_attempts"])
    options = LinkOptions(link=link_kind("--link", values["link"]),
                          serial=SerialSettings(baudrate=values["baud"]),
                          nulmodem=check_nulmodem(nulmodem, option=True),
                          connect_timeout=values["connect_timeout"])
    endpoints: list[EngineEndpoint] = []
    for side in "ab":
        text, own = values[f"endpoint_{side}"], values[f"link_{side}"]
        these, tables = options, named
        if own is not None:  # the side's own --link-a/--link-b wins over its table's link
            link_of = link_kind(f"--link-{side}", own)
            these = dataclasses.replace(options, link=link_of)
            if text in named:
                tables = {text: dataclasses.replace(named[text], link=link_of)}
        endpoints.append(engine_endpoint(text, tables, these, values["pdn"]))
    return endpoints


def _config(values: dict[str, Any], timing: HubTime, judged: Adjudication) -> MatchConfig:
    chosen = values["opening"]
    start = (
        GameStart(chosen.position.pieces(), chosen.position.turn, chosen.text)
        if chosen.position is not None
        else None
    )
    return MatchConfig(
        games=values["games"],
        minutes=values["minutes"],
        time_moves=values["time_moves"],
        moves=values["max_moves"],
        pdn_dir=values["pdn"],
        pdn_notes=values["pdn_notes"],
        on_engine_failure=values["on_engine_failure"],
        move_timeout=values["move_timeout"],
        connect_timeout=values["connect_timeout"],
        name=values["name"],
        log_messages=values["verbose"] >= 1,
        start=start,
        gameend_timeout=values["gameend_timeout"],
        increment=timing.increment,
        move_time=timing.move_time,
        adjudication=judged,
    )


def _play(match: Match, web: str | None, allow: list[str]) -> None:
    """Run the match to its end; exit 1 when it stopped early or no game was played."""
    def watch(publish: Publish) -> None:
        match.watch = publish

    completed = runtime.run(
        run_watched(match.run, match.stop, web=web, allow=allow, say=match.progress.line,
                    title=match.cfg.event, watch=watch)
    )
    sys.stdout.flush()
    if completed and match.summaries and not any(s.plies for s in match.summaries):
        print("dxserial: error: no game was played: every game was forfeited or ended before "
              "its first move", file=sys.stderr)
        raise typer.Exit(1)
    if not completed:
        print(
            f"dxserial: error: match stopped after {len(match.summaries)} game(s): {match.stopped}",
            file=sys.stderr,
        )
        raise typer.Exit(1)


match_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
     *parameters(SETTINGS)]
)
app.command("match")(match_command)
