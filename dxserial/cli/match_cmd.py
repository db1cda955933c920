"""``dxserial match A B``: two follower engines play each other, dxserial relays and referees."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP, configure_logging
from dxserial.cli.display import Publish, run_watched, stdout_progress
from dxserial.cli.options import (
    ENDPOINT_HELP,
    allow_option,
    baud_option,
    echo_timeout_option,
    end_byte_option,
    link_kind,
    link_option,
    link_options,
    max_attempts_option,
    start_byte_option,
    web_option,
)
from dxserial.engine.player import DEFAULT_NAME, check_name
from dxserial.errors import ConfigError
from dxserial.files import output_dir
from dxserial.game.adjudication import Adjudication
from dxserial.game.arbiter import ArbiterSettings
from dxserial.match.rules import FailurePolicy, GameStart, MatchConfig
from dxserial.match.runner import Match
from dxserial.protocol.dialects import DEFAULT_GAMEEND_TIMEOUT
from dxserial.tournament.engines import engine_endpoint, load_engines
from dxserial.tournament.hub_time import HubTime
from dxserial.tournament.keys import DEFAULTS
from dxserial.tournament.spec import EngineEntry, check_scores, parse_opening
from dxserial.transports.endpoints import EngineEndpoint

_SERIAL = "Serial lines and NULMODEM"
DEFAULT_MAX_MOVES = int(DEFAULTS["max_moves"])  # type: ignore[call-overload]


def move_limit(max_moves: int | None, old_moves: int | None) -> int:
    """--max-moves, or its old name --moves (which did the same: the limit, and the
    GAMEREQ's moves unless --time-moves says otherwise)."""
    if old_moves is None:
        return DEFAULT_MAX_MOVES if max_moves is None else max_moves
    if max_moves is not None:
        raise ConfigError("--moves is the old name of --max-moves: give only --max-moves")
    return old_moves


@app.command("match")
def match_command(
    endpoint_a: str = typer.Argument(..., metavar="ENDPOINT_A", help=ENDPOINT_HELP),
    endpoint_b: str = typer.Argument(..., metavar="ENDPOINT_B", help="The other engine."),
    games: int = typer.Option(2, "--games", help="Games to play; A has White in odd games."),
    minutes: int = typer.Option(
        DEFAULTS["minutes"],
        "--time",
        help="Time control: minutes per player, sent in each GAMEREQ.",
    ),
    time_moves: int | None = typer.Option(
        None,
        "--time-moves",
        help="Time control: the moves those minutes are for, sent in each GAMEREQ (0: the "
        "whole game); the director's clock gives the same time again after them. DXP lets "
        "an engine end the game once they are played. [default: --max-moves]",
        show_default=False,
    ),
    max_moves: int | None = typer.Option(
        None,
        "--max-moves",
        help="The director's move limit: a game is a draw after this many full moves "
        f"(0: none). [default: {DEFAULT_MAX_MOVES}]",
        show_default=False,
    ),
    old_moves: int | None = typer.Option(
        None, "--moves", hidden=True, help="The old name of --max-moves.", show_default=False
    ),
    pdn: Path = typer.Option(
        Path("games"), "--pdn", help="Directory for one PDN file per game (created if needed)."
    ),
    pdn_notes: bool = typer.Option(
        False,
        "--pdn-notes",
        help="PDN for people: the referee's notes too, and the clocks as prose comments instead "
        "of clock commands (default: the movetext and clock commands other programs read; "
        "docs/pdn.md).",
    ),
    on_engine_failure: str = typer.Option(
        "stop",
        "--on-engine-failure",
        help="When an engine fails or vanishes it loses that game; then 'stop' the match "
        "(exit 1) or 'continue' (its endpoint is opened again for the next game).",
    ),
    move_timeout: float = typer.Option(
        DEFAULTS["move_timeout"],
        "--move-timeout",
        help="Seconds an engine may take for one move or answer.",
    ),
    gameend_timeout: float = typer.Option(
        DEFAULT_GAMEEND_TIMEOUT,
        "--gameend-timeout",
        help="Seconds a GAMEEND of ours may wait for the engine's answer; then its silence is "
        "the answer (some engines, GWD by default, never answer one) and the next game goes on.",
    ),
    connect_timeout: float = typer.Option(
        DEFAULTS["connect_timeout"],
        "--connect-timeout",
        help="Seconds to reach an engine (tcp:// retries, listen:// waits).",
    ),
    link: str = link_option(),
    link_a: str | None = typer.Option(
        None,
        "--link-a",
        rich_help_panel=_SERIAL,
        help="Layer 1 for engine A only.",
        show_default=False,
    ),
    link_b: str | None = typer.Option(
        None,
        "--link-b",
        rich_help_panel=_SERIAL,
        help="Layer 1 for engine B only.",
        show_default=False,
    ),
    baud: int = baud_option(),
    start_byte: str = start_byte_option(_SERIAL),
    end_byte: str = end_byte_option(_SERIAL),
    echo_timeout: float = echo_timeout_option(_SERIAL),
    max_attempts: int = max_attempts_option(_SERIAL),
    opening: str = typer.Option(
        "",
        "--opening",
        help="Where every game starts: a FEN (W:WK46,K47:BK3) or PDN moves from the start "
        "(sent as a GAMEREQ with the position). Default: the normal start.",
        show_default=False,
    ),
    draw_rules: str = typer.Option(
        DEFAULTS["draw_rules"],
        "--draw-rules",
        rich_help_panel="Arbiter",
        help="'fmjd': FMJD's draw rules end a game (threefold repetition, 25 king moves, "
        "16-move and 5-move endgames); 'off': only the move limit.",
    ),
    on_false_claim: str = typer.Option(
        DEFAULTS["on_false_claim"],
        "--on-false-claim",
        rich_help_panel="Arbiter",
        help="A GAMEEND draw or win claim the position does not bear out: 'loss' for the "
        "claimant, or 'as-claimed' (recorded as false either way).",
    ),
    time_control: str = typer.Option(
        DEFAULTS["time_control"],
        "--time-control",
        rich_help_panel="Arbiter",
        help="'on': dxserial keeps each engine's clock from --time (and --time-moves); a flag "
        "fall loses on time. 'off': no clock (only --move-timeout). 'Ns': N seconds a game "
        "on the director's clock, whatever --time says.",
    ),
    clock_margin: float = typer.Option(
        DEFAULTS["clock_margin"],
        "--clock-margin",
        rich_help_panel="Arbiter",
        help="Seconds a move not charged to the engine: the line's share of each move.",
    ),
    increment: float = typer.Option(
        0.0,
        "--increment",
        rich_help_panel="Arbiter",
        help="Hub engines only (speaks = \"hub\" in --engines): a Fischer increment, seconds "
        "added after each move to --time for the game; told by 'level inc=', kept by the "
        "director's clock, PDN TimeControl 300+2. A DXP engine cannot be told it: refused.",
    ),
    move_time: float | None = typer.Option(
        None,
        "--move-time",
        rich_help_panel="Arbiter",
        help="Hub engines only: seconds for each move instead of --time ('level move-time=', "
        "PDN TimeControl *5). A DXP engine cannot be told it: refused.",
        show_default=False,
    ),
    adjudicate_draw: str | None = typer.Option(
        None,
        "--adjudicate-draw",
        metavar="AFTER,MOVES,MARGIN",
        rich_help_panel="Arbiter",
        help="Hub engines only: a draw once both scores stay within MARGIN men for MOVES "
        "moves each, from move AFTER on ('40,8,0.05'); Termination names it.",
        show_default=False,
    ),
    adjudicate_resign: str | None = typer.Option(
        None,
        "--adjudicate-resign",
        metavar="MOVES,SCORE",
        rich_help_panel="Arbiter",
        help="Hub engines only: a loss once one side's score stays at or below -SCORE for "
        "MOVES moves and its opponent's at or above +SCORE ('4,3.0').",
        show_default=False,
    ),
    web: str | None = web_option(),
    allow: list[str] = allow_option(),
    engines_file: Path | None = typer.Option(
        None,
        "--engines",
        help="A TOML file of [engines.NAME] tables (as in a tournament file: endpoint, or "
        "command + speaks for an engine dxserial starts, watches and restarts); "
        "ENDPOINT_A and ENDPOINT_B may then be names from it.",
        show_default=False,
    ),
    name: str = typer.Option(DEFAULT_NAME, "--name", help="Initiator name sent in GAMEREQs."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help=VERBOSE_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Play a match between two follower engines; dxserial is the initiator to both.

    Moves are relayed byte for byte after a strict referee has checked them; an illegal
    move loses the game and is not relayed. Shows a live line on a terminal (plain lines
    otherwise) and a results table at the end. Exit code 0 when the match ran to its last game
    (forfeits included); 1 when it stopped early (--on-engine-failure stop, Ctrl-C, SIGTERM).
    """
    configure_logging(verbose, quiet)
    moves = move_limit(max_moves, old_moves)
    if on_engine_failure not in ("stop", "continue"):
        raise ConfigError(f"--on-engine-failure: {on_engine_failure!r} is not 'stop' or 'continue'")
    if games < 1 or not all(0 <= n <= 999 for n in (moves, minutes, time_moves or 0)):
        raise ConfigError("--games must be >= 1, --max-moves, --time and --time-moves 0..999")
    if not (move_timeout > 0 and connect_timeout > 0):  # also refuses nan
        raise ConfigError("--move-timeout and --connect-timeout must be > 0")
    arbiter = ArbiterSettings.checked(
        {"draw_rules": draw_rules, "on_false_claim": on_false_claim,
         "time_control": time_control, "clock_margin": clock_margin},
        lambda key: "--" + key.replace("_", "-"),
    )
    chosen = parse_opening(opening)
    start = (
        GameStart(chosen.position.pieces(), chosen.position.turn, chosen.text)
        if chosen.position is not None
        else None
    )
    if not gameend_timeout > 0:  # also refuses nan
        raise ConfigError(f"--gameend-timeout {gameend_timeout:g}: must be > 0 seconds")
    output_dir(pdn, "PDN folder", create=False)  # made when the first game is written
    options = link_options(
        link, baud, start_byte, end_byte, echo_timeout, max_attempts, connect_timeout
    )
    named = load_engines(engines_file) if engines_file is not None else {}
    entries = [named.get(t) or EngineEntry(t, t) for t in (endpoint_a, endpoint_b)]
    timing = HubTime.checked(
        {"increment": increment, "move_time": move_time,
         "time_moves": time_moves if increment else None}, entries, "dxserial match",
        plain="--time and --time-moves")
    named = {n: timing.told(e) for n, e in named.items()}
    judged = Adjudication.checked(
        {**_fields("adjudicate_draw", adjudicate_draw, ("after_move", "moves", "margin")),
         **_fields("adjudicate_resign", adjudicate_resign, ("moves", "score"))},
        lambda key: "--" + key.replace("_", "-"),
    )
    if judged.on:
        check_scores(entries, judged, "dxserial match")
    endpoints: list[EngineEndpoint] = []
    for text, own in ((endpoint_a, link_a), (endpoint_b, link_b)):
        these, tables = options, named
        if own is not None:  # the side's own --link-a/--link-b wins over its table's link
            link_of = link_kind("--link-a/--link-b", own)
            these = dataclasses.replace(options, link=link_of)
            if text in named:
                tables = {text: dataclasses.replace(named[text], link=link_of)}
        endpoints.append(engine_endpoint(text, tables, these, pdn))
    config = MatchConfig(
        games=games,
        minutes=minutes,
        time_moves=time_moves,
        moves=moves,
        pdn_dir=pdn,
        pdn_notes=pdn_notes,
        on_engine_failure=FailurePolicy(on_engine_failure),
        move_timeout=move_timeout,
        connect_timeout=connect_timeout,
        name=check_name(name),
        log_messages=verbose >= 1,
        arbiter=arbiter,
        start=start,
        gameend_timeout=gameend_timeout,
        increment=timing.increment,
        move_time=timing.move_time,
        adjudication=judged,
    )
    match = Match(endpoints[0], endpoints[1], config, progress=stdout_progress())
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


def _fields(key: str, text: str | None, names: tuple[str, ...]) -> dict[str, object]:
    """``--adjudicate-draw 40,8,0.05`` as the file's table ``{after_move = 40, ...}``."""
    if text is None:
        return {}
    parts = [p.strip() for p in text.split(",")]
    option = "--" + key.replace("_", "-")
    if len(parts) != len(names):
        raise ConfigError(f"{option} {text!r}: give {','.join(n.upper() for n in names)}")
    values: dict[str, object] = {}
    for name, part in zip(names, parts, strict=True):
        try:
            values[name] = float(part) if "." in part or name in ("margin", "score") else int(part)
        except ValueError:
            raise ConfigError(f"{option} {text!r}: {name} {part!r} is not a number") from None
    return {key: values}
