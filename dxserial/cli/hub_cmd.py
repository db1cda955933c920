"""``dxserial hub ENDPOINT``: a DXP engine (a DOS program on a cable, Scan 2.0 ...) as a Hub
engine, for Hub GUIs and pydraughts/lidraughts bots."""

from __future__ import annotations

import inspect
import sys
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.cli.hub_settings import SETTINGS
from dxserial.cli.options import checked_link_options, parameters
from dxserial.drive.driver import on_signals
from dxserial.engine.runner import RunResult
from dxserial.hub.adapter import AdapterConfig, HubAdapter
from dxserial.hub.runner import HubAdapterRunner
from dxserial.setting import checked
from dxserial.transports.endpoints import EngineEndpoint, parse_engine_endpoint


def hub_command(**given: Any) -> None:
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
    verbose = given["verbose"]
    configure_logging(verbose - 1 if verbose else 0, given["quiet"] or not verbose)
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    options = checked_link_options(values, values["connect_timeout"])
    where = EngineEndpoint(parse_engine_endpoint(values["endpoint"]), options)
    config = AdapterConfig(name=values["name"], minutes=values["minutes"],
                           grace=values["grace"], answer_timeout=values["answer_timeout"])
    result = runtime.run(_run(HubAdapter(config), where, verbose >= 2))
    sys.stdout.flush()
    if result.code:
        print(f"dxserial: error: {result.message}", file=sys.stderr)
    raise typer.Exit(result.code)


hub_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("hub")(hub_command)


async def _run(adapter: HubAdapter, endpoint: EngineEndpoint, log_messages: bool) -> RunResult:
    await endpoint.open_early()
    runner = HubAdapterRunner(adapter, endpoint, log_messages=log_messages)
    with on_signals(runner.stop):
        return await runner.run()
