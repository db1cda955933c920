"""Everything a bridge is told, as one dataclass (the CLI and the config file fill it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dxserial.protocol.dialects import BRIDGE_GAMEEND_TIMEOUT
from dxserial.protocol.links import LinkKind, NulModemSettings
from dxserial.transports.access import IPNetwork
from dxserial.transports.serial import SerialSettings

DEFAULT_PEER_GRACE = 3.0
DEFAULT_SERIAL_GRACE = 30.0
DEFAULT_SILENT_SLOT = 60.0


@dataclass
class BridgeConfig:
    port: str
    serial: SerialSettings = field(default_factory=SerialSettings)
    link: LinkKind = "nulmodem"
    nulmodem: NulModemSettings = field(default_factory=NulModemSettings)
    listen: tuple[str, int] | None = ("127.0.0.1", 27531)
    connect: tuple[str, int] | None = None
    on_invalid: Literal["drop", "forward"] = "drop"
    kick_old: bool = False
    # A TCP client that has sent nothing for this long, with no game open, gives the only
    # slot up to the next client (docs/bridge.md, "One slot"; 0: never).
    silent_slot: float = DEFAULT_SILENT_SLOT
    # Only clients from these networks may connect (empty: anyone who can reach the port).
    allow: tuple[IPNetwork, ...] = ()
    # Drop CHATs that start with "console " (Moby Dam runs them as commands). None: on
    # when the TCP side listens beyond loopback or connects out.
    block_console: bool | None = None
    # Hard cap per direction. Readers pause at LinkDriver's high-water mark (64), but one
    # read may carry thousands of short messages; beyond this cap they are reported lost.
    max_pending: int = 32768
    reopen_interval: float = 0.2
    reconnect_interval: float = 1.0
    shutdown_grace: float = 1.0
    referee: Literal["off", "warn", "strict"] = "warn"
    pdn: Path | None = None
    # PDN with the referee's notes as prose too (docs/pdn.md).
    pdn_notes: bool = False
    # A TCP engine that leaves mid-game has this long before the bridge closes its game.
    peer_grace: float = DEFAULT_PEER_GRACE
    # A serial port that vanished has this long to come back before its engine counts as
    # gone (its pending messages lost, its game closed towards the TCP engine).
    serial_grace: float = DEFAULT_SERIAL_GRACE
    # A GAMEEND unanswered this long is answered by the bridge for the silent engine (0: never).
    gameend_timeout: float = BRIDGE_GAMEEND_TIMEOUT
    # Forward a TCP engine's stop code 1 to the serial engine (default: it ends the TCP
    # engine's session only).
    pass_stop: bool = False
    # End a game the serial engine may have open, on evidence only (bridge/serialcheck.py).
    serial_check: bool = True
    # Where the record of the serial engine's game is kept across runs (None: systemd's
    # $STATE_DIRECTORY, else the user's state folder; see bridge/statefile.py).
    state_dir: Path | None = None


__all__ = ["DEFAULT_PEER_GRACE", "DEFAULT_SERIAL_GRACE", "DEFAULT_SILENT_SLOT", "BridgeConfig"]
