"""Runs a :class:`~dxserial.engine.player.Player` on an endpoint: messages in, moves out.

All I/O goes through :class:`~dxserial.transports.linkdriver.LinkDriver`, so the player
speaks NULMODEM or NUL frames without knowing which; a search runs in a worker thread while
the loop keeps echoing, and a stop cancels it at once.  The exit status (:class:`RunResult`:
0 played, 1 did not) and when an unanswered GAMEREQ is repeated: docs/engine.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from dxserial.drive.flood import FloodGuard
from dxserial.engine.player import (
    GameBegun,
    GameOver,
    NoAnswer,
    Note,
    PeerError,
    Player,
)
from dxserial.engine.search import SearchCancelled
from dxserial.errors import DxSerialError, FramingError, MessageError
from dxserial.protocol.messages import Message, colour_name, escape, parse
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageReceived,
)
from dxserial.transports.base import Port
from dxserial.transports.endpoints import EndpointKind, EngineEndpoint
from dxserial.transports.linkdriver import LinkDriver

log = logging.getLogger("dxserial.engine.player")

#: How long a closing engine waits for its last messages to be delivered.
DRAIN_TIMEOUT = 10.0
#: The exit line of an engine stopped before it began a game.
NOTHING_PLAYED = "stopped before any game was played"


@dataclass(frozen=True)
class _Received:
    raw: bytes


@dataclass(frozen=True)
class _Lost:
    reason: str


@dataclass(frozen=True)
class _Stop:
    pass


_Item = _Received | _Lost | _Stop


@dataclass(frozen=True)
class RunResult:
    """How the run ended: ``code`` is the process exit status, ``message`` one line."""

    code: int
    message: str


class EngineRunner:
    """One player on one endpoint, until the session ends, fails, or :meth:`stop` is called."""

    def __init__(
        self,
        player: Player,
        endpoint: EngineEndpoint,
        *,
        log_messages: bool = False,
        on_line: Callable[[str], None] = print,
    ) -> None:
        self.player = player
        self.endpoint = endpoint
        self._msg_level = logging.INFO if log_messages else logging.DEBUG
        self._on_line = on_line
        self._flood = FloodGuard(burst=5, window=10.0)
        self._inbox: asyncio.Queue[_Item] = asyncio.Queue()
        self._driver: LinkDriver | None = None
        self._lost = False
        self._repeat = False  # a NUL link: an unanswered GAMEREQ is sent again
        self._habits: set[str] = set()  # the peer's lenient readings, named once
        self._getter: asyncio.Future[_Item] | None = None
        self.results: list[GameOver] = []

    def stop(self) -> None:
        """Leave cleanly (a signal handler may call this); a running search ends at once."""
        self.player.cancel()
        self._inbox.put_nowait(_Stop())

    async def run(self) -> RunResult:
        where = await self.endpoint.prepare()
        self._on_line(f"engine ready: {self.player.role}, {where}")
        try:
            port = await self._open()
        except BaseException:
            self.player.cancel()
            raise
        if port is None:
            return RunResult(1, NOTHING_PLAYED)
        link = self.endpoint.make_link()
        self._repeat = not link.retransmits
        driver = LinkDriver(link, self._on_event, name="engine")
        self._driver = driver
        driver.attach(port)
        reader = asyncio.create_task(self._read(driver, port), name="engine-reader")
        try:
            result = await self._serve()
            await self._drain()
            return result
        finally:
            self.player.cancel()  # a search still running in its thread (we were cancelled)
            if self._getter is not None:
                self._getter.cancel()
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            await driver.close()
            await self.endpoint.release(port)
            await self.endpoint.close()
            for kind, hidden in self._flood.drain():
                log.warning("%d more '%s' lines not shown", hidden, kind)

    async def _open(self) -> Port | None:
        """Open the endpoint, unless a stop comes first (a listener may wait for long)."""
        opening = asyncio.create_task(self.endpoint.open())
        stopping = asyncio.create_task(self._wait_stop())
        done, _ = await asyncio.wait({opening, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if opening in done:
            stopping.cancel()
            await asyncio.gather(stopping, return_exceptions=True)
            return opening.result()
        opening.cancel()
        await asyncio.gather(opening, return_exceptions=True)
        return None

    async def _wait_stop(self) -> None:
        while not isinstance(await self._inbox.get(), _Stop):
            pass

    async def _read(self, driver: LinkDriver, port: Port) -> None:
        why = await driver.read_until_lost(port)
        self._lost = True
        self._inbox.put_nowait(_Lost(str(why) if why else "the peer closed the connection"))

    def _on_event(self, event: LinkEvent) -> None:
        if isinstance(event, MessageReceived):
            self._inbox.put_nowait(_Received(event.raw))
        elif isinstance(event, LinkDown):
            self._lost = True
            self._inbox.put_nowait(_Lost(f"the peer stopped answering: {event.error}"))
        elif isinstance(event, LinkProblem):  # a flood (a probe's stray bytes) is folded
            show, hidden = self._flood.allow("line", time.monotonic())
            if hidden:
                log.warning("%s", self._flood.summary("line", hidden))
            if show:
                log.log(event.level, "line: %s", event.error)

    # ------------------------------------------------------------------ dialogue

    async def _serve(self) -> RunResult:
        player = self.player
        self._send_all(player.start())
        while not player.done:
            item = await self._next()
            if item is None:  # our GAMEREQ is overdue
                self._send_all(player.poll(player.now(), repeat=self._repeat))
                self._report()
                continue
            if isinstance(item, _Stop):
                return self._stopped()
            if isinstance(item, _Lost):
                if player.hung_up_for_answer():  # told to stop, it stopped: a normal end
                    self._report()
                    break
                return RunResult(1, f"link lost: {item.reason}")
            try:
                msg = parse(item.raw, strict=False)
            except MessageError as exc:
                log.log(self._msg_level, "in  %s (invalid)", escape(item.raw))
                try:
                    out = player.invalid(f"'{escape(item.raw)}': {exc}")
                except PeerError as error:
                    return self._failed(error)
                self._report()
                self._send_all(out)
                continue
            log.log(self._msg_level, "in  %s (%s)", escape(msg.wire), msg.NAME)
            for warning in msg.warnings:  # a habit of the peer's, read leniently: once
                if warning not in self._habits:
                    self._habits.add(warning)
                    log.info("note: the peer's habit: %s (read leniently)", warning)
            try:
                out = await asyncio.to_thread(player.receive, msg)
            except SearchCancelled:  # stop() was called while we were thinking
                self._report()
                return self._stopped()
            except PeerError as exc:
                return self._failed(exc)
            self._report()
            self._send_all(out)
        if player.ok:
            return RunResult(0, f"session ended: {player.outcome}")
        return RunResult(1, f"session ended: {player.outcome}")

    def _failed(self, exc: PeerError) -> RunResult:
        """The peer kept breaking the protocol: say goodbye and give up."""
        self._report()
        if exc.farewell is not None:
            self._send_all([exc.farewell])
        return RunResult(1, f"protocol failure: {exc}")

    async def _next(self) -> _Item | None:
        """The next item of the inbox, or ``None`` when the player's deadline comes first."""
        if self._getter is None:
            self._getter = asyncio.ensure_future(self._inbox.get())
        deadline = self.player.deadline()
        timeout = None if deadline is None else max(0.0, deadline - self.player.now())
        done, _ = await asyncio.wait({self._getter}, timeout=timeout)
        if not done:
            return None
        item = self._getter.result()
        self._getter = None
        return item

    def _stopped(self) -> RunResult:
        """A signal: end the game if it is ours to end, and say whether anything was played."""
        player = self.player
        self._send_all(player.abandon())
        finished = player.games_finished
        if finished:
            games = "game" if finished == 1 else "games"
            return RunResult(0, f"stopped by a signal after {finished} {games}")
        number = player.current_game
        if number is not None:
            return RunResult(
                1, f"stopped during game {number}, before any game was played to its end"
            )
        if player.games_begun:
            return RunResult(1, "stopped before any game was played to its end")
        return RunResult(1, NOTHING_PLAYED)

    def _where(self) -> str:
        """The peer's place, for the no-answer hint."""
        spec = self.endpoint.spec
        if spec.kind is EndpointKind.SERIAL:
            return spec.port
        if spec.kind is EndpointKind.TCP:
            return spec.text
        return f"the connection to {self.endpoint.listen_address or spec.address}"

    def _send_all(self, messages: list[Message]) -> None:
        driver = self._driver
        assert driver is not None
        for msg in messages:
            log.log(self._msg_level, "out %s (%s)", escape(msg.wire), msg.NAME)
            try:
                driver.send(msg.wire)
            except FramingError as exc:
                raise DxSerialError(f"cannot send {msg.NAME}: {exc}") from None

    def _report(self) -> None:
        for event in self.player.events():
            if isinstance(event, GameOver):
                self.results.append(event)
                self._on_line(event.line)
            elif isinstance(event, GameBegun):
                log.info(
                    "game %d: playing %s against %s",
                    event.number,
                    colour_name(event.our_colour),
                    event.opponent or "?",
                )
            elif isinstance(event, Note):
                log.log(event.level, "%s", event.text)
            elif isinstance(event, NoAnswer):
                log.warning(
                    "nothing answered on %s after %g s: is the other side running, and on "
                    "the same link type?%s",
                    self._where(),
                    event.waited,
                    " (GAMEREQ sent again)" if event.repeated else "",
                )

    async def _drain(self) -> None:
        """Give the last messages (the final GAMEEND) time to be delivered."""
        driver = self._driver
        if driver is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DRAIN_TIMEOUT
        while (driver.link.queued or not driver.link.idle) and loop.time() < deadline:
            if self._lost:
                return
            await asyncio.sleep(0.01)
