"""The options several commands share, declared once: layer 1, NULMODEM, the serial line, --web.

``bridge``, ``engine``, ``match``, ``hub`` and ``tournament`` speak NULMODEM or NUL on a
serial line; ``bridge`` and ``selftest`` also set the line's framing.  Each takes these
options from here, so an option means the same and says so in the same words on every
command.  Each factory makes a fresh ``typer.Option`` (a command may put it in a help panel
of its own, and ``bridge`` also reads it from the environment); the checks that turn the
strings into settings are here as well.
"""

from __future__ import annotations

from typing import Any

import typer

from dxserial.errors import ConfigError
from dxserial.protocol.links import NulModemSettings
from dxserial.transports.endpoints import LinkKind, LinkOptions
from dxserial.transports.serial import SerialSettings

#: The help panels the options appear in, unless a command groups them otherwise.
NULMODEM_PANEL = "NULMODEM handshake"
SERIAL_PANEL = "Serial line"

START_BYTE_HELP = "NULMODEM start character S (also learnt from a peer that speaks first)."
END_BYTE_HELP = "NULMODEM end character E."
ECHO_TIMEOUT_HELP = "NULMODEM: seconds to wait for an echo before starting over."
MAX_ATTEMPTS_HELP = "NULMODEM: failed attempts in a row before the link is down."

LINK_HELP = "Layer 1 on a serial line: 'nulmodem' (the echo handshake; default) or 'nul'. TCP: NUL."
BAUD_HELP = (
    "Serial line speed (default 9600, DXP's); a 'dxserial vpair' end follows it only when the "
    "pair runs with --termios."
)
ENDPOINT_HELP = (
    "Where the peer is: a serial port (/dev/ttyUSB0, a 'dxserial vpair' end, socket://HOST:PORT "
    "...) spoken to with --link; tcp://HOST:PORT to connect; listen://HOST:PORT to wait for "
    "one peer (port 0: a free port, printed on the ready line)."
)


def start_byte_option(panel: str | None = NULMODEM_PANEL, *, env: bool = False) -> Any:
    return _option("0x02", "--start-byte", START_BYTE_HELP, panel, env)


def end_byte_option(panel: str | None = NULMODEM_PANEL, *, env: bool = False) -> Any:
    return _option("0x03", "--end-byte", END_BYTE_HELP, panel, env)


def echo_timeout_option(panel: str | None = NULMODEM_PANEL, *, env: bool = False) -> Any:
    return _option(5.0, "--echo-timeout", ECHO_TIMEOUT_HELP, panel, env)


def max_attempts_option(panel: str | None = NULMODEM_PANEL, *, env: bool = False) -> Any:
    return _option(5, "--max-attempts", MAX_ATTEMPTS_HELP, panel, env)


def link_option(panel: str | None = None, *, env: bool = False) -> Any:
    return _option("nulmodem", "--link", LINK_HELP, panel, env, False)


def baud_option(panel: str | None = None, *, env: bool = False) -> Any:
    return _option(9600, "--baud", BAUD_HELP, panel, env, False)


# The serial line's framing and flow control (bridge, selftest); the defaults are in the
# help text, since the bridge's may come from its environment or configuration file.


def bytesize_option(panel: str | None = SERIAL_PANEL, *, env: bool = False) -> Any:
    return _option(8, "--bytesize", "Data bits: 5, 6, 7 or 8 (default 8).", panel, env, False)


def parity_option(panel: str | None = SERIAL_PANEL, *, env: bool = False) -> Any:
    return _option("N", "--parity", "Parity: N (default), E, O, S or M.", panel, env, False)


def stopbits_option(panel: str | None = SERIAL_PANEL, *, env: bool = False) -> Any:
    return _option(1, "--stopbits", "Stop bits: 1 (default), 1.5 or 2.", panel, env, False)


def rtscts_option(panel: str | None = SERIAL_PANEL, *, env: bool = False) -> Any:
    return _option(False, "--rtscts", "Hardware (RTS/CTS) flow control.", panel, env)


def xonxoff_option(panel: str | None = SERIAL_PANEL, *, env: bool = False) -> Any:
    return _option(False, "--xonxoff", "Software (XON/XOFF) flow control.", panel, env)


# The live view of a director's games (match, tournament; the bridge's --web is its own).


def web_option() -> Any:
    return typer.Option(
        None,
        "--web",
        help="Serve a live view of the games at HOST:PORT (needs dxserial[web]).",
        show_default=False,
    )


def allow_option() -> Any:
    return typer.Option(
        [], "--allow", help="With --web: networks that may connect (CIDR; repeatable)."
    )


def _option(
    default: object, flag: str, help: str, panel: str | None, env: bool, show_default: bool = True
) -> Any:
    """One option; ``env``: also read from DXSERIAL_NAME (``--echo-timeout``: ..._ECHO_TIMEOUT)."""
    envvar = "DXSERIAL_" + flag[2:].replace("-", "_").upper() if env else None
    return typer.Option(
        default,
        flag,
        rich_help_panel=panel,
        envvar=envvar,
        help=help,
        show_default=show_default,
    )


def parse_byte(option: str, text: str) -> int:
    """A byte value written as 0x02, 2 or a single character."""
    try:
        value = int(text, 0)
    except ValueError:
        if len(text) == 1:
            value = ord(text)
        else:
            raise ConfigError(f"{option}: {text!r} is not a byte (e.g. 0x02)") from None
    if not 0 <= value <= 0xFF:
        raise ConfigError(f"{option}: {text!r} is not in 0..255")
    return value


def nulmodem_settings(
    start_byte: str,
    end_byte: str,
    echo_timeout: float,
    max_attempts: int,
    *,
    learn_start: bool = True,
) -> NulModemSettings:
    """The NULMODEM options every command that speaks the handshake takes, checked."""
    settings = NulModemSettings(
        start=parse_byte("--start-byte", start_byte),
        end=parse_byte("--end-byte", end_byte),
        timeout=echo_timeout,
        max_attempts=max_attempts,
        learn_start=learn_start,
    )
    if settings.start == settings.end:
        raise ConfigError("--start-byte and --end-byte must differ")
    if not echo_timeout > 0 or max_attempts < 1:  # "not > 0" also refuses nan
        raise ConfigError("--echo-timeout must be > 0 and --max-attempts >= 1")
    return settings


def link_options(
    link: str,
    baud: int,
    start_byte: str,
    end_byte: str,
    echo_timeout: float,
    max_attempts: int,
    connect_timeout: float,
    *,
    learn_start: bool = True,
) -> LinkOptions:
    """Check the layer-1 options of the commands that open engine endpoints."""
    nulmodem = nulmodem_settings(
        start_byte, end_byte, echo_timeout, max_attempts, learn_start=learn_start
    )
    if not connect_timeout > 0:  # also refuses nan, which would wait forever
        raise ConfigError("--connect-timeout must be > 0")
    return LinkOptions(
        link=link_kind("--link", link),
        serial=SerialSettings(baudrate=baud),
        nulmodem=nulmodem,
        connect_timeout=connect_timeout,
    )


def link_kind(option: str, value: str) -> LinkKind:
    if value == "nul":
        return "nul"
    if value == "nulmodem":
        return "nulmodem"
    raise ConfigError(f"{option}: {value!r} is not 'nulmodem' or 'nul'")
