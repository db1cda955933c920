"""``dxserial hub ENDPOINT``: a DXP engine (a DOS program on a cable, Scan 2.0 ...) as a Hub
engine, for Hub GUIs and pydraughts/lidraughts bots."""

from __future__ import annotations

import sys

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import HUB_QUIET_HELP, HUB_VERBOSE_HELP, configure_logging
from dxserial.cli.options import (
    ENDPOINT_HELP,
    baud_option,
    echo_timeout_option,
    end_byte_option,
    link_option,
    link_options,
    max_attempts_option,
    start_byte_option,
)
from dxserial.drive.driver import on_signals
from dxserial.engine.player import check_name
from dxserial.engine.runner import RunResult
from dxserial.errors import ConfigError
from dxserial.hub.adapter import AdapterConfig, HubAdapter
from dxserial.hub.runner import HubAdapterRunner
from dxserial.transports.endpoints import EngineEndpoint, parse_engine_endpoint

_LINE = "DXP line"


@app.command("hub")
def hub_command(
    endpoint: str = typer.Argument(..., metavar="ENDPOINT", help=ENDPOINT_HELP),
    link: str = link_option(),
    baud: int = baud_option(_LINE),
    start_byte: str = start_byte_option(_LINE),
    end_byte: str = end_byte_option(_LINE),
    echo_timeout: float = echo_timeout_option(_LINE),
    max_attempts: int = max_attempts_option(_LINE),
    connect_timeout: float = typer.Option(
        10.0,
        "--connect-timeout",
        help="tcp://: keep trying to connect for this many seconds.",
        rich_help_panel=_LINE,
    ),
    name: str = typer.Option(
        "dxserial hub", "--name", help="Our name: in the Hub 'id' answer and the GAMEREQ."
    ),
    minutes: int = typer.Option(
        5,
        "--minutes",
        help="GAMEREQ minutes when the client's 'level' has no clock (depth=, nodes=, "
        "infinite). 'level move-time=X' becomes N moves in ceil(N*X/60) minutes (N from 40 "
        "to 80, as close to X a move as whole minutes allow: move-time=1 is 60 moves in 1 "
        "minute); 'level time=T moves=N inc=I' T plus the increments rounded down to "
        "minutes, and N. See docs/hub.md.",
    ),
    grace: float = typer.Option(
        2.0,
        "--grace",
        help="Seconds past the engine's time on the clock it was offered (the GAMEREQ's) "
        "before it counts as out of time: its game is ended (GAMEEND) and dxserial answers "
        "the client with a move of its own, saying so.",
    ),
    answer_timeout: float = typer.Option(
        10.0,
        "--answer-timeout",
        help="Seconds the engine gets to answer a GAMEREQ, or a GAMEEND (after the search it "
        "may be busy with); a go that waited that long starts over on a fresh connection.",
    ),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help=HUB_VERBOSE_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=HUB_QUIET_HELP),
) -> None:
    """Be a Hub engine (stdin/stdout) that plays each 'go' through the DXP engine at ENDPOINT.

    dxserial is the DXP initiator: a 'pos' that continues the running game is sent as the
    opponent's MOVE, any other starts a game with a GAMEREQ of that position, whose clock
    says what the client's 'level' says; the engine's MOVE is answered as 'done move=...';
    its CHAT becomes 'info text=...'. A 'go' whose game cannot start yet (the engine has not
    answered the last game's GAMEEND) waits for it, then starts over on a fresh connection.
    'stop', the engine's clock run out or an illegal move end the DXP game (GAMEEND) and
    dxserial answers with its own move, saying so. Exit 0 on 'quit' or end of input; 1 when
    the engine is lost.
    """
    configure_logging(verbose - 1 if verbose else 0, quiet or not verbose)
    check_name(name)
    for option, value in (("--grace", grace), ("--answer-timeout", answer_timeout)):
        if not value > 0:
            raise ConfigError(f"{option} {value:g}: must be > 0 seconds")
    if not 1 <= minutes <= 999:
        raise ConfigError(f"--minutes {minutes}: must be 1..999")
    options = link_options(
        link, baud, start_byte, end_byte, echo_timeout, max_attempts, connect_timeout
    )
    where = EngineEndpoint(parse_engine_endpoint(endpoint), options)
    config = AdapterConfig(name=name, minutes=minutes, grace=grace, answer_timeout=answer_timeout)
    result = runtime.run(_run(HubAdapter(config), where, verbose >= 2))
    sys.stdout.flush()
    if result.code:
        print(f"dxserial: error: {result.message}", file=sys.stderr)
    raise typer.Exit(result.code)


async def _run(adapter: HubAdapter, endpoint: EngineEndpoint, log_messages: bool) -> RunResult:
    await endpoint.open_early()
    runner = HubAdapterRunner(adapter, endpoint, log_messages=log_messages)
    with on_signals(runner.stop):
        return await runner.run()
