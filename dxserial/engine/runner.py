"""Runs a :class:`~dxserial.engine.player.Player` on an endpoint: messages in, moves out.

The player is an :class:`~dxserial.engine.machine.EngineMachine` under the one driver
(:mod:`dxserial.drive.driver`), whose link driver speaks NULMODEM or NUL frames without
knowing which; a search runs in a worker thread while the loop keeps echoing, and a stop
cancels it at once.  The exit status (:class:`RunResult`: 0 played, 1 did not) and when an
unanswered GAMEREQ is repeated: docs/engine.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from dxserial.drive.driver import Driver
from dxserial.drive.flood import FloodGuard
from dxserial.engine.machine import NOTHING_PLAYED, PEER, EngineMachine
from dxserial.engine.player import GameOver, Player
from dxserial.transports.base import Port
from dxserial.transports.endpoints import EndpointKind, EngineEndpoint

log = logging.getLogger("dxserial.engine.player")

#: How long a closing engine waits for its last messages to be delivered.
DRAIN_TIMEOUT = 10.0


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
        link = endpoint.make_link()
        self.machine = EngineMachine(
            player, repeat=not link.retransmits, log_messages=log_messages
        )
        self.driver: Driver[str] = Driver(
            self.machine, log=log, say=on_line, flood=FloodGuard(burst=5, window=10.0)
        )
        self.driver.add_side(PEER, link)
        self._on_line = on_line

    @property
    def results(self) -> list[GameOver]:
        return self.machine.results

    def stop(self) -> None:
        """Leave cleanly (a signal handler may call this); a running search ends at once."""
        self.player.cancel()
        self.driver.act(self.machine.stop)  # held behind the search, which ends at once

    async def run(self) -> RunResult:
        driver = self.driver
        where = await self.endpoint.prepare()
        self._on_line(f"engine ready: {self.player.role}, {where}")
        try:
            port = await driver.until_stopped(self.endpoint.open())  # a listener waits long
        except BaseException:
            self.player.cancel()
            raise
        if port is None:
            await self.endpoint.close()  # stop listening
            return RunResult(1, NOTHING_PLAYED)
        driver.attach(PEER, port)
        reader = asyncio.create_task(self._read(port), name="engine-reader")
        try:
            serial = self.endpoint.spec.kind is EndpointKind.SERIAL
            driver.act(lambda now: self.machine.joined(PEER, now, self._where(), serial=serial))
            done = await driver.wait()
            if self.machine.error is not None:
                raise self.machine.error
            await driver.drain(DRAIN_TIMEOUT)  # the last messages (the final GAMEEND)
            assert done is not None
            return RunResult(done.code, done.message)
        finally:
            self.player.cancel()  # a search still running in its thread (we were cancelled)
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            await driver.close()
            await self.endpoint.release(port)
            await self.endpoint.close()
            for kind, hidden in driver.flood_drain():
                log.warning("%d more '%s' lines not shown", hidden, kind)

    async def _read(self, port: Port) -> None:
        driver = self.driver
        why = await driver.read(PEER, port)
        driver.detach(PEER)  # lost: nothing more is drained
        reason = str(why) if why else "the peer closed the connection"
        driver.act(lambda now: self.machine.left(PEER, now, reason))

    def _where(self) -> str:
        """The peer's place, for the no-answer hint."""
        spec = self.endpoint.spec
        if spec.kind is EndpointKind.SERIAL:
            return spec.port
        if spec.kind is EndpointKind.TCP:
            return spec.text
        return f"the connection to {self.endpoint.listen_address or spec.address}"
