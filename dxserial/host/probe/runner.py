"""Runs the probe on a serial port under the one driver: the port (re)opened at each speed.

The prober decides everything (:mod:`dxserial.host.probe.machine`); this opens the port at
the speed it asks for (pyserial sets it with termios, which a real UART obeys and a
``dxserial vpair --termios`` end honours) and hands the port to the driver.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from dxserial.drive.actions import Action, Reopen
from dxserial.drive.driver import Driver
from dxserial.errors import DxSerialError, PortError
from dxserial.host.probe.machine import ENGINE, ProbeMachine
from dxserial.host.probe.prober import Finding, Prober
from dxserial.transports.base import Port
from dxserial.transports.openers import open_serial
from dxserial.transports.serial import SerialSettings

log = logging.getLogger("dxserial.probe")


class ProbeRunner:
    """One probe of ``port``; :meth:`stop` (a signal handler) ends it with what is known."""

    def __init__(self, port: str, prober: Prober, on_progress: Callable[[str], None]) -> None:
        self.port = port
        self.machine = ProbeMachine(prober)
        self.driver: Driver[str] = Driver(
            self.machine, log=log, say=on_progress, on_action=self._on_action
        )
        self.driver.add_side(ENGINE, None)
        self._opening: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    def stop(self) -> None:
        self.driver.stop()

    async def run(self) -> Finding:
        driver = self.driver
        try:
            driver.act(self.machine.start)
            await driver.wait()
            if self._error is not None and self.machine.finding is None:
                raise self._error
            finding = self.machine.finding
            assert finding is not None
            return finding
        finally:
            for task in (self._opening, self._reader):
                if task is not None:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            await driver.close()

    def _on_action(self, action: Action) -> None:
        if isinstance(action, Reopen):
            self._opening = asyncio.create_task(self._reopen(action.baudrate), name="probe-open")

    async def _reopen(self, speed: int) -> None:
        driver = self.driver
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        old = driver.detach(ENGINE)
        if old is not None:
            await old.close()
        try:
            port = await open_serial(self.port, SerialSettings(baudrate=speed))
        except (DxSerialError, OSError) as exc:
            self._failed(exc)
            return
        driver.attach(ENGINE, port)
        self._reader = asyncio.create_task(self._read(port), name="probe-reader")
        driver.act(self.machine.opened)

    async def _read(self, port: Port) -> None:
        why = await self.driver.read(ENGINE, port)
        if self.driver.port(ENGINE) is port:
            self._failed(why or PortError(f"serial port {self.port}: closed"))

    def _failed(self, exc: BaseException) -> None:
        """The port failed under the probe: the run ends with this error."""
        self._error = exc
        self.driver.end()
