"""Every key of a rig file, with what it means: ``dxserial serve --keys``.

A line's keys are the bridge's (``dxserial bridge --config`` takes the same names), mapped
onto :class:`~dxserial.bridge.settings.BridgeConfig` by :mod:`dxserial.serve.rig`: a key
either names a field of the bridge's settings (``serial_grace``, ``state_dir`` ...) or is one
of the bridge's option names for a nested one (``baud`` for the serial settings' baudrate).
A bridge setting added later is a key at once; :data:`LINE` says here what it means (a key
not described here is shown as "a bridge setting").
"""

from __future__ import annotations

from dxserial.bridge.settings import (
    DEFAULT_PEER_GRACE,
    DEFAULT_SERIAL_GRACE,
    DEFAULT_SILENT_SLOT,
)
from dxserial.protocol.dialects import BRIDGE_GAMEEND_TIMEOUT

#: Top-level key -> (example value as TOML, what it means).
TOP: dict[str, tuple[str, str]] = {
    "web": ('"127.0.0.1:8080"', "one live page of every line (needs dxserial[web]; --web wins)"),
    "web_allow": ('["192.168.1.0/24"]', "with web: networks whose browsers may connect"),
    "status": ('"/run/dxserial/lab.sock"', "the status socket (default: the runtime folder)"),
}

#: Keys of each [lines.NAME] table (and of [defaults], but for the port and the address).
LINE: dict[str, tuple[str, str]] = {
    "port": ('"/dev/dxserial/ftdi-A1B2C3"', "required (or serial_number): a device, a udev "
             "link, socket:// ..."),
    "serial_number": ('"A1B2C3D4"', "instead of port: the USB adapter with this serial number"),
    "listen": ('"0.0.0.0:27531"', "wait for the TCP engine on HOST:PORT (one of listen and "
               "connect)"),
    "connect": ('"10.0.0.22:27531"', "or connect to a TCP engine there (and reconnect)"),
    "link": ('"nulmodem"', 'layer 1 on the serial line: "nulmodem" or "nul"'),
    "baud": ("9600", "the serial line's speed"),
    "bytesize": ("8", "data bits: 5, 6, 7 or 8"),
    "parity": ('"N"', "N, E, O, S or M"),
    "stopbits": ("1", "1, 1.5 or 2"),
    "rtscts": ("false", "hardware flow control"),
    "xonxoff": ("false", "software flow control"),
    "dtr": ("1", "set DTR to 0 or 1 after opening (default: left as is)"),
    "rts": ("1", "set RTS to 0 or 1 after opening (default: left as is)"),
    "start_byte": ('"0x02"', "NULMODEM start character"),
    "end_byte": ('"0x03"', "NULMODEM end character"),
    "echo_timeout": ("5.0", "NULMODEM: seconds to wait for an echo"),
    "max_attempts": ("5", "NULMODEM: failed attempts in a row before the link is down"),
    "referee": ('"warn"', 'check moves: "off", "warn" or "strict"'),
    "on_invalid": ('"drop"', 'invalid DXP: "drop" or "forward"'),
    "pdn": ('"/var/lib/dxserial/games/{line}"', "a PDN file per game in this folder ({line}: "
            "the line's name)"),
    "pdn_notes": ("false", "with pdn: the referee's notes in the PDN too (docs/pdn.md)"),
    "trace": ('"/var/log/dxserial/{line}.jsonl"', "a JSON line per message and event"),
    "allow": ('"192.168.1.0/24"', "TCP clients only from these ranges"),
    "block_console": ("true", "drop CHATs starting with 'console ' (default: unless on "
                      "loopback)"),
    "kick_old": ("false", "a second TCP client replaces the first"),
    "silent_slot": (f"{DEFAULT_SILENT_SLOT:g}", "seconds a TCP client that has sent nothing, "
                    "with no game open, keeps the slot from the next one (0: for ever)"),
    "peer_grace": (f"{DEFAULT_PEER_GRACE:g}", "seconds before a departed TCP engine's game "
                   "is ended"),
    "serial_grace": (f"{DEFAULT_SERIAL_GRACE:g}", "seconds a vanished serial engine has to "
                     "come back"),
    "gameend_timeout": (f"{BRIDGE_GAMEEND_TIMEOUT:g}", "seconds an unanswered GAMEEND waits "
                        "(0: never)"),
    "pass_stop": ("false", "forward a TCP engine's stop code 1 to the serial engine"),
    "serial_check": ("true", "end a game the serial engine may have open, on evidence"),
    "state_dir": ('"/var/lib/dxserial/state"', "where the record of the serial engine's game "
                  "is kept across runs"),
    "max_pending": ("32768", "messages held per direction before they count as lost"),
    "reopen_interval": ("0.2", "seconds between attempts to reopen a vanished port"),
    "reconnect_interval": ("1.0", "with connect: seconds between attempts"),
    "shutdown_grace": ("1.0", "seconds for messages in flight at a stop"),
}

#: Keys described ahead of the bridge setting they map onto (none now).
AHEAD: frozenset[str] = frozenset()
#: Keys only a line may have: what makes it this line.
OWN = frozenset({"port", "serial_number", "listen", "connect"})
#: Shown commented out in the example: each excludes another, or is rarely wanted.
COMMENTED = frozenset({
    "serial_number", "connect", "dtr", "rts", "trace", "allow", "block_console", "state_dir",
    "max_pending", "reopen_interval", "reconnect_interval", "shutdown_grace",
})


def about(key: str) -> tuple[str, str]:
    """The example and meaning of a line key (a bridge setting added later: generic)."""
    return LINE.get(key, ("...", "a bridge setting (dxserial bridge --help)"))


def example(line_keys: list[str] | None = None) -> str:
    """A commented rig file with every key (``line_keys``: those the reader takes)."""
    keys = line_keys if line_keys is not None else list(LINE)
    table = {key: about(key) for key in keys}
    width = max(len(f"{k} = {v}") for t in (TOP, table) for k, (v, _) in t.items()) + 2

    def lines(entries: dict[str, tuple[str, str]], commented: frozenset[str]) -> list[str]:
        return [
            f"{'# ' if k in commented else ''}{f'{k} = {v}'.ljust(width)}  # {meaning}"
            for k, (v, meaning) in entries.items()
        ]

    return "\n".join([
        "# A rig file (TOML): every serial line of this host, bridged by `dxserial serve`.",
        *lines(TOP, frozenset({"web_allow", "status"})), "",
        "[defaults]                     # optional: any line key but port, serial_number, "
        "listen, connect",
        'referee = "warn"', "",
        "[lines.NAME]                   # one table per line; NAME: letters, digits, - and _",
        *lines(table, COMMENTED),
    ])


__all__ = ["AHEAD", "COMMENTED", "LINE", "OWN", "TOP", "about", "example"]
