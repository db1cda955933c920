"""``dxserial bridge``: a serial-line engine plays a TCP engine through dxserial."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, Literal

import typer

from dxserial import runtime
from dxserial.bridge import Bridge, BridgeConfig
from dxserial.bridge.settings import DEFAULT_PEER_GRACE, DEFAULT_SERIAL_GRACE
from dxserial.cli.app import app
from dxserial.cli.common import (
    QUIET_HELP,
    VERBOSE_HELP,
    configure_logging,
    given_where,
    note_pty_speed,
    option_given,
)
from dxserial.cli.options import (
    baud_option,
    bytesize_option,
    echo_timeout_option,
    end_byte_option,
    link_option,
    max_attempts_option,
    nulmodem_settings,
    parity_option,
    rtscts_option,
    start_byte_option,
    stopbits_option,
    xonxoff_option,
)
from dxserial.config import layered
from dxserial.drive.driver import on_signals
from dxserial.errors import ConfigError
from dxserial.files import output_dir
from dxserial.game.trace import TraceWriter
from dxserial.protocol.dialects import BRIDGE_GAMEEND_TIMEOUT
from dxserial.transports.access import IPNetwork, parse_networks
from dxserial.transports.schemes import address
from dxserial.transports.serial import SerialSettings
from dxserial.transports.tcp import parse_endpoint
from dxserial.wirelog import enabled as wire_enabled
from dxserial.wirelog import log_crossing


@app.command("bridge")
def bridge_command(
    ctx: typer.Context,
    port: str | None = typer.Argument(
        None,
        envvar="DXSERIAL_PORT",
        help="Serial port: /dev/ttyUSB0 (a /dev/serial/by-id/... path survives replugging), "
        "socket://, dosbox://, rfc2217://HOST:PORT ...",
        show_default=False,
    ),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        help="TOML file of these settings (echo_timeout = 1.0 for --echo-timeout).",
        show_default=False,
    ),
    link: str = link_option(env=True),
    listen: str | None = typer.Option(
        None,
        "--listen",
        envvar="DXSERIAL_LISTEN",
        help="Wait for the TCP engine on HOST:PORT (default 127.0.0.1:27531).",
        show_default=False,
    ),
    connect: str | None = typer.Option(
        None,
        "--connect",
        envvar="DXSERIAL_CONNECT",
        help="Connect to a TCP engine on HOST:PORT instead (and reconnect).",
        show_default=False,
    ),
    baud: int = baud_option(env=True),
    bytesize: int = bytesize_option(env=True),
    parity: str = parity_option(env=True),
    stopbits: float = stopbits_option(env=True),
    rtscts: bool = rtscts_option(env=True),
    xonxoff: bool = xonxoff_option(env=True),
    dtr: int | None = typer.Option(
        None,
        "--dtr",
        rich_help_panel="Serial line",
        envvar="DXSERIAL_DTR",
        help="Set DTR to 0 or 1 after opening (default: left as is).",
        show_default=False,
    ),
    rts: int | None = typer.Option(
        None,
        "--rts",
        rich_help_panel="Serial line",
        envvar="DXSERIAL_RTS",
        help="Set RTS to 0 or 1 after opening (default: left as is).",
        show_default=False,
    ),
    start_byte: str = start_byte_option(env=True),
    end_byte: str = end_byte_option(env=True),
    echo_timeout: float = echo_timeout_option(env=True),
    max_attempts: int = max_attempts_option(env=True),
    on_invalid: str = typer.Option(
        "drop",
        "--on-invalid",
        envvar="DXSERIAL_ON_INVALID",
        help="Invalid DXP: 'drop' (default) or 'forward' it; logged.",
        show_default=False,
    ),
    kick_old: bool = typer.Option(
        False,
        "--kick-old",
        rich_help_panel="TCP clients and security",
        envvar="DXSERIAL_KICK_OLD",
        help="A second TCP client replaces the first (else it is refused).",
    ),
    peer_grace: float = typer.Option(
        DEFAULT_PEER_GRACE,
        "--peer-grace",
        rich_help_panel="Sessions",
        envvar="DXSERIAL_PEER_GRACE",
        help=f"Seconds before the game of a TCP engine that left is ended for it "
        f"({DEFAULT_PEER_GRACE:g}).",
        show_default=False,
    ),
    serial_grace: float = typer.Option(
        DEFAULT_SERIAL_GRACE,
        "--serial-grace",
        rich_help_panel="Sessions",
        envvar="DXSERIAL_SERIAL_GRACE",
        help=f"Seconds a vanished or silent serial engine has to come back "
        f"({DEFAULT_SERIAL_GRACE:g}).",
        show_default=False,
    ),
    gameend_timeout: float = typer.Option(
        BRIDGE_GAMEEND_TIMEOUT,
        "--gameend-timeout",
        rich_help_panel="Sessions",
        envvar="DXSERIAL_GAMEEND_TIMEOUT",
        help="Seconds an unanswered GAMEEND waits before the bridge answers it for the "
        f"silent engine ({BRIDGE_GAMEEND_TIMEOUT:g}; 0: never).",
        show_default=False,
    ),
    pass_stop: bool = typer.Option(
        False,
        "--pass-stop",
        rich_help_panel="Stops and restarts",
        envvar="DXSERIAL_PASS_STOP",
        help="Forward a TCP engine's stop code 1 (default: 0).",
    ),
    serial_check: bool = typer.Option(
        True,
        "--serial-check/--no-serial-check",
        rich_help_panel="Stops and restarts",
        envvar="DXSERIAL_SERIAL_CHECK",
        help="End the serial engine's old game on evidence only (default: on).",
        show_default=False,
    ),
    state_dir: str | None = typer.Option(
        None,
        "--state-dir",
        metavar="DIR",
        rich_help_panel="Stops and restarts",
        envvar="DXSERIAL_STATE_DIR",
        help="Keep the serial engine's game state in DIR (docs/bridge.md).",
        show_default=False,
    ),
    allow: list[str] | None = typer.Option(
        None,
        "--allow",
        rich_help_panel="TCP clients and security",
        envvar="DXSERIAL_ALLOW",
        help="Accept TCP and web clients only from these ranges (192.168.1.0/24,...).",
        show_default=False,
    ),
    block_console: bool | None = typer.Option(
        None,
        "--block-console/--allow-console",
        rich_help_panel="TCP clients and security",
        envvar="DXSERIAL_BLOCK_CONSOLE",
        help="Drop CHATs starting with 'console ' (default: unless only on 127.0.0.1).",
        show_default=False,
    ),
    referee: str = typer.Option(
        "warn",
        "--referee",
        envvar="DXSERIAL_REFEREE",
        help="Check moves: 'off', 'warn' (default: log) or 'strict' (block).",
        show_default=False,
    ),
    pdn: str | None = typer.Option(
        None,
        "--pdn",
        envvar="DXSERIAL_PDN",
        help="Write every game as a PDN file into DIR.",
        show_default=False,
    ),
    pdn_notes: bool = typer.Option(
        False,
        "--pdn-notes",
        envvar="DXSERIAL_PDN_NOTES",
        help="PDN with the referee's notes (docs/pdn.md).",
    ),
    trace: str | None = typer.Option(
        None,
        "--trace",
        envvar="DXSERIAL_TRACE",
        help="A JSON line per message and event, to FILE.",
        show_default=False,
    ),
    web: str | None = typer.Option(
        None,
        "--web",
        envvar="DXSERIAL_WEB",
        help="Serve the live page of the game at HOST:PORT (needs dxserial[web]).",
        show_default=False,
    ),
    verbose: int = typer.Option(
        0, "--verbose", "-v", count=True, envvar="DXSERIAL_VERBOSE", help=VERBOSE_HELP
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", envvar="DXSERIAL_QUIET", help=QUIET_HELP),
) -> None:
    """Bridge a DXP engine on a serial port to a DXP engine on TCP.

    Each message crosses byte for byte; only the framing changes. Runs until Ctrl-C or
    SIGTERM. Every option may also be set in the environment (DXSERIAL_BAUD=2400,
    DXSERIAL_REFEREE=strict ...), which the command line overrides, or in --config FILE,
    which both override. docs/commands/bridge.md
    says more (sessions, the referee, the trace).
    """
    given = _merge_config(ctx, config_file, locals())
    port = given["port"]
    link, listen, connect = given["link"], given["listen"], given["connect"]
    baud, bytesize, parity, stopbits = (
        given["baud"],
        given["bytesize"],
        given["parity"],
        given["stopbits"],
    )
    rtscts, xonxoff, dtr, rts = given["rtscts"], given["xonxoff"], given["dtr"], given["rts"]
    start_byte, end_byte = given["start_byte"], given["end_byte"]
    echo_timeout, max_attempts = given["echo_timeout"], given["max_attempts"]
    on_invalid, kick_old, trace = given["on_invalid"], given["kick_old"], given["trace"]
    peer_grace, serial_grace = given["peer_grace"], given["serial_grace"]
    if not (peer_grace >= 0 and serial_grace >= 0):  # "not >=" also refuses nan
        raise ConfigError("--peer-grace and --serial-grace must be >= 0 seconds")
    if not given["gameend_timeout"] >= 0:
        raise ConfigError("--gameend-timeout must be >= 0 seconds")
    referee, pdn = given["referee"], given["pdn"]
    allow_nets = _networks(given["allow"])
    if referee not in ("off", "warn", "strict"):
        raise ConfigError(f"--referee: {referee!r} is not 'off', 'warn' or 'strict'")
    pdn_dir = output_dir(pdn, "PDN folder") if pdn else None
    configure_logging(given["verbose"], given["quiet"])
    if not port:
        raise ConfigError("no serial port: name one (dxserial bridge /dev/ttyUSB0) or set 'port'")
    if option_given(ctx, "baud", baud):
        note_pty_speed(port, baud, given_where(ctx, "baud", "--baud", config_file))
    if link not in ("nulmodem", "nul"):
        raise ConfigError(f"--link: {link!r} is not 'nulmodem' or 'nul'")
    if on_invalid not in ("drop", "forward"):
        raise ConfigError(f"--on-invalid: {on_invalid!r} is not 'drop' or 'forward'")
    if listen is not None and connect is not None:
        raise ConfigError("--listen and --connect exclude each other")
    for name, value in (("--dtr", dtr), ("--rts", rts)):
        if value not in (None, 0, 1):
            raise ConfigError(f"{name}: {value} is not 0 or 1")
    settings = SerialSettings(
        baudrate=baud,
        bytesize=bytesize,
        parity=parity.upper(),
        stopbits=stopbits,
        rtscts=rtscts,
        xonxoff=xonxoff,
        dtr=None if dtr is None else bool(dtr),
        rts=None if rts is None else bool(rts),
    )
    nulmodem = nulmodem_settings(start_byte, end_byte, echo_timeout, max_attempts)
    config = BridgeConfig(
        port=port,
        serial=settings,
        link="nul" if link == "nul" else "nulmodem",
        nulmodem=nulmodem,
        listen=parse_endpoint(address(listen, "--listen", ("tcp", "listen")))
        if listen is not None
        else ("127.0.0.1", 27531),
        connect=parse_endpoint(address(connect, "--connect", ("tcp",)))
        if connect is not None
        else None,
        on_invalid=_on_invalid(on_invalid),
        kick_old=kick_old,
        referee=_referee(referee),
        allow=allow_nets,
        block_console=given["block_console"],
        pdn=pdn_dir,
        pdn_notes=given["pdn_notes"],
        peer_grace=peer_grace,
        serial_grace=serial_grace,
        gameend_timeout=given["gameend_timeout"],
        pass_stop=given["pass_stop"],
        serial_check=given["serial_check"],
        state_dir=Path(given["state_dir"]) if given["state_dir"] else None,
    )
    writer = TraceWriter(Path(trace)) if trace is not None else None
    try:
        runtime.run(_run(config, writer, given["web"]))
    finally:
        if writer is not None:
            writer.close()


# The settings a config file may hold, with their types (option names, "_" for "-").
CONFIG_KEYS: dict[str, type] = {
    "port": str,
    "link": str,
    "listen": str,
    "connect": str,
    "baud": int,
    "bytesize": int,
    "parity": str,
    "stopbits": float,
    "rtscts": bool,
    "xonxoff": bool,
    "dtr": int,
    "rts": int,
    "start_byte": str,
    "end_byte": str,
    "echo_timeout": float,
    "max_attempts": int,
    "on_invalid": str,
    "referee": str,
    "allow": str,
    "block_console": bool,
    "pdn": str,
    "pdn_notes": bool,
    "kick_old": bool,
    "peer_grace": float,
    "serial_grace": float,
    "gameend_timeout": float,
    "pass_stop": bool,
    "serial_check": bool,
    "state_dir": str,
    "trace": str,
    "web": str,
    "verbose": int,
    "quiet": bool,
}


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


def _networks(values: list[str] | str | None) -> tuple[IPNetwork, ...]:
    """Address ranges from --allow (repeated or comma-separated) or the config's string."""
    return parse_networks(values)


def _referee(value: str) -> Literal["off", "warn", "strict"]:
    return "off" if value == "off" else "strict" if value == "strict" else "warn"


def _on_invalid(value: str) -> Literal["drop", "forward"]:
    return "forward" if value == "forward" else "drop"


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
