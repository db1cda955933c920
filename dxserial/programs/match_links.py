"""The engines' connections in a match: each side's link, its generations, its messages.

A :class:`EngineSide` is one engine and, while connected, its link and dialogue; the
:class:`EngineLinks` of a match open them, queue what they report (each connection has a
generation, so a late report of an old one is dropped), send with the dialogue checked,
and take in each message (CHAT logged, BACKREQ declined, anything out of turn dropped).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial.errors import DialogueError, DuplicateMessageError, DxSerialError, MessageError
from dxserial.programs.standings import Progress
from dxserial.protocol.messages import (
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Message,
    escape,
    parse,
)
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
)
from dxserial.protocol.session import Phase, Role, Session
from dxserial.protocol.tolerance import Habits, late_answer, leaving_answers
from dxserial.transports.base import Port
from dxserial.transports.endpoints import EngineEndpoint
from dxserial.transports.linkdriver import LinkDriver

__all__ = [
    "EngineLinks",
    "EngineSide",
    "Interrupted",
    "Item",
    "Lost",
    "Payload",
    "close_side",
    "idle_sink",
]

log = logging.getLogger("dxserial.programs.match")


@dataclass(frozen=True)
class Lost:
    reason: str


@dataclass(frozen=True)
class Invalid:
    raw: bytes
    error: str


Payload = Message | Lost | Invalid


@dataclass(frozen=True)
class Item:
    side: EngineSide | None  # None: stop requested
    generation: int
    payload: Payload | None


class Interrupted(Exception):
    """The match was asked to stop (a signal)."""


@dataclass(eq=False)
class EngineSide:
    """One follower engine: its endpoint, and while connected, its link and dialogue.

    A side outlives a :class:`~dxserial.programs.match.Match` when a tournament hands it
    from one pairing to the next: what its connection reports goes to ``sink``, which each
    match sets to its own.
    """

    label: str
    endpoint: EngineEndpoint
    name: str = ""
    driver: LinkDriver | None = None
    port: Port | None = None
    reader: asyncio.Task[None] | None = None
    session: Session = field(default_factory=lambda: Session(Role.INITIATOR))
    generation: int = 0
    failure: str | None = None  # failed during a game (it loses that game)
    gone: str | None = None  # left between games or after the last one
    sink: Callable[[EngineSide, int, Payload], None] | None = None
    #: The engine may still be in a game of a director that crashed (``--resume``): the
    #: next connection first closes it (see :meth:`~dxserial.programs.match.Match.close_stale`).
    stale: bool = False
    #: The last message the link confirmed delivered to the engine, and when (the clock's
    #: start: NULMODEM's end-byte echo came back, or TCP wrote it).
    delivered: tuple[bytes, float] | None = None
    #: Its dialects, named once (see :mod:`dxserial.protocol.tolerance`).
    habits: Habits = field(default_factory=lambda: Habits("engine"))
    late_answer: bool = False  # its silence was taken as the GAMEEND answer

    @property
    def usable(self) -> bool:
        return self.driver is not None and self.failure is None and self.gone is None

    @property
    def title(self) -> str:
        return f"{self.name} ({self.label})" if self.name else self.label

    @property
    def connected(self) -> bool:
        return self.driver is not None


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
    else:
        log.info("engine %s between games: %s (dropped)", side.label, payload)


async def _read(driver: LinkDriver, port: Port, post: Callable[[Payload], None]) -> None:
    why = await driver.read_until_lost(port)
    post(Lost(str(why) if why else "the engine closed the connection"))


def _parse(raw: bytes) -> Message | Invalid:
    try:
        return parse(raw, strict=False)
    except MessageError as exc:
        return Invalid(raw, str(exc))


class EngineLinks:
    """Both engines' reports in one queue, in order; the match waits on :meth:`next`."""

    def __init__(self, progress: Progress, *, log_messages: bool = False) -> None:
        self.progress = progress
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._msg_level = logging.INFO if log_messages else logging.DEBUG
        self.held: deque[Item] = deque()  # read early (a move right after GAMEACC)
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Ask the match to stop: a wait in :meth:`next` or :meth:`connect` ends."""
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
                side.delivered = (event.raw, loop.time())
            elif isinstance(event, MessageReceived):
                post(_parse(event.raw))
            elif isinstance(event, LinkDown):
                post(Lost(f"the engine stopped answering: {event.error}"))
            elif isinstance(event, LinkProblem):
                log.log(event.level, "engine %s line: %s", side.label, event.error)

        driver = LinkDriver(side.endpoint.make_link(), on_event, name=f"engine-{side.label}")
        side.driver, side.port, side.session = driver, port, Session(Role.INITIATOR)
        driver.attach(port)
        side.reader = asyncio.create_task(_read(driver, port, post))
        log.info("engine %s connected: %s", side.label, side.endpoint.describe())

    def post(self, side: EngineSide, generation: int, payload: Payload) -> None:
        self._queue.put_nowait(Item(side, generation, payload))

    def fail(self, side: EngineSide, reason: str) -> None:
        if side.failure is None:
            side.failure = reason
            self.progress.line(f"engine {side.title} failed: {reason}")

    def send(self, side: EngineSide, msg: Message) -> None:
        """Send to one engine; its dialogue is checked first (a violation is our bug)."""
        if not side.usable:
            return
        assert side.driver is not None
        side.session.send(msg)
        log.log(self._msg_level, "-> %s: %s (%s)", side.label, escape(msg.wire), msg.NAME)
        try:
            side.driver.send(msg.wire)
        except DxSerialError as exc:
            self.fail(side, f"cannot send to it: {exc}")

    async def next(self, deadline: float) -> Item | None:
        """The next current item from either engine, or None at ``deadline``."""
        loop = asyncio.get_running_loop()
        while True:
            if self.held:
                item = self.held.popleft()
            else:
                left = deadline - loop.time()
                if left <= 0:
                    return None
                try:
                    item = await asyncio.wait_for(self._queue.get(), left)
                except TimeoutError:
                    return None
            if item.side is None:
                raise Interrupted
            if item.generation == item.side.generation and item.side.driver is not None:
                return item

    def intake(self, side: EngineSide, payload: Payload | None) -> Message | None:
        """Check one message from ``side`` against its dialogue; None if nothing to act on.

        CHAT is logged, BACKREQ answered with K1, anything invalid or out of turn logged and
        dropped (a strict referee relays nothing of it).  A lost link fails the engine.
        """
        if isinstance(payload, Lost):
            if side.session.phase in (Phase.IDLE, Phase.STOPPED) or leaving_answers(side.session):
                # Between games or after the last one: leaving is no failure (yet).
                log.info("engine %s left: %s", side.label, payload.reason)
                side.gone = payload.reason
            else:
                self.fail(side, f"link lost: {payload.reason}")
            return None
        if isinstance(payload, Invalid):
            log.warning(
                "engine %s sent an invalid message '%s' (dropped): %s",
                side.label,
                escape(payload.raw),
                payload.error,
            )
            return None
        if payload is None:
            return None
        msg = payload
        log.log(self._msg_level, "<- %s: %s (%s)", side.label, escape(msg.wire), msg.NAME)
        if isinstance(msg, Chat):
            log.info("chat from engine %s: %s", side.label, msg.text)
            return None
        if side.late_answer:
            side.late_answer = False
            if late_answer(side.session, msg):
                log.info("engine %s: its late GAMEEND answer swallowed", side.label)
                return None
        try:
            for note in side.habits.notes(side.session.receive(msg)):
                log.info("engine %s: %s", side.label, note)
        except DuplicateMessageError as exc:
            log.warning("engine %s: %s (dropped)", side.label, exc)
            return None
        except DialogueError as exc:
            log.warning("engine %s: %s (not relayed)", side.label, exc)
            return None
        if isinstance(msg, BackRequest):
            log.info("engine %s asked for a take-back: declined (K1)", side.label)
            self.send(side, BackAccept(code=BackCode.NOT_SUPPORTED))
            return None
        return msg
