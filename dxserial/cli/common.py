"""Small helpers shared by the commands: logging set-up and option parsing."""

from __future__ import annotations

import logging
import sys

import typer

from dxserial.errors import ConfigError
from dxserial.protocol.links import NulModemSettings
from dxserial.transports.serial import is_pseudo_terminal


def configure_logging(verbose: int, quiet: bool) -> None:
    """Log to stderr, one line per event, with a timestamp a person can line up with traces."""
    level = logging.WARNING if quiet else logging.DEBUG if verbose >= 2 else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter("%(asctime)s.%(msecs)03d %(levelname)s %(message)s", "%H:%M:%S")
    )
    root = logging.getLogger("dxserial")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def option_given(ctx: typer.Context, name: str, value: object) -> bool:
    """True when the user set option ``name``: command line, environment or config file."""
    source = ctx.get_parameter_source(name)
    if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
        return True
    default = next((p.default for p in ctx.command.params if p.name == name), None)
    return value != default  # a config file changed it


def note_pty_speed(port: str, baud: int) -> None:
    """Say that --baud does nothing on a pty, rather than accept it silently."""
    if is_pseudo_terminal(port):
        logging.getLogger("dxserial").warning(
            "%s is a pseudo-terminal: it ignores --baud %d (a dxserial vpair sets the line "
            "speed with its own --baud, or follows this one when it runs with --termios)",
            port,
            baud,
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
