"""The -v log: one line per message or chunk of bytes crossing, like ``socat -v``.

``dxserial.wire`` is at INFO only under ``-v`` (cli.common.configure_logging), so callers
on hot paths check :func:`enabled` first (a cached level test) or call :func:`log_bytes`.
"""

from __future__ import annotations

import logging

from dxserial.protocol.messages import Message, escape

WIRE = logging.getLogger("dxserial.wire")


def enabled() -> bool:
    return WIRE.isEnabledFor(logging.INFO)


def log_bytes(direction: str, data: bytes) -> None:
    """``a->b 2 bytes: \\x02R`` under -v."""
    if WIRE.isEnabledFor(logging.INFO):
        n = len(data)
        WIRE.info("%s %d byte%s: %s", direction, n, "" if n == 1 else "s", escape(data))


def log_crossing(direction: str, message: Message) -> None:
    """The -v line for one message crossing: direction, what it is, its bytes (a caller
    passes it only when :func:`enabled`)."""
    wire = message.wire
    WIRE.info("%s %s '%s' (%d bytes)", direction, message.NAME, escape(wire), len(wire))


__all__ = ["WIRE", "enabled", "log_bytes", "log_crossing"]
