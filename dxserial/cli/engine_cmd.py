"""``dxserial engine ENDPOINT``: the built-in engine plays DXP on a serial line or TCP.

Its options are made from :data:`~dxserial.cli.engine_settings.SETTINGS`, and checked by it.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.cli.engine_settings import SETTINGS
from dxserial.cli.options import link_kind, parameters
from dxserial.drive.driver import on_signals
from dxserial.engine.hub_mover import HubMover, check_hub_level, hub_name
from dxserial.engine.player import DEFAULT_NAME, Player, PlayerConfig
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.errors import ConfigError
from dxserial.line_settings import check_nulmodem
from dxserial.protocol.links import NulModemSettings
from dxserial.setting import checked
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint
from dxserial.transports.serial import SerialSettings

__all__ = ["engine_command"]


def engine_command(**given: Any) -> None:
    """Play DXP with the built-in engine (a small alpha-beta search) on ENDPOINT.

    Prints a ready line, then one line per game ('game 1: 2-0 (Black has no legal move)').
    Exit code 0 when the session ended normally (stop code 1 exchanged), or on Ctrl-C /
    SIGTERM after at least one game was played to its end; 1 (one-line error) when stopped
    before that, when the link was lost, or when the peer broke the protocol 5 times in a row
    (a single violation is told by CHAT, the game is ended, and the engine plays on).
    """
    configure_logging(given["verbose"], given["quiet"])
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    hub = values["hub"]
    if values["tell_thinking"] and hub is None:
        raise ConfigError("--tell-thinking: needs --hub (only a Hub engine reports its thinking)")
    check_hub_level(values["increment"], values["move_time"], hub is not None)
    nulmodem = NulModemSettings(values["start_byte"], values["end_byte"], values["echo_timeout"],
                                values["max_attempts"], learn_start=values["learn_start"])
    options = LinkOptions(link=link_kind("--link", values["link"]),
                          serial=SerialSettings(baudrate=values["baud"]),
                          nulmodem=check_nulmodem(nulmodem, option=True),
                          connect_timeout=values["connect_timeout"])
    config = PlayerConfig(**{f.name: values[f.name] for f in dataclasses.fields(PlayerConfig)})
    where = EngineEndpoint(parse_engine_endpoint(values["endpoint"]), options)
    mover = (HubMover(hub, depth=config.depth, increment=config.increment,
                      move_time=values["move_time"]) if hub is not None else None)
    try:
        if mover is not None:  # started last: a bad option above leaves no child behind
            hub_id = hub_name(mover.start())
            if config.name == DEFAULT_NAME and hub_id:
                config = dataclasses.replace(config, name=hub_id)
        result = runtime.run(_run(Player(config, mover=mover), where, values["verbose"] >= 1))
    finally:
        if mover is not None:
            mover.close()
    sys.stdout.flush()
    if result.code:
        print(f"dxserial: error: {result.message}", file=sys.stderr)
    raise typer.Exit(result.code)


engine_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("engine")(engine_command)


def _line(text: str) -> None:
    print(text, flush=True)


async def _run(player: Player, endpoint: EngineEndpoint, log_messages: bool) -> RunResult:
    await endpoint.open_early()  # a wrong port fails here, before "engine ready"
    runner = EngineRunner(player, endpoint, log_messages=log_messages, on_line=_line)
    with on_signals(runner.stop):
        return await runner.run()
