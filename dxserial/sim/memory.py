"""In-process serial cables: two port ends inside one event loop, no pty, no process.

A :class:`Cable` is a null-modem cable whose two ends (``"a"`` and ``"b"``) are
:class:`MemoryPort` objects with the :class:`~dxserial.transports.base.Port` and
:class:`~dxserial.transports.base.PushPort` surface, as pymodbus's in-process null modem
is for its transports.  A cable registered under a name opens through the scheme table
as ``memory://NAME`` (end a), so a :class:`~dxserial.bridge.runner.Bridge` runs on it in a
test's own event loop exactly as on a device path.

What a line does to bytes is a :data:`Line` hook per direction: it turns each chunk
written into the pieces that arrive and their delays (split, delay, drop, corrupt:
:func:`faulty`, :func:`split`, :func:`delayed`).  Arrival order is kept, as on a wire.
Each end holds at most ``capacity`` bytes not yet read (a tty's buffer): past that, a
writer waits, so flow control reaches the sender as it does through a pty.
:meth:`Cable.unplug` pulls end a out (its port fails, reopening fails) until
:meth:`Cable.replug`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dxserial.errors import PortError
from dxserial.transports.base import DataCallback, EndCallback

#: What the line does to one chunk: the pieces that arrive, each after a delay in seconds.
Line = Callable[[bytes], list[tuple[float, bytes]]]

#: Bytes an end holds unread before writers to it wait (about a Linux tty's buffer).
DEFAULT_CAPACITY = 4096

_CABLES: dict[str, Cable] = {}


def clean(data: bytes) -> list[tuple[float, bytes]]:
    """A perfect line: every chunk arrives at once, whole."""
    return [(0.0, data)]


@dataclass
class Faults:
    """A line that drops and corrupts bytes at random (seeded), counting what it did."""

    drop: float = 0.0
    corrupt: float = 0.0
    seed: int = 0
    dropped: int = 0
    corrupted: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __call__(self, data: bytes) -> list[tuple[float, bytes]]:
        out = bytearray()
        for b in data:
            roll = self._rng.random()
            if roll < self.drop:
                self.dropped += 1
            elif roll < self.drop + self.corrupt:
                self.corrupted += 1
                out.append(b ^ (1 << self._rng.randrange(8)))
            else:
                out.append(b)
        return [(0.0, bytes(out))] if out else []


def faulty(drop: float = 0.0, corrupt: float = 0.0, seed: int = 0) -> Faults:
    """A line that drops and corrupts each byte with these odds."""
    return Faults(drop, corrupt, seed)


def split(size: int, line: Line = clean) -> Line:
    """``line``, with each piece cut into pieces of at most ``size`` bytes."""

    def hook(data: bytes) -> list[tuple[float, bytes]]:
        return [
            (delay, piece[i:i + size]) for delay, piece in line(data)
            for i in range(0, len(piece), size)
        ]

    return hook


def delayed(seconds: float, line: Line = clean) -> Line:
    """``line``, each piece arriving ``seconds`` later."""

    def hook(data: bytes) -> list[tuple[float, bytes]]:
        return [(delay + seconds, piece) for delay, piece in line(data)]

    return hook


class MemoryPort:
    """One end of a :class:`Cable`; reads what the other end wrote, through the line."""

    def __init__(self, cable: Cable, end: str) -> None:
        self.cable = cable
        self.end = end
        self.name = f"memory://{cable.name}" if end == "a" else f"memory://{cable.name}#b"
        self.unsent_at_end: int | None = None
        self._inbox = bytearray()
        self._in_flight = 0
        self._on_data: DataCallback | None = None
        self._on_end: EndCallback | None = None
        self._paused = False
        self._closed = False
        self._error: PortError | None = None
        self._readable: asyncio.Event = asyncio.Event()
        self._room: asyncio.Event = asyncio.Event()
        self._room.set()
        self._loop = asyncio.get_running_loop()

    # ------------------------------------------------------------ the Port surface

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def ending(self) -> bool:
        return self._closed or self._error is not None

    async def read(self) -> bytes:
        while not self._inbox:
            if self._closed:
                return b""
            if self._error is not None:
                raise self._error
            self._readable.clear()
            await self._readable.wait()
        data = bytes(self._inbox)
        self._inbox.clear()
        self._update_room()
        return data

    def try_write(self, data: bytes) -> bool:
        other = self._other()
        if self.ending or other is None:
            return not self.ending  # an empty socket: the bytes fall on the floor
        if other.full:
            return False
        self.cable.send(self.end, data)
        return True

    async def write(self, data: bytes) -> None:
        while True:
            if self._error is not None:
                raise self._error
            if self._closed:
                raise PortError(f"{self.name}: port is closed")
            other = self._other()
            if other is None or not other.full:
                break
            await other.wait_room()
        if data:
            self.try_write(data)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._readable.set()
        self._room.set()
        self.cable.closed(self)

    def start_push(self, on_data: DataCallback, on_end: EndCallback) -> bool:
        self._on_data, self._on_end = on_data, on_end
        self._deliver()
        if self._error is not None:
            self._finish()
        return True

    def pause_reading(self) -> None:
        self._paused = True

    def resume_reading(self) -> None:
        if self._paused:
            self._paused = False
            self._loop.call_soon(self._deliver)

    async def wait_taken(self, timeout: float = 0.2) -> None:
        """Nothing to wait for: the cable holds no unacknowledged bytes."""

    # ------------------------------------------------------------ what the cable calls

    @property
    def full(self) -> bool:
        """Writers to this end wait: it holds ``capacity`` bytes unread."""
        return len(self._inbox) + self._in_flight >= self.cable.capacity

    async def wait_room(self) -> None:
        await self._room.wait()

    def incoming(self, delay: float, data: bytes) -> None:
        """``data`` is on its way here and arrives after ``delay`` seconds."""
        self._in_flight += len(data)
        self._update_room()
        self._loop.call_later(delay, self._arrive, data)

    def fail(self, error: PortError) -> None:
        """The port is gone under its user (an adapter pulled out)."""
        if self.ending:
            return
        self._error = error
        self._readable.set()
        self._room.set()
        self._finish()

    def _arrive(self, data: bytes) -> None:
        self._in_flight -= len(data)
        if self.ending:
            return
        self._inbox += data
        self._readable.set()
        self._deliver()

    def _deliver(self) -> None:
        if self._on_data is None or self._paused or self.ending or not self._inbox:
            self._update_room()
            return
        data = bytes(self._inbox)
        self._inbox.clear()
        self._update_room()
        self._on_data(data)

    def _finish(self) -> None:
        on_end, self._on_end = self._on_end, None
        self._on_data = None
        if on_end is not None:
            on_end(self._error)

    def _update_room(self) -> None:
        if self.full:
            self._room.clear()
        else:
            self._room.set()

    def _other(self) -> MemoryPort | None:
        return self.cable.port("b" if self.end == "a" else "a")


class Cable:
    """A null-modem cable with ends ``a`` and ``b`` in one event loop.

    ``a_to_b`` / ``b_to_a``: what the line does in each direction.  ``written`` counts the
    bytes each end wrote; bytes written while the other end is unplugged or closed are lost.
    """

    def __init__(
        self,
        name: str,
        *,
        a_to_b: Line = clean,
        b_to_a: Line = clean,
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        self.name = name
        self.lines = {"a": a_to_b, "b": b_to_a}
        self.capacity = capacity
        self.written = {"a": 0, "b": 0}
        self.unplugged = False
        self._ports: dict[str, MemoryPort | None] = {"a": None, "b": None}
        self._last = {"a": 0.0, "b": 0.0}  # when the latest piece each way arrives

    def open(self, end: str) -> MemoryPort:
        """A port on ``end``; :class:`PortError` while it is unplugged or already open."""
        if end == "a" and self.unplugged:
            raise PortError(f"memory://{self.name}: unplugged")
        if self._ports[end] is not None:
            raise PortError(f"memory://{self.name}: end {end} is already open (busy)")
        port = MemoryPort(self, end)
        self._ports[end] = port
        return port

    def port(self, end: str) -> MemoryPort | None:
        return self._ports[end]

    def send(self, end: str, data: bytes) -> None:
        """Bytes written on ``end``: through the line to the other end, order kept."""
        self.written[end] += len(data)
        other = self._ports["b" if end == "a" else "a"]
        if other is None:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        for delay, piece in self.lines[end](data):
            at = max(now + delay, self._last[end])
            self._last[end] = at
            other.incoming(at - now, piece)

    def closed(self, port: MemoryPort) -> None:
        if self._ports[port.end] is port:
            self._ports[port.end] = None

    def unplug(self) -> None:
        """Pull end a out: its port fails now and cannot be opened until :meth:`replug`."""
        self.unplugged = True
        port = self._ports["a"]
        self._ports["a"] = None
        if port is not None:
            port.fail(PortError(f"serial port memory://{self.name} lost: unplugged"))

    def replug(self) -> None:
        self.unplugged = False

    def stats(self) -> dict[str, Any]:
        """What each direction's line did (a :class:`Faults` line counts its faults)."""
        out: dict[str, Any] = {}
        for end, line in self.lines.items():
            counted = {"written": self.written[end]}
            if isinstance(line, Faults):
                counted.update(dropped=line.dropped, corrupted=line.corrupted)
            out[f"{end}->{'b' if end == 'a' else 'a'}"] = counted
        return out


@contextmanager
def cable(name: str, **kwargs: Any) -> Iterator[Cable]:
    """A :class:`Cable` that ``memory://NAME`` opens (end a) while the block runs."""
    if name in _CABLES:
        raise ValueError(f"an in-process cable named {name!r} exists already")
    made = _CABLES[name] = Cable(name, **kwargs)
    try:
        yield made
    finally:
        del _CABLES[name]


async def open_memory(url: str, settings: object = None) -> MemoryPort:
    """The scheme table's opener of ``memory://NAME``: end a of that registered cable."""
    name = url.partition("://")[2]
    found = _CABLES.get(name)
    if found is None:
        raise PortError(
            f"{url}: no in-process cable of that name (memory:// ports exist only inside "
            "the process that made them, in tests)"
        )
    return found.open("a")


__all__ = [
    "DEFAULT_CAPACITY", "Cable", "Faults", "Line", "MemoryPort", "cable", "clean", "delayed",
    "faulty", "open_memory", "split",
]
