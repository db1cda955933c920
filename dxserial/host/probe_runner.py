"""Runs a :class:`~dxserial.host.probe.Prober` on a serial port under asyncio: bytes and time only.

The prober decides everything; this opens the port at the speed it asks for (pyserial sets
it with termios, which a real UART obeys and a ``dxserial vpair --termios`` end honours),
writes what it says, feeds it what is read and wakes it at its deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from dxserial.errors import DxSerialError, PortError
from dxserial.host.probe import Finding, Open, Prober, Progress, Write
from dxserial.transports.openers import open_serial
from dxserial.transports.serial import SerialPort, SerialSettings
from dxserial.wirelog import log_bytes


class ProbeRunner:
    """One probe of ``port``; :meth:`stop` (a signal handler) ends it with what is known."""

    def __init__(self, port: str, prober: Prober, on_progress: Callable[[str], None]) -> None:
        self.port = port
        self.prober = prober
        self._on_progress = on_progress
        self._link: SerialPort | None = None
        self._reader: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopped = False
        self._error: BaseException | None = None

    def stop(self) -> None:
        self._stopped = True
        self._wake.set()

    async def run(self) -> Finding:
        loop = asyncio.get_running_loop()
        prober = self.prober
        try:
            prober.start(loop.time())
            while not prober.done:
                if self._stopped:
                    return prober.interrupt(loop.time())
                if self._error is not None:
                    raise self._error
                if await self._carry_out(prober.actions()):
                    continue
                deadline = prober.next_deadline()
                timeout = None if deadline is None else max(0.0, deadline - loop.time())
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
                prober.poll(loop.time())
            assert prober.finding is not None
            return prober.finding
        finally:
            await self._close()

    async def _carry_out(self, actions: list[Open | Write | Progress]) -> bool:
        """Do what the prober asked, in order; ``True`` if there was anything."""
        loop = asyncio.get_running_loop()
        for action in actions:
            if isinstance(action, Progress):
                self._on_progress(action.text)
            elif isinstance(action, Open):
                await self._close()
                self._link = await open_serial(self.port, SerialSettings(baudrate=action.speed))
                self._reader = asyncio.create_task(self._read(self._link), name="probe-reader")
                self.prober.opened(loop.time())
            elif self._link is not None:
                log_bytes("probe->engine", action.data)
                await self._link.write(action.data)
        return bool(actions)

    async def _read(self, link: SerialPort) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                data = await link.read()
                if not data:
                    raise PortError(f"serial port {self.port}: closed")
                log_bytes("engine->probe", data)
                self.prober.feed(data, loop.time())
                self._wake.set()
        except (DxSerialError, OSError) as exc:
            if self._link is link:
                self._error = exc
                self._wake.set()

    async def _close(self) -> None:
        link, self._link = self._link, None
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None
        if link is not None:
            await link.close()
