"""The bridge's record of the serial engine's game, kept across runs (one file per line).

A bridge that is killed mid-game leaves the serial engine inside that game; the next run
can only know it from this record, so it is the evidence on which that run ends the game
(docs/bridge.md).  It is written atomically when a game starts and when it ends, never
per move.  Where it lives: ``--state-dir``, else ``$STATE_DIRECTORY`` (systemd's
``StateDirectory=``), else ``$XDG_STATE_HOME/dxserial``, else ``~/.local/state/dxserial``.
Its name comes from the port's identity (:func:`port_identity`) and a hash of it, so no two
lines share one; what is in it is checked on read, all of it (docs/bridge.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dxserial.errors import ConfigError
from dxserial.files import read_text, write_atomic

#: The record's own version; a file of another version is not understood (no evidence).
VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class StateDir:
    """A folder for state files and where its name came from (for the log)."""

    path: Path
    source: str  # "--state-dir", "$STATE_DIRECTORY", "$XDG_STATE_HOME", "~/.local/state"


def state_dir(explicit: Path | None, env: Mapping[str, str]) -> StateDir:
    """Where the state files go: the option, else systemd's, else the user's state folder."""
    if explicit is not None:
        return StateDir(explicit, "--state-dir")
    systemd = env.get("STATE_DIRECTORY", "").split(":")[0]
    if systemd:
        return StateDir(Path(systemd), "$STATE_DIRECTORY")
    xdg = env.get("XDG_STATE_HOME", "")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative path is to be ignored
        return StateDir(Path(xdg) / "dxserial", "$XDG_STATE_HOME")
    home = env.get("HOME") or os.path.expanduser("~")
    return StateDir(Path(home) / ".local" / "state" / "dxserial", "~/.local/state")


#: Where udev names each USB serial adapter by its serial number (stable across replugs).
BY_ID = Path("/dev/serial/by-id")
#: The latest wall-clock time a record may name (the end of year 9999, as ``time`` takes it).
_LAST_SINCE = 253402300799.0


def port_identity(port: str, serial_number: str | None = None, *, by_id: Path = BY_ID) -> str:
    """What names one line's serial engine across runs: the adapter's USB serial number
    where the line names it by that; a URL as given; else the by-id link of the device
    (named, or found among ``by_id``'s links), else the path as named, made absolute
    (``./ttyUSB0`` from the current folder). A link such as ``/dev/dxserial/NAME`` or a
    vpair's end is not followed: the device behind it (``/dev/pts/N``, ``/dev/ttyUSB1``)
    may be another one after a replug, and the line's record must still be found."""
    if serial_number is not None:
        return f"usb-serial:{serial_number}"
    if "://" in port:
        return port
    named = os.path.abspath(port)
    if os.path.dirname(named) == str(by_id):
        return named
    real = os.path.realpath(named)
    try:
        links = sorted(os.listdir(by_id))
    except OSError:
        links = []
    for link in links:
        if os.path.realpath(by_id / link) == real:
            return str(by_id / link)
    return named


def state_file(folder: Path, identity: str) -> Path:
    """The state file of the line whose port is ``identity`` (:func:`port_identity`): a
    readable part for people and a hash of the whole identity, so no two lines share one."""
    slug = _UNSAFE.sub("-", identity.replace("://", "-")).strip("-.")[:64] or "port"
    digest = hashlib.sha256(identity.encode("utf-8", errors="surrogateescape")).hexdigest()
    return folder / f"serial-{slug}-{digest[:16]}.json"


def legacy_state_file(folder: Path, port: str) -> Path:
    """Where dxserial 0.x kept the record (the port as given, ``/`` and ``:`` made ``-``,
    cut at 180 characters: two ports could share it, so its ``port`` must match)."""
    name = _UNSAFE.sub("-", port.replace("://", "-")).strip("-.") or "port"
    return folder / f"serial-{name[:180]}.json"


@dataclass(frozen=True)
class SerialRecord:
    """What the file says: a game was open (``since``, wall-clock seconds) or not."""

    open: bool
    since: float
    port: str
    identity: str | None = None

    def evidence(self, path: Path) -> str:
        """The evidence in a few words, for the log and the trace."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"state file {path}, game open since {when}"

    def names(self, port: str, identity: str) -> bool:
        """The record is this line's: its identity (or, in an old record, its port)."""
        return self.identity == identity if self.identity is not None else self.port == port


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a record holds")


def read_record(path: Path) -> SerialRecord | None:
    """The record at ``path``; ``None`` if there is none.  Raises :class:`ConfigError`
    (one line) if the file is there but not a record this version wrote: every value is
    checked (garbage, NaN, 1e400, a wrong type), none reaches the bridge unchecked."""
    if not path.exists():
        return None
    text = read_text(path, "state file", "remove it if it is not dxserial's", limit=65536)
    try:
        data = json.loads(text, parse_constant=_no_constant)
        return _record(data)
    except (ValueError, RecursionError) as exc:
        problem = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise ConfigError(f"state file {path}: not a dxserial state record ({problem})") from None


def _record(data: Any) -> SerialRecord:
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an object")
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        raise ValueError(f"version {version!r}, not {VERSION}")
    game, since, port = data.get("game"), data.get("since"), data.get("port")
    identity = data.get("identity")
    if game not in ("open", "closed"):
        raise ValueError(f"game {game!r} is not 'open' or 'closed'")
    if isinstance(since, bool) or not isinstance(since, int | float) or not (
        math.isfinite(since) and 0 <= since <= _LAST_SINCE
    ):
        raise ValueError(f"since {since!r} is not a time")
    if not isinstance(port, str) or not port or len(port) > 4096:
        raise ValueError(f"port {port!r} is not a port")
    if identity is not None and (not isinstance(identity, str) or len(identity) > 4096):
        raise ValueError(f"identity {identity!r} is not a port's")
    return SerialRecord(game == "open", float(since), port, identity)


@dataclass(frozen=True)
class Found:
    """What a line finds in its state folder: the file it writes, the record that is its
    own (None: no game open known), one line to log about it, and an old file to remove
    once the new one is written."""

    path: Path
    record: SerialRecord | None
    warning: str | None = None
    legacy: Path | None = None


def find_record(folder: Path, port: str, identity: str) -> Found:
    """This line's record in ``folder``: its own file, else (none yet) the file an older
    dxserial wrote, if that record is this port's.  A file that is not a record, or a
    record of another port, is one warning and no game open; the next write replaces it."""
    path = state_file(folder, identity)
    legacy: Path | None = None
    where = path
    if not path.exists():
        old = legacy_state_file(folder, port)
        if not old.exists():
            return Found(path, None)
        where = legacy = old
    try:
        record = read_record(where)
    except ConfigError as exc:
        return Found(path, None, f"{exc}: taken as no game open; it is replaced when the "
                     "next game starts", legacy)
    assert record is not None
    if not record.names(port, identity):
        other = record.identity or record.port
        if legacy is not None:  # an old file another port shares: it stays, it is not ours
            return Found(path, None, f"state file {where} is the record of {other}, not of "
                         f"{port}: ignored (this line keeps its own, {path.name})")
        return Found(path, None, f"state file {where} is the record of {other}, not of "
                     f"{identity}: ignored, taken as no game open; it is replaced when the next "
                     "game starts")
    return Found(path, record, None, legacy)


def record_fields(
    port: str, *, open: bool, now: float, identity: str | None = None
) -> dict[str, Any]:
    """The fields of a record (the relay's :class:`~dxserial.drive.actions.Remember`)."""
    fields: dict[str, Any] = {"version": VERSION, "port": port,
                              "game": "open" if open else "closed",
                              "since": round(now, 3), "pid": os.getpid()}
    if identity is not None:
        fields["identity"] = identity
    return fields


def write_record(path: Path, fields: Mapping[str, Any]) -> None:
    """Replace the record at ``path`` atomically (a crash leaves the old one or the new)."""
    write_atomic(path, json.dumps(dict(fields), sort_keys=True) + "\n", what="state file")


__all__ = [
    "BY_ID", "VERSION", "Found", "SerialRecord", "StateDir", "find_record", "legacy_state_file",
    "port_identity", "read_record", "record_fields", "state_dir", "state_file", "write_record",
]
