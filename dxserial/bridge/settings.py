"""Everything a bridge is told, as one dataclass whose fields are its settings.

Each field a user may set carries its :class:`~dxserial.setting.Setting` (option, help,
default, choices, check): ``dxserial bridge``'s options, the keys of ``--config`` and of a
rig file's lines, ``serve --keys`` and the options table of docs/commands/bridge.md all
come from here, so a new bridge setting is one field below (docs/settings.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dxserial.errors import ConfigError
from dxserial.line_settings import LINK, NULMODEM_LINE, SERIAL_LINE, check_nulmodem
from dxserial.protocol.dialects import BRIDGE_GAMEEND_TIMEOUT
from dxserial.protocol.links import LinkKind, NulModemSettings
from dxserial.setting import build, nested, setting
from dxserial.transports.access import IPNetwork, parse_networks
from dxserial.transports.schemes import address
from dxserial.transports.serial import SerialSettings
from dxserial.transports.tcp import DEFAULT_HOST, DXP_PORT, parse_endpoint

DEFAULT_PEER_GRACE = 3.0
DEFAULT_SERIAL_GRACE = 30.0
DEFAULT_SILENT_SLOT = 60.0
#: Where the bridge waits for its TCP engine unless told otherwise.
DEFAULT_LISTEN = (DEFAULT_HOST, DXP_PORT)

#: The help panels of ``dxserial bridge --help``.
CLIENTS = "TCP clients and security"
SESSIONS = "Sessions"
RESTARTS = "Stops and restarts"


def _listen(value: Any, name: str) -> tuple[str, int]:
    return parse_endpoint(address(value, name, ("tcp", "listen")))


def _connect(value: Any, name: str) -> tuple[str, int]:
    return parse_endpoint(address(value, name, ("tcp",)))


def _networks(value: Any, name: str) -> tuple[IPNetwork, ...]:
    return parse_networks(value)


def _path(value: Any, name: str) -> Path:
    return Path(value)


@dataclass
class BridgeConfig:
    port: str = setting(
        argument=True,
        help="Serial port: /dev/ttyUSB0 (a /dev/serial/by-id/... path survives replugging), "
        "socket://, dosbox://, rfc2217://HOST:PORT ...",
        example='"/dev/dxserial/ftdi-A1B2C3"',
        about="required (or serial_number): a device, a udev link, socket:// ...",
    )
    link: LinkKind = setting(LINK.default, like=LINK)
    listen: tuple[str, int] | None = setting(
        DEFAULT_LISTEN, parse=_listen,
        help=f"Wait for the TCP engine on HOST:PORT (default {DEFAULT_HOST}:{DXP_PORT}).",
        example=f'"0.0.0.0:{DXP_PORT}"',
        about="wait for the TCP engine on HOST:PORT (one of listen and connect)",
    )
    connect: tuple[str, int] | None = setting(
        None, parse=_connect,
        help="Connect to a TCP engine on HOST:PORT instead (and reconnect).",
        example=f'"10.0.0.22:{DXP_PORT}"',
        about="or connect to a TCP engine there (and reconnect)",
    )
    serial: SerialSettings = nested(SerialSettings, SERIAL_LINE)
    nulmodem: NulModemSettings = nested(NulModemSettings, NULMODEM_LINE)
    on_invalid: Literal["drop", "forward"] = setting(
        "drop", choices=("drop", "forward"),
        help="Invalid DXP: 'drop' (default) or 'forward' it; logged.",
        about='invalid DXP: "drop" or "forward"',
    )
    kick_old: bool = setting(
        False, kind=bool, panel=CLIENTS, show_default=True,
        help="A second TCP client replaces the first (else it is refused).",
    )
    # A TCP client that has sent nothing for this long, with no game open, gives the only
    # slot up to the next client (docs/bridge.md, "One slot"; 0: never).
    silent_slot: float = setting(
        DEFAULT_SILENT_SLOT, kind=float, minimum=0, option=False,
        help="Seconds a TCP client that has sent nothing, with no game open, keeps the only "
        f"slot from the next one ({DEFAULT_SILENT_SLOT:g}; 0: for ever).",
        example=f"{DEFAULT_SILENT_SLOT:g}",
        about="seconds a TCP client that has sent nothing, with no game open, keeps the slot "
        "from the next one (0: for ever)",
    )
    # A TCP engine that leaves mid-game has this long before the bridge closes its game.
    peer_grace: float = setting(
        DEFAULT_PEER_GRACE, kind=float, minimum=0, panel=SESSIONS,
        help=f"Seconds before the game of a TCP engine that left is ended for it "
        f"({DEFAULT_PEER_GRACE:g}).",
        example=f"{DEFAULT_PEER_GRACE:g}",
        about="seconds before a departed TCP engine's game is ended",
    )
    # A serial port that vanished has this long to come back before its engine counts as
    # gone (its pending messages lost, its game closed towards the TCP engine).
    serial_grace: float = setting(
        DEFAULT_SERIAL_GRACE, kind=float, minimum=0, panel=SESSIONS,
        help=f"Seconds a vanished or silent serial engine has to come back "
        f"({DEFAULT_SERIAL_GRACE:g}).",
        example=f"{DEFAULT_SERIAL_GRACE:g}",
        about="seconds a vanished serial engine has to come back",
    )
    # A GAMEEND unanswered this long is answered by the bridge for the silent engine (0: never).
    gameend_timeout: float = setting(
        BRIDGE_GAMEEND_TIMEOUT, kind=float, minimum=0, panel=SESSIONS,
        help="Seconds an unanswered GAMEEND waits before the bridge answers it for the "
        f"silent engine ({BRIDGE_GAMEEND_TIMEOUT:g}; 0: never).",
        example=f"{BRIDGE_GAMEEND_TIMEOUT:g}",
        about="seconds an unanswered GAMEEND waits (0: never)",
    )
    # Forward a TCP engine's stop code 1 to the serial engine (default: it ends the TCP
    # engine's session only).
    pass_stop: bool = setting(
        False, kind=bool, panel=RESTARTS, show_default=True,
        help="Forward a TCP engine's stop code 1 (default: 0).",
        about="forward a TCP engine's stop code 1 to the serial engine",
    )
    # End a game the serial engine may have open, on evidence only (bridge/serialcheck.py).
    serial_check: bool = setting(
        True, kind=bool, flags=("--serial-check/--no-serial-check",), panel=RESTARTS,
        help="End the serial engine's old game on evidence only (default: on).",
        about="end a game the serial engine may have open, on evidence",
    )
    # Where the record of the serial engine's game is kept across runs (None: systemd's
    # $STATE_DIRECTORY, else the user's state folder; see bridge/statefile.py).
    state_dir: Path | None = setting(
        None, parse=_path, metavar="DIR", panel=RESTARTS,
        example='"/var/lib/dxserial/state"',
        help="Keep the serial engine's game state in DIR (docs/bridge.md).",
        about="where the record of the serial engine's game is kept across runs",
    )
    # Only clients from these networks may connect (empty: anyone who can reach the port).
    allow: tuple[IPNetwork, ...] = setting(
        (), many=True, parse=_networks, panel=CLIENTS, example='"192.168.1.0/24"',
        help="Accept TCP and web clients only from these ranges (192.168.1.0/24,...).",
        about="TCP clients only from these ranges",
    )
    # Drop CHATs that start with "console " (Moby Dam runs them as commands). None: on
    # when the TCP side listens beyond loopback or connects out.
    block_console: bool | None = setting(
        None, kind=bool, flags=("--block-console/--allow-console",), panel=CLIENTS,
        example="true",
        help="Drop CHATs starting with 'console ' (default: unless only on 127.0.0.1).",
        about="drop CHATs starting with 'console ' (default: unless on loopback)",
    )
    referee: Literal["off", "warn", "strict"] = setting(
        "warn", choices=("off", "warn", "strict"),
        help="Check moves: 'off', 'warn' (default: log) or 'strict' (block).",
        about='check moves: "off", "warn" or "strict"',
    )
    pdn: Path | None = setting(
        None, parse=_path, example='"/var/lib/dxserial/games/{line}"',
        help="Write every game as a PDN file into DIR.",
        about="a PDN file per game in this folder ({line}: the line's name)",
    )
    # PDN with the referee's notes as prose too (docs/pdn.md).
    pdn_notes: bool = setting(
        False, kind=bool, show_default=True,
        help="PDN with the referee's notes (docs/pdn.md).",
        about="with pdn: the referee's notes in the PDN too (docs/pdn.md)",
    )
    # Hard cap per direction. Readers pause at LinkDriver's high-water mark (64), but one
    # read may carry thousands of short messages; beyond this cap they are reported lost.
    max_pending: int = setting(
        32768, kind=int, minimum=1, option=False,
        about="messages held per direction before they count as lost",
    )
    reopen_interval: float = setting(
        0.2, kind=float, minimum=0, option=False,
        about="seconds between attempts to reopen a vanished port",
    )
    reconnect_interval: float = setting(
        1.0, kind=float, minimum=0, option=False, example="1.0",
        about="with connect: seconds between attempts",
    )
    shutdown_grace: float = setting(
        1.0, kind=float, minimum=0, option=False, example="1.0",
        about="seconds for messages in flight at a stop",
    )



def bridge_config(values: Mapping[str, Any], *, option: bool) -> BridgeConfig:
    """The bridge's settings from a user's values by key (the command line's, a rig line's),
    checked; each error one line naming the option (``option``) or the key."""
    if values.get("listen") is not None and values.get("connect") is not None:
        names = ("--listen", "--connect") if option else ("listen", "connect")
        raise ConfigError(f"{names[0]} and {names[1]} exclude each other")
    config: BridgeConfig = build(BridgeConfig, values, option=option)
    check_nulmodem(config.nulmodem, option=option)
    return config


__all__ = ["DEFAULT_LISTEN", "DEFAULT_PEER_GRACE", "DEFAULT_SERIAL_GRACE",
           "DEFAULT_SILENT_SLOT", "BridgeConfig",
           "bridge_config"]
