"""The serial line's and NULMODEM's settings, declared once for every command and file
that sets them (``bridge`` and its files, ``serve``'s rig lines, ``engine``, ``match``,
``selftest`` ...): the option, the key, the help and the check come from here."""

from __future__ import annotations

from typing import Any

from dxserial.errors import ConfigError
from dxserial.protocol.links import NulModemSettings
from dxserial.setting import Setting
from dxserial.transports.serial import SerialSettings

__all__ = ["BAUD", "LINK", "LINK_KINDS", "NULMODEM_LINE", "SERIAL_LINE", "parse_byte"]

#: The help panels the options appear in, unless a command groups them otherwise.
NULMODEM_PANEL = "NULMODEM handshake"
SERIAL_PANEL = "Serial line"

_SERIAL = SerialSettings()
_NULMODEM = NulModemSettings()
LINK_KINDS = ("nulmodem", "nul")


def parse_byte(value: Any, name: str) -> int:
    """A byte written as 0x02, 2 or a single character."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        text = str(value)
        try:
            number = int(text, 0)
        except ValueError:
            if len(text) != 1:
                raise ConfigError(f"{value!r} is not a byte (e.g. 0x02)") from None
            number = ord(text)
    if not 0 <= number <= 0xFF:
        raise ConfigError(f"{value!r} is not in 0..255")
    return number


def _zero_one(value: Any, name: str) -> bool:
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise ConfigError(f"{value!r} is not 0 or 1")


def _upper(value: Any, name: str) -> str:
    return str(value).upper()


LINK = Setting(
    "link", "nulmodem", "Layer 1 on a serial line: 'nulmodem' (the echo handshake; default) or "
    "'nul'. TCP: NUL.", choices=LINK_KINDS, about='layer 1 on the serial line: "nulmodem" or '
    '"nul"')
BAUD = Setting(
    "baud", _SERIAL.baudrate, f"Serial line speed (default {_SERIAL.baudrate}, DXP's); a "
    "'dxserial vpair' end follows it only when the pair runs with --termios.", kind=int,
    into="baudrate", about="the serial line's speed")

#: The serial line's framing and flow control (the defaults are in the help text, since the
#: bridge's may come from its environment or configuration file).
SERIAL_LINE = (
    BAUD,
    Setting("bytesize", _SERIAL.bytesize, "Data bits: 5, 6, 7 or 8 (default 8).", kind=int,
            panel=SERIAL_PANEL, about="data bits: 5, 6, 7 or 8"),
    Setting("parity", _SERIAL.parity, "Parity: N (default), E, O, S or M.", parse=_upper,
            panel=SERIAL_PANEL, about="N, E, O, S or M"),
    Setting("stopbits", _SERIAL.stopbits, "Stop bits: 1 (default), 1.5 or 2.", kind=float,
            panel=SERIAL_PANEL, example="1", about="1, 1.5 or 2"),
    Setting("rtscts", _SERIAL.rtscts, "Hardware (RTS/CTS) flow control.", kind=bool,
            panel=SERIAL_PANEL, show_default=True, about="hardware flow control"),
    Setting("xonxoff", _SERIAL.xonxoff, "Software (XON/XOFF) flow control.", kind=bool,
            panel=SERIAL_PANEL, show_default=True, about="software flow control"),
    Setting("dtr", None, "Set DTR to 0 or 1 after opening (default: left as is).", kind=int,
            accepts=(bool,), parse=_zero_one, panel=SERIAL_PANEL, example="1"),
    Setting("rts", None, "Set RTS to 0 or 1 after opening (default: left as is).", kind=int,
            accepts=(bool,), parse=_zero_one, panel=SERIAL_PANEL, example="1"),
)

#: The NULMODEM echo handshake.
NULMODEM_LINE = (
    Setting("start_byte", _NULMODEM.start, "NULMODEM start character S (also learnt from a "
            "peer that speaks first).", parse=parse_byte, into="start",
            cli_default=f"0x{_NULMODEM.start:02x}", panel=NULMODEM_PANEL, show_default=True,
            accepts=(int,), about="NULMODEM start character"),
    Setting("end_byte", _NULMODEM.end, "NULMODEM end character E.", parse=parse_byte,
            into="end", cli_default=f"0x{_NULMODEM.end:02x}", panel=NULMODEM_PANEL,
            show_default=True, accepts=(int,), about="NULMODEM end character"),
    Setting("echo_timeout", _NULMODEM.timeout, "NULMODEM: seconds to wait for an echo before "
            "starting over.", kind=float, minimum=0, above=True, into="timeout",
            panel=NULMODEM_PANEL, show_default=True,
            about="NULMODEM: seconds to wait for an echo"),
    Setting("max_attempts", _NULMODEM.max_attempts, "NULMODEM: failed attempts in a row before "
            "the link is down.", kind=int, minimum=1, panel=NULMODEM_PANEL, show_default=True),
)


def check_nulmodem(settings: NulModemSettings, *, option: bool) -> NulModemSettings:
    """The one check across two NULMODEM settings: its start and end bytes differ."""
    if settings.start == settings.end:
        start, end = NULMODEM_LINE[0], NULMODEM_LINE[1]
        names = (start.flag, end.flag) if option else (start.key, end.key)
        raise ConfigError(f"{names[0]} and {names[1]} must differ")
    return settings
