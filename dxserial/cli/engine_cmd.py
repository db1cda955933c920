"""``dxserial engine ENDPOINT``: the built-in engine plays DXP on a serial line or TCP."""

from __future__ import annotations

import dataclasses
import sys

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP, configure_logging
from dxserial.cli.options import (
    ENDPOINT_HELP,
    NULMODEM_PANEL,
    baud_option,
    echo_timeout_option,
    end_byte_option,
    link_option,
    link_options,
    max_attempts_option,
    start_byte_option,
)
from dxserial.drive.driver import on_signals
from dxserial.engine.player import (
    DEFAULT_DEPTH,
    DEFAULT_NAME,
    MAX_DEPTH,
    BackPolicy,
    Player,
    PlayerConfig,
    check_depth,
)
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.errors import ConfigError
from dxserial.hub.process import HubMover, check_hub_level, hub_name
from dxserial.protocol.dialects import DEFAULT_GAMEEND_TIMEOUT
from dxserial.protocol.messages import Colour
from dxserial.protocol.session import Role
from dxserial.transports.endpoints import EngineEndpoint, parse_engine_endpoint


def parse_colour(option: str, value: str) -> Colour:
    text = value.strip().upper()
    if text in ("W", "WHITE"):
        return Colour.WHITE
    if text in ("Z", "B", "BLACK"):
        return Colour.BLACK
    raise ConfigError(f"{option}: {value!r} is not W (white) or Z (black)")


@app.command("engine")
def engine_command(
    endpoint: str = typer.Argument(..., metavar="ENDPOINT", help=ENDPOINT_HELP),
    role: str = typer.Option(
        ..., "--role", help="'follower' (answers GAMEREQs) or 'initiator' (offers games)."
    ),
    link: str = link_option(),
    baud: int = baud_option(),
    start_byte: str = start_byte_option(),
    end_byte: str = end_byte_option(),
    learn_start: bool = typer.Option(
        True,
        "--learn-start/--no-learn-start",
        rich_help_panel=NULMODEM_PANEL,
        help="NULMODEM: also take a peer's other control byte for its start byte when it "
        "speaks first (as the bridge does). --no-learn-start answers only --start-byte and "
        "--end-byte, as a DOS program that knows no other would: a peer for testing "
        "'dxserial probe'.",
    ),
    echo_timeout: float = echo_timeout_option(),
    max_attempts: int = max_attempts_option(),
    connect_timeout: float = typer.Option(
        10.0, "--connect-timeout", help="tcp://: keep trying to connect for this many seconds."
    ),
    name: str = typer.Option(DEFAULT_NAME, "--name", help="Engine name sent in GAMEREQ/GAMEACC."),
    depth: int = typer.Option(
        DEFAULT_DEPTH,
        "--depth",
        help=f"Search depth in plies (1..{MAX_DEPTH}); a move never takes more than 1/20 "
        "of the time left on the engine's clock (GAMEREQ minutes).",
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Seed for choosing among equal moves (default: random).",
        show_default=False,
    ),
    backreq: str = typer.Option(
        "accept", "--backreq", help="Answer a BACKREQ: 'accept' (K0, go back) or 'decline' (K1)."
    ),
    games: int = typer.Option(
        2,
        "--games",
        rich_help_panel="Initiator: the games it offers",
        help="Initiator: games to offer.",
    ),
    minutes: int = typer.Option(
        5,
        "--time",
        rich_help_panel="Initiator: the games it offers",
        help="Initiator: minutes per player in GAMEREQ.",
    ),
    moves: int = typer.Option(
        75,
        "--moves",
        rich_help_panel="Initiator: the games it offers",
        help="Initiator: moves field of GAMEREQ. Either role ends a game as a draw (GAMEEND "
        "reason 2) when it is to move after that many full moves; 0: no limit.",
    ),
    colour: str = typer.Option(
        "W",
        "--colour",
        rich_help_panel="Initiator: the games it offers",
        help="Initiator: the follower's colour in game 1 (W or Z); alternates.",
    ),
    answer_timeout: float = typer.Option(
        10.0,
        "--answer-timeout",
        help="Initiator: seconds to wait for a GAMEACC before saying nothing answered (and, "
        "on TCP or --link nul, sending the GAMEREQ again); it keeps waiting.",
    ),
    hub: str | None = typer.Option(
        None,
        "--hub",
        metavar="CMD",
        help="Take the moves from the Hub engine that CMD starts ('scan hub', 'dxserial "
        "hub-engine'), on its stdin/stdout, under the GAMEREQ's clock ('level time=' the "
        "time left); the DXP dialogue stays the built-in engine's. A Hub engine that dies, "
        "breaks the protocol or plays an illegal move ends the game (GAMEEND) and the "
        "session: exit 1 with one line. Its 'id' name is used unless --name is given.",
        show_default=False,
    ),
    increment: float = typer.Option(
        0.0,
        "--increment",
        help="With --hub: a Fischer increment (seconds) the director adds after each move: "
        "told to the Hub engine ('level time=LEFT inc=S') and counted in the time left. A "
        "GAMEREQ cannot carry it (a tournament adds it for speaks = \"hub\").",
    ),
    move_time: float | None = typer.Option(
        None,
        "--move-time",
        help="With --hub: seconds for each move ('level move-time=S') instead of the "
        "GAMEREQ's clock (a tournament adds it for speaks = \"hub\").",
        show_default=False,
    ),
    tell_thinking: bool = typer.Option(
        False,
        "--tell-thinking",
        help="With --hub: before each MOVE, a CHAT with the Hub engine's score, depth and "
        "principal variation ('thinking score=0.35 depth=12 pv=32-28 17-22'), for a "
        "dxserial director that records them (the director adds it for speaks = \"hub\").",
    ),
    gameend_timeout: float = typer.Option(
        DEFAULT_GAMEEND_TIMEOUT,
        "--gameend-timeout",
        help="Seconds a GAMEEND of ours may wait for the peer's answer; then its silence is "
        "the answer (some engines, GWD by default, never answer one) and the next game goes on.",
    ),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help=VERBOSE_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Play DXP with the built-in engine (a small alpha-beta search) on ENDPOINT.

    Prints a ready line, then one line per game ('game 1: 2-0 (Black has no legal move)').
    Exit code 0 when the session ended normally (stop code 1 exchanged), or on Ctrl-C /
    SIGTERM after at least one game was played to its end; 1 (one-line error) when stopped
    before that, when the link was lost, or when the peer broke the protocol 5 times in a row
    (a single violation is told by CHAT, the game is ended, and the engine plays on).
    """
    configure_logging(verbose, quiet)
    if role not in ("follower", "initiator"):
        raise ConfigError(f"--role: {role!r} is not 'follower' or 'initiator'")
    if backreq not in ("accept", "decline"):
        raise ConfigError(f"--backreq: {backreq!r} is not 'accept' or 'decline'")
    check_depth(depth, "--depth")
    if not answer_timeout > 0:
        raise ConfigError(f"--answer-timeout {answer_timeout:g}: must be > 0 seconds")
    if tell_thinking and hub is None:
        raise ConfigError("--tell-thinking: needs --hub (only a Hub engine reports its thinking)")
    check_hub_level(increment, move_time, hub is not None)
    if not gameend_timeout > 0:  # also refuses nan
        raise ConfigError(f"--gameend-timeout {gameend_timeout:g}: must be > 0 seconds")
    options = link_options(
        link,
        baud,
        start_byte,
        end_byte,
        echo_timeout,
        max_attempts,
        connect_timeout,
        learn_start=learn_start,
    )
    mover = (HubMover(hub, depth=depth, increment=increment, move_time=move_time)
             if hub is not None else None)
    config = PlayerConfig(
        role=Role(role),
        name=name,
        depth=depth,
        backreq=BackPolicy(backreq),
        games=games,
        minutes=minutes,
        moves=moves,
        colour=parse_colour("--colour", colour),
        seed=seed,
        answer_timeout=answer_timeout,
        gameend_timeout=gameend_timeout,
        tell_thinking=tell_thinking,
        increment=increment,
    )
    where = EngineEndpoint(parse_engine_endpoint(endpoint), options)
    try:
        if mover is not None:  # started last: a bad option above leaves no child behind
            hub_id = hub_name(mover.start())
            if name == DEFAULT_NAME and hub_id:
                config = dataclasses.replace(config, name=hub_id)
        result = runtime.run(_run(Player(config, mover=mover), where, verbose >= 1))
    finally:
        if mover is not None:
            mover.close()
    sys.stdout.flush()
    if result.code:
        print(f"dxserial: error: {result.message}", file=sys.stderr)
    raise typer.Exit(result.code)


def _line(text: str) -> None:
    print(text, flush=True)


async def _run(player: Player, endpoint: EngineEndpoint, log_messages: bool) -> RunResult:
    await endpoint.open_early()  # a wrong port fails here, before "engine ready"
    runner = EngineRunner(player, endpoint, log_messages=log_messages, on_line=_line)
    with on_signals(runner.stop):
        return await runner.run()
