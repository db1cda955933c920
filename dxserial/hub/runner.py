"""Runs :class:`~dxserial.hub.adapter.HubAdapter` on the one driver: Hub on
stdin/stdout, DXP on an endpoint (NULMODEM or NUL frames on a serial line, NUL frames on
TCP), as ``dxserial engine`` does.

:class:`~dxserial.hub.machine.HubMachine` (sans-I/O) turns the driver's inputs
into the adapter's and the adapter's actions into the driver's; the Hub side is a raw side
whose port reads and writes whole lines (:class:`StdioLinePort`).  The Hub side is served at once
(``hub``/``init`` need no engine); the endpoint is opened meanwhile, and a GAMEREQ sent
before it is up waits inside the link.  When the adapter starts over on a fresh
connection, the machine hangs the engine's side up and :meth:`HubAdapterRunner._connect`
opens the endpoint again (a reconnect, a reopened port, the next ``listen://`` client).
"""

from __future__ import annotations

import asyncio
import logging

from dxserial.drive.driver import Driver
from dxserial.engine.runner import RunResult
from dxserial.errors import DxSerialError
from dxserial.hub.adapter import HubAdapter
from dxserial.hub.machine import DXP, HUB, HubMachine
from dxserial.transports.endpoints import EngineEndpoint
from dxserial.transports.stdio_lines import StdioLinePort, StdioLines

log = logging.getLogger("dxserial.hub")

#: Seconds the last messages (a closing GAMEEND) get to be delivered.
DRAIN_TIMEOUT = 5.0
class HubAdapterRunner:
    """One Hub client on stdin/stdout until it quits, the engine is lost, or :meth:`stop`."""

    def __init__(
        self, adapter: HubAdapter, endpoint: EngineEndpoint, *, log_messages: bool = False,
        lines: StdioLines | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._lines = lines  # the Hub client's lines; None: this process's stdin/stdout
        self.machine = HubMachine(adapter, log_messages=log_messages)
        self.driver: Driver[str] = Driver(self.machine, log=log)
        self.driver.add_side(HUB, None)
        self.driver.add_side(DXP, endpoint.make_link())

    def stop(self) -> None:
        """Leave now (a signal handler may call this): exit 1, "stopped by a signal"."""
        self.driver.act(self.machine.stop)

    async def run(self) -> RunResult:
        driver, endpoint = self.driver, self.endpoint
        io = self._lines if self._lines is not None else StdioLines()
        await io.open()
        stdio = StdioLinePort(io)
        driver.attach(HUB, stdio)
        where = await endpoint.prepare()
        log.info("hub: the DXP engine is at %s", where)
        tasks = [
            asyncio.create_task(self._read_hub(stdio), name="hub-stdin"),
            asyncio.create_task(self._connect(), name="hub-link"),
        ]
        try:
            done = await driver.wait()
            assert done is not None
            if self.machine.drain:
                await driver.drain(DRAIN_TIMEOUT)
            return RunResult(done.code, done.message)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            port = driver.detach(DXP)
            await driver.close()
            if port is not None:
                await endpoint.release(port)
            await endpoint.close()

    async def _read_hub(self, stdio: StdioLinePort) -> None:
        await self.driver.read(HUB, stdio)
        self.driver.act(lambda now: self.machine.left(HUB, now, "end of input"))

    async def _connect(self) -> None:
        """Open the engine's endpoint and read it; again after a hang-up for a fresh
        connection (:attr:`HubMachine.starting_over`)."""
        driver, machine = self.driver, self.machine
        fresh = False
        while True:
            try:  # a fresh connection is waited for as long as a first connect is
                port = await self.endpoint.open(
                    self.endpoint.options.connect_timeout if fresh else None
                )
            except DxSerialError as exc:
                self._lost(str(exc), fresh=fresh)
                return
            driver.attach(DXP, port)
            if fresh:
                log.info("hub: a fresh connection to the engine (%s)", self.endpoint.describe())
                driver.act(machine.reconnected)
            why = await driver.read(DXP, port)
            if machine.starting_over:
                old = driver.detach(DXP)
                await self.endpoint.release(old if old is not None else port)
                fresh = True
                continue
            self._lost(str(why) if why else "the engine closed the connection", fresh=False)
            return

    def _lost(self, why: str, *, fresh: bool) -> None:
        machine = self.machine
        if fresh:
            self.driver.act(lambda now: machine.reconnect_failed(why, now))
        else:
            self.driver.act(lambda now: machine.left(DXP, now, why))
