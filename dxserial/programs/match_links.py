"""The engines' connections in a match: each side's link, its generations, what it reports.

A :class:`EngineSide` is one engine (its :class:`~dxserial.programs.conductor_engine.Engine`
state) and, while connected, its link; the :class:`EngineLinks` of a match open them and
queue what they report (each connection has a generation, so a late report of an old one is
dropped) for the match to feed its :class:`~dxserial.programs.conductor.GameConductor`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial.programs.conductor_engine import Engine, Lost
from dxserial.protocol.messages import escape
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
)
from dxserial.transports.base import Port
from dxserial.transports.endpoints import EngineEndpoint
from dxserial.transports.linkdriver import LinkDriver

__all__ = [
    "Delivered",
    "EngineLinks",
    "EngineSide",
    "Interrupted",
    "Item",
    "Payload",
    "Received",
    "close_side",
    "idle_sink",
]

log = logging.getLogger("dxserial.programs.match")


@dataclass(frozen=True)
class Received:
    raw: bytes


@dataclass(frozen=True)
class Delivered:
    """The link confirmed the engine got ``raw`` at ``at``."""

    raw: bytes
    at: float


Payload = Received | Delivered | Lost


@dataclass(frozen=True)
class Item:
    side: EngineSide | None  # None: stop requested
    generation: int
    payload: Payload | None


class Interrupted(Exception):
    """The match was asked to stop (a signal)."""


@dataclass(eq=False)
class EngineSide(Engine):
    """One follower engine: its endpoint, and while connected, its link.

    A side outlives a :class:`~dxserial.programs.match.Match` when a tournament hands it
    from one pairing to the next: what its connection reports goes to ``sink``, which each
    match sets to its own.
    """

    endpoint: EngineEndpoint = field(kw_only=True)
    driver: LinkDriver | None = field(default=None, kw_only=True)
    port: Port | None = field(default=None, kw_only=True)
    reader: asyncio.Task[None] | None = field(default=None, kw_only=True)
    generation: int = field(default=0, kw_only=True)
    sink: Callable[[EngineSide, int, Payload], None] | None = field(default=None, kw_only=True)


async def _drain(driver: LinkDriver, timeout: float = 5.0) -> None:
    """Let the last messages (a final GAMEEND) reach the engine before closing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while driver.port is not None and driver.link.queued and loop.time() < deadline:
        await asyncio.sleep(0.01)


async def close_side(side: EngineSide) -> None:
    """Close the engine's connection (its endpoint stays ready for the next one)."""
    driver, port, reader = side.driver, side.port, side.reader
    side.driver = side.port = side.reader = None
    side.connected = False
    if reader is not None:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    if driver is not None:
        await _drain(driver)
        await driver.close()
    if port is not None:
        await side.endpoint.release(port)


def idle_sink(side: EngineSide, generation: int, payload: Payload) -> None:
    """Between games: a lost link marks the engine gone, anything else is dropped."""
    if generation != side.generation:
        return
    if isinstance(payload, Lost):
        side.gone = payload.reason
    elif isinstance(payload, Received):
        log.info("engine %s between games: %s (dropped)", side.label, escape(payload.raw))


async def _read(driver: LinkDriver, port: Port, post: Callable[[Payload], None]) -> None:
    why = await driver.read_until_lost(port)
    post(Lost(str(why) if why else "the engine closed the connection"))


class EngineLinks:
    """Both engines' reports in one queue, in order; the match waits on :meth:`next`."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Ask the match to stop: :meth:`next` returns an item without a side, a wait in
        :meth:`connect` ends."""
        self._stopping.set()
        self._queue.put_nowait(Item(None, 0, None))

    async def connect(self, side: EngineSide, timeout: float) -> None:
        """Open the engine's endpoint (a stop request cuts a long wait short)."""
        opening = asyncio.create_task(side.endpoint.open(timeout))
        stopping = asyncio.create_task(self._stopping.wait())
        await asyncio.wait({opening, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not opening.done():
            opening.cancel()
            await asyncio.gather(opening, stopping, return_exceptions=True)
            raise Interrupted
        await asyncio.gather(stopping, return_exceptions=True)
        port = opening.result()
        side.generation += 1
        generation = side.generation

        def post(payload: Payload) -> None:
            if side.sink is not None:
                side.sink(side, generation, payload)

        loop = asyncio.get_running_loop()

        def on_event(event: LinkEvent) -> None:
            if isinstance(event, MessageDelivered):
                post(Delivered(event.raw, loop.time()))
            elif isinstance(event, MessageReceived):
                post(Received(event.raw))
            elif isinstance(event, LinkDown):
                post(Lost(f"the engine stopped answering: {event.error}"))
            elif isinstance(event, LinkProblem):
                log.log(event.level, "engine %s line: %s", side.label, event.error)

        driver = LinkDriver(side.endpoint.make_link(), on_event, name=f"engine-{side.label}")
        side.driver, side.port = driver, port
        side.joined()
        driver.attach(port)
        side.reader = asyncio.create_task(_read(driver, port, post))
        log.info("engine %s connected: %s", side.label, side.endpoint.describe())

    def post(self, side: EngineSide, generation: int, payload: Payload) -> None:
        self._queue.put_nowait(Item(side, generation, payload))

    async def next(self, deadline: float | None) -> Item | None:
        """The next current item from either engine (one without a side: stop), or None
        at ``deadline``."""
        loop = asyncio.get_running_loop()
        while True:
            if deadline is None:
                item = await self._queue.get()
            else:
                left = deadline - loop.time()
                if left <= 0:
                    return None
                try:
                    item = await asyncio.wait_for(self._queue.get(), left)
                except TimeoutError:
                    return None
            if item.side is None:
                return item
            if item.generation == item.side.generation and item.side.driver is not None:
                return item
