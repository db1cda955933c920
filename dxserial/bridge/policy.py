"""Which CHATs the bridge blocks: its console rule, apart from its plumbing (who may connect
is :mod:`dxserial.transports.access`)."""

from __future__ import annotations

from dxserial.transports.access import is_loopback


def console_blocked_by_default(
    block_console: bool | None,
    listen: tuple[str, int] | None,
    connect: tuple[str, int] | None,
) -> bool:
    """On unless told otherwise whenever someone beyond this machine could send a CHAT."""
    if block_console is not None:
        return block_console
    if connect is not None:
        return not is_loopback(connect[0])
    host = listen[0] if listen is not None else "127.0.0.1"
    return not is_loopback(host)


__all__ = ["console_blocked_by_default"]
