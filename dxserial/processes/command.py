"""Engines the director runs itself: the ``[engines.NAME]`` table with a ``command``, checked.

Sans I/O: this reads and checks the table and turns it into a :class:`Launch` (argv, files,
how the director reaches the started engine) for a given port; starting the process is
:mod:`dxserial.transports.child`'s job, watching it :mod:`dxserial.processes.supervisor`'s.

How an engine speaks (``speaks``) is one entry of :data:`KINDS`, one small function each:

* ``dxp-server``: the engine listens on ``{port}``; the director connects (``tcp://``).
* ``dxp-client``: the director listens on ``{port}``; the engine connects (``listen://``).
* ``dosbox``: a DOS program (DXENG.COM by default) in a headless DOSBox whose COM1 is a
  nullmodem port on ``{port}``; the director connects as ``dosbox://`` (NULMODEM link).
* ``hub``: a Hub engine (stdin/stdout) behind ``dxserial engine tcp://...:{port} --role
  follower --tell-thinking --hub COMMAND``, which speaks DXP for it and connects to the
  director, and tells it the engine's thinking by CHAT (:mod:`dxserial.game.thinking`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dxserial.config import unknown_key
from dxserial.errors import ConfigError
from dxserial.setting import Setting

__all__ = [
    "KINDS",
    "EngineCommand",
    "Kind",
    "Launch",
    "check_endpoint_text",
    "launch",
    "parse_engine_command",
]

HOST = "127.0.0.1"
#: The keys of a command engine's table, declared once (``tournament --keys`` shows them).
COMMAND_SETTINGS: tuple[Setting, ...] = (
    Setting("command", (), kind=list, example='["./scan", "dxp"]',
            about="instead of endpoint: an engine the director starts"),
    Setting("speaks", None, example='"dxp-server"',
            about='with command: "dxp-server", "dxp-client", "dosbox", "hub"'),
    Setting("cwd", None, example='"scan-3.1"',
            about="with command: its working folder (relative to the file)"),
    Setting("env", None, kind=dict, example='{ SCAN_THREADS = "1" }',
            about="with command: environment variables added"),
    Setting("files", None, kind=dict, example='{ "scan.ini" = "dxp-port = {port}" }',
            about="with command: files written into cwd"),
    Setting("max_restarts", 10, kind=int, minimum=0,
            about="with command: failures before its games are forfeited"),
    Setting("stop_grace", 3.0, kind=float, minimum=0, above=True, example="3",
            about="with command: seconds from SIGTERM to SIGKILL"),
    Setting("ready_timeout", None, kind=float, minimum=0, above=True, example="30",
            about="with command: seconds to be ready (else connect_timeout)"),
)
#: The keys a kind of engine takes besides :data:`COMMAND_SETTINGS`.
KIND_SETTINGS: dict[str, tuple[Setting, ...]] = {
    "dosbox": (
        Setting("program", None, example='"DXENG.COM"',
                about='speaks = "dosbox": the DOS program (default DXENG.COM)'),
        Setting("args", None, example='""', about='speaks = "dosbox": its arguments'),
        Setting("cycles", "max", about='speaks = "dosbox": DOSBox\'s cpu cycles'),
    ),
}
_D = {one.key: one.default for one in COMMAND_SETTINGS}
#: Settings of a command engine's table (besides the kind's own, see :data:`KIND_KEYS`).
COMMAND_KEYS = frozenset(_D)
KIND_KEYS: dict[str, frozenset[str]] = {
    kind: frozenset(one.key for one in settings) for kind, settings in KIND_SETTINGS.items()
}


@dataclass(frozen=True)
class EngineCommand:
    """One command engine as its table says; ``{port}`` is still a placeholder here."""

    name: str
    speaks: str
    command: tuple[str, ...] = ()
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    max_restarts: int = _D["max_restarts"]
    stop_grace: float = _D["stop_grace"]
    ready_timeout: float | None = None  # None: the tournament's connect_timeout
    extra: Mapping[str, Any] = field(default_factory=dict)  # the kind's own settings


@dataclass(frozen=True)
class Launch:
    """What to start for one run, and where the director then finds the engine."""

    argv: tuple[str, ...]
    files: Mapping[str, str]
    endpoint: str  # tcp://..., listen://... or a serial URL
    link: str = "nul"  # layer 1 on a serial endpoint
    env: Mapping[str, str] = field(default_factory=dict)
    copies: Mapping[str, Path] = field(default_factory=dict)  # binary files copied in


def _fill(text: str, port: int, workdir: Path) -> str:
    return text.replace("{port}", str(port)).replace("{dir}", str(workdir))


def _common(cmd: EngineCommand, port: int, workdir: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    argv = tuple(_fill(a, port, workdir) for a in cmd.command)
    files = {name: _fill(text, port, workdir) for name, text in cmd.files.items()}
    return argv, files


def _dxp_server(cmd: EngineCommand, port: int, workdir: Path) -> Launch:
    argv, files = _common(cmd, port, workdir)
    return Launch(argv, files, f"tcp://{HOST}:{port}")


def _dxp_client(cmd: EngineCommand, port: int, workdir: Path) -> Launch:
    argv, files = _common(cmd, port, workdir)
    return Launch(argv, files, f"listen://{HOST}:{port}")


def _dosbox(cmd: EngineCommand, port: int, workdir: Path) -> Launch:
    from dxserial.processes import dos_engine as dos

    program = Path(str(cmd.extra.get("program") or dos.find_engine()))
    args = str(cmd.extra.get("args") or dos.engine_args())
    cycles = str(cmd.extra.get("cycles", KIND_SETTINGS["dosbox"][2].default))
    drive = workdir / "drive"
    serial = dos.serial_line(port, dosbox_listens=True)
    conf = dos.conf_text(drive, serial, f"{program.name.upper()} {args}", cycles=cycles)
    files = {"dosbox.conf": conf}
    copies = {f"drive/{program.name.upper()}": program}
    argv = (*(cmd.command or (dos.find_dosbox(),)), "-conf", str(workdir / "dosbox.conf"),
            "-noconsole")
    return Launch(argv, files, f"dosbox://{HOST}:{port}", link="nulmodem", env=dos.HEADLESS,
                  copies=copies)


def _hub(cmd: EngineCommand, port: int, workdir: Path) -> Launch:
    """The Hub engine runs as the child of a DXP follower that dxserial starts for it."""
    argv, files = _common(cmd, port, workdir)
    level: list[str] = []  # the tournament's time control a GAMEREQ cannot say
    if cmd.extra.get("increment"):
        level += ["--increment", f"{float(cmd.extra['increment']):g}"]
    if cmd.extra.get("move_time") is not None:
        level += ["--move-time", f"{float(cmd.extra['move_time']):g}"]
    adapter = (sys.executable, "-m", "dxserial", "engine", f"tcp://{HOST}:{port}",
               "--role", "follower", "--tell-thinking", *level, "--hub", shlex.join(argv))
    return Launch(adapter, files, f"listen://{HOST}:{port}")


@dataclass(frozen=True)
class Kind:
    """One way of speaking: how to launch it, and who opens the connection."""

    launch: Callable[[EngineCommand, int, Path], Launch]
    director_listens: bool = False  # the engine connects to the director's {port}
    needs_command: bool = True
    #: Its scores reach the director (a Hub engine's info, by its follower's CHAT).
    reports_thinking: bool = False


#: ``speaks`` -> its :class:`Kind`.  One more kind is one more function and one row here.
KINDS: dict[str, Kind] = {
    "dxp-server": Kind(_dxp_server),
    "dxp-client": Kind(_dxp_client, director_listens=True),
    "dosbox": Kind(_dosbox, needs_command=False),
    "hub": Kind(_hub, director_listens=True, reports_thinking=True),
}
#: Kinds planned but not in this build: the line a user gets instead.
UNAVAILABLE: dict[str, str] = {}


def launch(cmd: EngineCommand, port: int, workdir: Path) -> Launch:
    """The :class:`Launch` for one run of ``cmd`` on ``port`` in ``workdir``."""
    return KINDS[cmd.speaks].launch(cmd, port, workdir)


def parse_engine_command(
    name: str, entry: Mapping[str, Any], *, source: str, base: Path | None
) -> EngineCommand:
    """Check a command engine's table; :class:`ConfigError` (one line) if anything is off."""
    where = f"{source}: engine {name!r}"
    speaks = _speaks(entry, where)
    command = entry.get("command", [])
    if isinstance(command, str):
        command = shlex.split(command)
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        raise ConfigError(f'{where}: command must be a list of strings, e.g. ["./scan", "dxp"]')
    if not command and KINDS[speaks].needs_command:
        raise ConfigError(f"{where}: command is empty")
    cmd = EngineCommand(
        name=name,
        speaks=speaks,
        command=tuple(command),
        cwd=_folder(entry.get("cwd"), where, base),
        env=_strings(entry, "env", where),
        files=_files(entry, where),
        max_restarts=_number(entry, "max_restarts", where),
        stop_grace=_number(entry, "stop_grace", where),
        ready_timeout=_number(entry, "ready_timeout", where),
        extra={k: entry[k] for k in KIND_KEYS.get(speaks, ()) if k in entry},
    )
    _check_program(cmd, where)
    return cmd


def _speaks(entry: Mapping[str, Any], where: str) -> str:
    """The table's kind, and no key the kind does not take."""
    speaks = entry.get("speaks")
    if speaks in UNAVAILABLE:
        raise ConfigError(f"{where}: {UNAVAILABLE[speaks]}")
    if speaks not in KINDS:
        kinds = ", ".join(f'"{k}"' for k in KINDS)
        raise ConfigError(f"{where}: speaks = {speaks!r}: give one of {kinds}")
    known = COMMAND_KEYS | KIND_KEYS.get(speaks, frozenset())
    for key in entry:
        if key not in known:
            raise unknown_key(where, key, known, f"speaks = {speaks!r} takes "
                              f"{', '.join(sorted(known))}", word="setting")
    return str(speaks)


def _folder(cwd: Any, where: str, base: Path | None) -> Path | None:
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{where}: cwd must be a folder name")
    folder = None if cwd is None else Path(cwd)
    if folder is not None and base is not None and not folder.is_absolute():
        folder = base / folder
    return folder


def _strings(entry: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
    table = entry.get(key, {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise ConfigError(f'{where}: {key} must be a table of strings, {key} = {{ K = "V" }}')
    return dict(table)


def _files(entry: Mapping[str, Any], where: str) -> dict[str, str]:
    files = _strings(entry, "files", where)
    for key in files:
        if Path(key).is_absolute() or ".." in Path(key).parts:
            raise ConfigError(f"{where}: files: {key!r} must be a name inside its folder")
    return files


def _number(entry: Mapping[str, Any], key: str, where: str) -> Any:
    """A number of the table, checked by its declaration (its default when not given)."""
    one = next(s for s in COMMAND_SETTINGS if s.key == key)
    value = entry.get(key, one.default)
    if value is None:
        return None
    if one.kind is int:
        if not isinstance(value, int) or isinstance(value, bool) or value < (one.minimum or 0):
            raise ConfigError(f"{where}: {key} must be a whole number >= {one.minimum:g}")
        return value
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        raise ConfigError(f"{where}: {key} must be a number of seconds > 0")
    return float(value)


def _check_program(cmd: EngineCommand, where: str) -> None:
    """A program that is not there is found now, not at the engine's first game."""
    if not cmd.command or "{" in cmd.command[0]:
        return
    program = cmd.command[0]
    if os.sep in program:
        path = Path(program)
        if not path.is_absolute() and cmd.cwd is not None:
            path = cmd.cwd / path
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ConfigError(f"{where}: {program}: no such program (or not executable)")
    elif shutil.which(program) is None:
        raise ConfigError(f"{where}: {program}: not found on PATH")


#: Forms a user means when a ``//`` went missing: ``tcp:/host:port`` or ``tcp:host:port``.
def check_endpoint_text(text: str) -> str | None:
    """Why ``text`` is probably a mistyped endpoint (with the form meant), else None."""
    from dxserial.transports.schemes import BY_NAME

    head, sep, rest = text.strip().partition(":")
    if not sep or rest.startswith("//") or head.lower() not in BY_NAME:
        return None
    meant = f"{head.lower()}://{rest.lstrip('/')}"
    return f"endpoint {text!r} is not a valid URL: did you mean {meant!r}?"
