"""``open_serial()``: any serial port a user may name, opened by its scheme's opener.

The opener comes from :data:`~dxserial.transports.schemes.SCHEMES`, imported by module
path on first use, so the serial link module knows none of the schemes built on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import cast

from dxserial.transports.schemes import DEVICE_OPENER, lookup
from dxserial.transports.serial import SerialPort, SerialSettings

Opener = Callable[[str, SerialSettings], Awaitable[SerialPort]]


def opener(path: str) -> Opener:
    """The function ``module:function`` names, its module imported now."""
    module, _, name = path.partition(":")
    return cast(Opener, getattr(importlib.import_module(module), name))


async def open_serial(port: str, settings: SerialSettings | None = None) -> SerialPort:
    """Open ``port`` with ``settings`` (default 9600 8N1) and return a link on it.

    Raises :class:`~dxserial.errors.ConfigError` for a port name that cannot work here
    (``loop://`` ...) and :class:`~dxserial.errors.PortError` when the OS refuses
    (missing, busy, permission denied, not a serial device).
    """
    scheme = lookup(port, endpoints=False)
    path = scheme.opener if scheme is not None else DEVICE_OPENER
    return await opener(path)(port, settings or SerialSettings())
