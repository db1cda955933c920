"""The last messages delivered to each side, bounded, in case the other end's machine turns
out not to have taken them: a TCP peer that resets its connection with bytes unread in
its socket buffer (see :meth:`dxserial.bridge.relay.Relay.unacknowledged`)."""

from __future__ import annotations

from collections import deque

from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.bridge.records import Item

#: How much of what was delivered to a side is remembered, to name the messages a peer that
#: reset its connection never took (a full socket send buffer is about this much), and at
#: most how many messages (each costs some 150 bytes of memory besides its own).
RECENT_BYTES = 256 * 1024
RECENT_MESSAGES = 2048


class Recent:
    """Bounded (RECENT_BYTES, RECENT_MESSAGES), holding no parsed message: kept all along."""

    def __init__(self) -> None:
        self._items: dict[Side, deque[Item]] = {SERIAL: deque(), TCP: deque()}
        self._bytes: dict[Side, int] = {SERIAL: 0, TCP: 0}

    def remember(self, side: Side, item: Item) -> None:
        """``item`` was delivered to ``side``."""
        recent = self._items[side]
        item.msg = None  # delivered: only its bytes are kept
        recent.append(item)
        total = self._bytes[side] + len(item.raw) + 1
        while total > RECENT_BYTES or len(recent) > RECENT_MESSAGES:
            total -= len(recent.popleft().raw) + 1
        self._bytes[side] = total

    def clear(self, side: Side) -> None:
        self._items[side].clear()
        self._bytes[side] = 0

    def take_back(self, side: Side, nbytes: int) -> tuple[list[Item], int]:
        """The last messages delivered to ``side`` that ``nbytes`` (each with its NUL) cover,
        oldest first, and how many of those bytes are older than anything remembered."""
        recent = self._items[side]
        covered = 0
        gone: list[Item] = []
        while recent and covered < nbytes:
            item = recent.pop()
            covered += len(item.raw) + 1
            gone.append(item)
        self._bytes[side] -= covered
        gone.reverse()
        return gone, max(nbytes - covered, 0)


__all__ = ["RECENT_BYTES", "RECENT_MESSAGES", "Recent"]
