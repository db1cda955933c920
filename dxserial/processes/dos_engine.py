"""The DOS engine (``dos/dxeng.c``, built as DXENG.COM) in a real, headless DOSBox.

The demo and the tests use this to put a real DOS program on the serial side: DOSBox
mounts a temporary directory as C:, runs DXENG.COM there and exits when it ends; COM1 is
DOSBox's ``nullmodem`` serial port, which the bridge reaches as ``dosbox://``,
``dosbox-listen://`` or (``transparent:1``) ``socket://``.

Where DXENG.COM is found: ``$DXSERIAL_DOS_ENGINE`` if set, else ``dos/build/DXENG.COM`` in
the checkout this package runs from (an editable install), else the copy ``dos/build.sh``
puts in the user's data folder (``~/.local/share/dxserial/``), which a plain ``pip
install .`` (no checkout beside the package) finds too.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from dxserial.errors import DxSerialError

#: Environment variable naming DXENG.COM, overriding the checkout's build.
ENGINE_ENV = "DXSERIAL_DOS_ENGINE"
#: What to run when DOSBox or bcc is missing.
INSTALL = "sudo apt-get install dosbox bcc"
#: The log DXENG.COM writes on its C: drive.
LOG_NAME = "DXENG.LOG"
PROGRAM = "DXENG.COM"


class DosSetupError(DxSerialError):
    """DOSBox or the DOS engine is not there; the message says how to get it."""


def checkout_engine() -> Path:
    """Where ``dos/build.sh`` puts DXENG.COM, relative to this package's checkout."""
    return Path(__file__).resolve().parents[2] / "dos" / "build" / PROGRAM


def installed_engine() -> Path:
    """Where ``dos/build.sh`` installs a copy of DXENG.COM for any installed dxserial."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "dxserial" / PROGRAM


def find_engine() -> Path:
    """DXENG.COM, or a :class:`DosSetupError` saying where it was looked for and how to
    build it."""
    named = os.environ.get(ENGINE_ENV)
    if named:
        if Path(named).is_file():
            return Path(named)
        raise DosSetupError(f"{ENGINE_ENV}={named}: no such file (build it with dos/build.sh)")
    places = [checkout_engine(), installed_engine()]
    for path in places:
        if path.is_file():
            return path
    raise DosSetupError(
        f"the DOS engine is not built (no {places[0]}, no {places[1]}): run dos/build.sh in "
        f"the dxserial checkout, which puts it in both (needs bcc: {INSTALL}), or set "
        f"{ENGINE_ENV} to a built DXENG.COM"
    )


def find_dosbox() -> str:
    """The ``dosbox`` executable, or a :class:`DosSetupError` saying how to install it."""
    found = shutil.which("dosbox")
    if found is None:
        raise DosSetupError(f"dosbox is not installed; install it with: {INSTALL}")
    return found


def serial_line(
    port: int, *, dosbox_listens: bool, transparent: bool = False, txdelay: int = 1
) -> str:
    """DOSBox's ``serial1=`` value: nullmodem on 127.0.0.1:``port``.

    ``dosbox_listens``: DOSBox is the TCP server (bridge: ``dosbox://`` or ``socket://``);
    else it connects, once, at start-up (bridge: ``dosbox-listen://``, started first).
    ``txdelay:1`` because DOSBox otherwise holds each outgoing byte up to 12 ms, which the
    echo handshake pays on every character.
    """
    where = f"port:{port}" if dosbox_listens else f"server:127.0.0.1 port:{port}"
    extra = " transparent:1" if transparent else ""
    return f"nullmodem {where} txdelay:{txdelay}{extra}"


def engine_args(
    *,
    role: str = "f",
    moves: int = 0,
    colour: str = "z",
    baud: int = 9600,
    start: int = 2,
    end: int = 3,
    idle: int = 60,
    once: bool = False,
) -> str:
    """DXENG.COM's command line (see the top of ``dos/dxeng.c``); ``once``: it ends its
    session at the first GAMEEND it gets."""
    return (
        f"port=1 baud={baud} s={start} e={end} role={role} moves={moves} colour={colour} "
        f"idle={idle} {'once=1 ' if once else ''}log={LOG_NAME}"
    )


@dataclass(frozen=True)
class DosboxRun:
    """One DOSBox run: its C: drive, configuration file, command line and environment."""

    drive: Path
    conf: Path
    argv: list[str]
    env: dict[str, str]

    @property
    def log(self) -> Path:
        """DXENG.COM's log on the C: drive (DOSBox writes DOS names upper-case)."""
        return self.drive / LOG_NAME

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def prepare(drive: Path, serial: str, args: str, *, cycles: str | int = "max") -> DosboxRun:
    """Copy DXENG.COM to ``drive`` and write a headless DOSBox configuration that runs it.

    Raises :class:`DosSetupError` if DOSBox or DXENG.COM is missing.
    """
    dosbox = find_dosbox()
    engine = find_engine()
    drive.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(engine, drive / PROGRAM)
    conf = drive.parent / f"{drive.name}-dosbox.conf"
    conf.write_text(conf_text(drive, serial, f"{PROGRAM} {args}", cycles=cycles))
    env = dict(os.environ, **HEADLESS)
    return DosboxRun(drive, conf, [dosbox, "-conf", str(conf), "-noconsole"], env)


#: The environment that keeps DOSBox headless (no window, no sound device).
HEADLESS = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}


def conf_text(drive: Path, serial: str, run: str, *, cycles: str | int = "max") -> str:
    """A headless DOSBox configuration: ``drive`` as C:, COM1 ``serial``, then ``run``."""
    cycles_line = cycles if isinstance(cycles, str) else f"fixed {cycles}"
    return (
        "[sdl]\noutput=surface\n"
        f"[cpu]\ncore=normal\ncycles={cycles_line}\n"
        "[mixer]\nnosound=true\n[speaker]\npcspeaker=false\ntandy=off\ndisney=false\n"
        f"[serial]\nserial1={serial}\nserial2=disabled\n"
        f'[autoexec]\nmount c "{drive}"\nc:\n{run}\nexit\n'
    )


__all__ = [
    "ENGINE_ENV",
    "HEADLESS",
    "INSTALL",
    "LOG_NAME",
    "DosSetupError",
    "DosboxRun",
    "conf_text",
    "engine_args",
    "find_dosbox",
    "find_engine",
    "installed_engine",
    "prepare",
    "serial_line",
]
