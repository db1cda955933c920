"""The options several commands share, declared once: the NULMODEM handshake and layer 1.

``bridge``, ``engine``, ``match``, ``hub`` and ``tournament`` speak NULMODEM on a serial line;
each takes these options from here, so an option means the same and says so in the same
words on every command.  Each factory makes a fresh ``typer.Option`` (a command may put it in
its own help panel, and ``bridge`` reads it from the environment too); the checks that turn
the strings into settings are here as well.
"""

from __future__ import annotations

from typing import Any

import typer

from dxserial.errors import ConfigError
from dxserial.protocol.links import NulModemSettings
from dxserial.transports.endpoints import LinkKind, LinkOptions
from dxserial.transports.serial import SerialSettings

#: The help panel the NULMODEM options appear in, unless a command groups them otherwise.
NULMODEM_PANEL = "NULMODEM handshake"

START_BYTE_HELP = "NULMODEM start character S (also learnt from a peer that speaks first)."
END_BYTE_HELP = "NULMODEM end character E."
ECHO_TIMEOUT_HELP = "NULMODEM: seconds to wait for an echo before starting over."
MAX_ATTEMPTS_HELP = "NULMODEM: failed attempts in a row before the link is down."

ENDPOINT_HELP = (
    "Where the peer is: a serial port (/dev/ttyUSB0, a 'dxserial vpair' end, socket://HOST:PORT "
    "...) spoken to with --link; tcp://HOST:PORT to connect; listen://HOST:PORT to wait for "
    "one peer (port 0: a free port, printed on the ready line)."
)


def start_byte_option(panel: str | None = NULMODEM_PANEL, envvar: str | None = None) -> Any:
    return typer.Option(
        "0x02", "--start-byte", rich_help_panel=panel, envvar=envvar, help=START_BYTE_HELP
    )


def end_byte_option(panel: str | None = NULMODEM_PANEL, envvar: str | None = None) -> Any:
    return typer.Option(
        "0x03", "--end-byte", rich_help_panel=panel, envvar=envvar, help=END_BYTE_HELP
    )


def echo_timeout_option(panel: str | None = NULMODEM_PANEL, envvar: str | None = None) -> Any:
    return typer.Option(
        5.0, "--echo-timeout", rich_help_panel=panel, envvar=envvar, help=ECHO_TIMEOUT_HELP
    )


def max_attempts_option(panel: str | None = NULMODEM_PANEL, envvar: str | None = None) -> Any:
    return typer.Option(
        5, "--max-attempts", rich_help_panel=panel, envvar=envvar, help=MAX_ATTEMPTS_HELP
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
