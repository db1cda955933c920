"""The bridge's record of the serial engine's game, kept across runs (one file per line).

A bridge that is killed mid-game leaves the serial engine inside that game; the next run
can only know it from this record, so it is the evidence on which that run ends the game
(docs/bridge.md).  It is written atomically when a game starts and when it ends, never
per move.  Where it lives: ``--state-dir``, else ``$STATE_DIRECTORY`` (systemd's
``StateDirectory=``), else ``$XDG_STATE_HOME/dxserial``, else ``~/.local/state/dxserial``.
"""

from __future__ import annotations

import json
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


def state_file(folder: Path, port: str) -> Path:
    """The state file of serial line ``port`` (named as given: /dev/serial/by-id/... is
    the stable name of an adapter, /dev/ttyUSB0 may be another one after a replug)."""
    name = _UNSAFE.sub("-", port.replace("://", "-")).strip("-.") or "port"
    return folder / f"serial-{name[:180]}.json"


@dataclass(frozen=True)
class SerialRecord:
    """What the file says: a game was open (``since``, wall-clock seconds) or not."""

    open: bool
    since: float
    port: str

    def evidence(self, path: Path) -> str:
        """The evidence in a few words, for the log and the trace."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"state file {path}, game open since {when}"


def read_record(path: Path) -> SerialRecord | None:
    """The record at ``path``; ``None`` if there is none.  Raises :class:`ConfigError`
    (one line) if the file is there but not a record this version wrote."""
    if not path.exists():
        return None
    text = read_text(path, "state file", "remove it if it is not dxserial's", limit=65536)
    try:
        data = json.loads(text)
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, not {VERSION}")
        game, since, port = data["game"], float(data["since"]), str(data["port"])
        if game not in ("open", "closed"):
            raise ValueError(f"game {game!r} is not 'open' or 'closed'")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"state file {path}: not a dxserial state record ({exc})") from None
    return SerialRecord(game == "open", since, port)


def record_fields(port: str, *, open: bool, now: float) -> dict[str, Any]:
    """The fields of a record (the relay's :class:`~dxserial.drive.actions.Remember`)."""
    return {"version": VERSION, "port": port, "game": "open" if open else "closed",
            "since": round(now, 3), "pid": os.getpid()}


def write_record(path: Path, fields: Mapping[str, Any]) -> None:
    """Replace the record at ``path`` atomically (a crash leaves the old one or the new)."""
    write_atomic(path, json.dumps(dict(fields), sort_keys=True) + "\n", what="state file")


__all__ = [
    "VERSION", "SerialRecord", "StateDir", "read_record", "record_fields", "state_dir",
    "state_file", "write_record",
]
