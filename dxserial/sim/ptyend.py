"""One end of the virtual pair: a pty whose slave side is published as a symlink.

The relay keeps a slave fd of each end open itself, so the master never sees EIO or a
hang-up when no program has the end open, and the raw line settings stay put.  Unplugging
removes the link first (so nobody opens a dying pty), then closes the pty.
"""

from __future__ import annotations

import contextlib
import os
import termios
import threading
import tty
from typing import Literal

from dxserial.errors import ConfigError

End = Literal["a", "b"]


class PtyEnd:
    """One pty: master fd (the relay's side), a held slave fd, the published link."""

    def __init__(self, name: End, path: str) -> None:
        self.name = name
        self.path = path
        self.master: int | None = None
        self.slave: int | None = None
        self.device: str | None = None

    @property
    def plugged(self) -> bool:
        return self.master is not None

    def plug(self) -> None:
        master, slave = os.openpty()
        try:
            tty.setraw(slave)  # no echo, no CR/LF translation, 8 bits, no flow control
            os.set_blocking(master, False)
            device = os.ttyname(slave)
            _publish(device, self.path)
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self.master, self.slave, self.device = master, slave, device

    def unplug(self) -> None:
        """Link first (so nobody opens a dying pty), then the pty itself."""
        if self.device is not None:
            _unpublish(self.device, self.path)
        for fd in (self.master, self.slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = self.device = None


_SPEEDS = {
    getattr(termios, f"B{n}"): n
    for n in (
        50,
        75,
        110,
        134,
        150,
        200,
        300,
        600,
        1200,
        1800,
        2400,
        4800,
        9600,
        19200,
        38400,
        57600,
        115200,
        230400,
        460800,
        500000,
        576000,
        921600,
        1000000,
    )
    if hasattr(termios, f"B{n}")
}


def termios_speed(end: PtyEnd) -> int | None:
    """The output speed set on ``end``'s pty (shared by every fd of it, ours included)."""
    fd = end.slave
    if fd is None:
        return None
    try:
        code = termios.tcgetattr(fd)[5]
    except (termios.error, OSError):
        return None
    return _SPEEDS.get(code)


def check_path(path: str) -> None:
    """A link may go where nothing is, or replace an old link to a pty (ours, earlier)."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise ConfigError(f"cannot create {path}: directory {directory} does not exist")
    if os.path.lexists(path) and not _is_pty_link(path):
        raise ConfigError(
            f"cannot create {path}: it exists and is not a link to a pseudo-terminal; "
            "remove it or choose another path"
        )


def _is_pty_link(path: str) -> bool:
    return os.path.islink(path) and os.readlink(path).startswith("/dev/pts/")


def _publish(device: str, path: str) -> None:
    """Point ``path`` at ``device`` atomically (a program never sees it half made)."""
    tmp = f"{path}.vpair-{os.getpid()}-{threading.get_ident()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        os.symlink(device, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ConfigError(f"cannot create {path}: {exc.strerror or exc}") from None


def _unpublish(device: str, path: str) -> None:
    """Remove ``path`` if it is still our link (never someone else's file)."""
    with contextlib.suppress(OSError):
        if os.readlink(path) == device:
            os.unlink(path)


__all__ = ["End", "PtyEnd", "check_path", "termios_speed"]
