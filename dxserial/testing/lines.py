"""One direction of a simulated serial cable, for in-memory runs on a fake clock."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class LossyLine:
    """FIFO with latency and pacing (``byte_time`` per byte); drops, corrupts and stalls
    bytes at random, or lets ``hook`` replace (or drop: None) each byte.

    A stall holds a byte up to ``max_delay`` seconds; bytes written meanwhile queue behind
    it, then follow at the line's pace.  A corruption adds 1..127 to the byte, so a
    corrupted echo of a corrupted byte never restores it (no echo handshake survives
    that), and never makes a byte in ``never`` (an end byte would end the receiver's
    message short: a known limit of NULMODEM).  Each byte draws from ``rng`` the same way
    whatever the rates, so a seed replays the same faults.
    """

    rng: random.Random = field(default_factory=lambda: random.Random(0))
    byte_time: float = 1 / 960  # 9600 baud, 8N1
    latency: float = 0.002
    p_drop: float = 0.0
    p_corrupt: float = 0.0
    p_delay: float = 0.0
    max_delay: float = 1.0
    never: frozenset[int] = frozenset()
    hook: Callable[[int], int | None] | None = None
    in_flight: deque[tuple[float, int]] = field(default_factory=deque)
    last: float = 0.0

    def write(self, now: float, data: bytes) -> None:
        """Bytes written at ``now``: each is queued with the time it arrives, or lost."""
        for byte in data:
            original = byte if self.hook is None else self.hook(byte)
            if original is None or self.rng.random() < self.p_drop:
                continue
            b = original
            if self.rng.random() < self.p_corrupt:
                while b == original or b in self.never:
                    b = (original + self.rng.randint(1, 127)) % 256
            delay = self.rng.uniform(0, self.max_delay) if self.rng.random() < self.p_delay else 0
            t = max(now + self.latency + delay, self.last + self.byte_time)
            self.last = t
            self.in_flight.append((t, b))
