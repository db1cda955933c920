"""``dxserial bridge``: a serial-line engine plays a TCP engine through dxserial."""

from __future__ import annotations

import dataclasses
import inspect
import logging
import sys
from pathlib import Path
from typing import Any

import typer

from dxserial import runtime
from dxserial.bridge import Bridge, BridgeConfig
from dxserial.bridge.settings import bridge_config
from dxserial.cli.app import app
from dxserial.cli.common import (
    QUIET_HELP,
    VERBOSE_HELP,
    configure_logging,
    given_where,
    note_pty_speed,
    option_given,
)
from dxserial.cli.options import annotation, option
from dxserial.config import layered
from dxserial.drive.driver import on_signals
from dxserial.errors import ConfigError
from dxserial.files import output_dir
from dxserial.game.trace import TraceWriter
from dxserial.setting import Setting, declared
from dxserial.wirelog import enabled as wire_enabled
from dxserial.wirelog import log_crossing

#: The command's own settings: keys of ``--config`` too, but not the bridge's object.
OWN = (
    Setting("trace", None, "A JSON line per message and event, to FILE."),
    Setting("web", None, "Serve the live page of the game at HOST:PORT (needs dxserial[web])."),
    Setting("verbose", 0, VERBOSE_HELP, kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
    Setting("quiet", False, QUIET_HELP, kind=bool, flags=("--quiet", "-q"), show_default=True),
)
#: Every option of ``dxserial bridge``, in the order of its --help (the bridge's settings,
#: then the command's own).
SETTINGS = (*(one for one in declared(BridgeConfig) if one.option), *OWN)
#: The settings a config file may hold, with their types (option names, "_" for "-"): every
#: option, and the bridge's tuning knobs that are no option (as in a rig file's lines).
CONFIG_KEYS: dict[str, type] = {
    one.key: one.kind for one in (*declared(BridgeConfig), *OWN)
}
_BY_KEY = {one.key: one for one in SETTINGS}


def bridge_command(ctx: typer.Context, **given: Any) -> None:
    """Bridge a DXP engine on a serial port to a DXP engine on TCP.

    Each message crosses byte for byte; only the framing changes. Runs until Ctrl-C or
    SIGTERM. Every option may also be set in the environment (DXSERIAL_BAUD=2400,
    DXSERIAL_REFEREE=strict ...), which the command line overrides, or in --config FILE,
    which both override. docs/commands/bridge.md
    says more (sessions, the referee, the trace).
    """
    knobs = {key: None for key in CONFIG_KEYS if key not in given}  # file keys only
    config_file = given.pop("config_file")
    given = _merge_config(ctx, config_file, {**knobs, **given})
    configure_logging(given["verbose"], given["quiet"])
    if not given["port"]:
        raise ConfigError("no serial port: name one (dxserial bridge /dev/ttyUSB0) or set 'port'")
    if option_given(ctx, "baud", given["baud"]):
        note_pty_speed(given["port"], given["baud"],
                       given_where(ctx, "baud", "--baud", config_file))
    config = bridge_config(given, option=True)
    if config.pdn is not None:
        config = dataclasses.replace(config, pdn=output_dir(config.pdn, "PDN folder"))
    trace = given["trace"]
    writer = TraceWriter(Path(trace)) if trace is not None else None
    try:
        runtime.run(_run(config, writer, given["web"]))
    finally:
        if writer is not None:
            writer.close()


def _parameters() -> list[inspect.Parameter]:
    """The command's signature, made from :data:`SETTINGS` (typer reads it as any other)."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    port = _BY_KEY["port"]
    params = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          annotation=typer.Context),
        inspect.Parameter("port", keyword, annotation=str | None, default=typer.Argument(
            None, envvar=port.envvar, help=port.help, show_default=False)),
        inspect.Parameter("config_file", keyword, annotation=Path | None, default=typer.Option(
            None, "--config", show_default=False,
            help="TOML file of these settings (echo_timeout = 1.0 for --echo-timeout).")),
    ]
    for one in SETTINGS:
        if not one.argument:
            params.append(inspect.Parameter(one.key, keyword, annotation=annotation(one),
                                            default=option(one, env=True)))
    return params


bridge_command.__signature__ = inspect.Signature(_parameters())  # type: ignore[attr-defined]
app.command("bridge")(bridge_command)


def _merge_config(
    ctx: typer.Context, config_file: Path | None, values: dict[str, Any]
) -> dict[str, Any]:
    """Command line over environment over file over defaults (see config.layered)."""
    explicit = set()
    for key in CONFIG_KEYS:
        # By name: typer may carry its own copy of click and so its own enum class.
        source = ctx.get_parameter_source(key)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            explicit.add(key)
    return layered(values, explicit, config_file, CONFIG_KEYS)


async def _run(config: BridgeConfig, writer: TraceWriter | None, web: str | None) -> None:
    def say(line: str) -> None:
        print(line, flush=True)

    # The web view's address is told with the ready line, once the serial port is open: a
    # port that cannot be opened ends in its one-line error, not after a URL that goes dead.
    held: list[str] = []

    def ready(line: str) -> None:
        for text in held:
            say(text)
        held.clear()
        say(line)

    server = None
    try:
        if web is not None:
            from dxserial.live.web import start_web

            # The page shows the engines' game: whoever may join it may watch it.
            allow = [str(network) for network in config.allow]
            server = await start_web(web, allow, held.append, f"dxserial bridge {config.port}")
        bridge = Bridge(
            config, trace=writer, on_ready=ready,
            watch=server.publish if server is not None else None,
            observer=log_crossing if wire_enabled() else None,
        )
        with on_signals(bridge.stop):
            await bridge.run()
    finally:
        if server is not None:
            await server.close()
    logging.getLogger("dxserial.bridge").debug("counters: %s", bridge.counters)
    sys.stdout.flush()
