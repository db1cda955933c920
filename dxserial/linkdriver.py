"""Drives a sans-I/O layer-1 link over a real port or socket under asyncio.

The link (:class:`~dxserial.protocol.nulmodem.NulModemLink` or
:class:`~dxserial.protocol.links.NulLink`) decides what to write and when its next
deadline is; this class only moves bytes and keeps one timer.  The port can come and go
(a USB adapter pulled, a TCP peer replaced): messages wait inside the link meanwhile,
and :meth:`LinkDriver.attach` re-sends whatever was not confirmed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from dxserial.errors import DxSerialError, PortError
from dxserial.protocol.links import Layer1Link, NulLink
from dxserial.protocol.nulmodem import NulModemEvent
from dxserial.transports.base import ByteLink

log = logging.getLogger("dxserial.link")


class LinkDriver:
    """One layer-1 link, the port it currently runs on, a writer task and a timer."""

    def __init__(
        self, link: Layer1Link, on_event: Callable[[NulModemEvent], None], *, name: str
    ) -> None:
        self.link = link
        self.name = name
        self._on_event = on_event
        self._port: ByteLink | None = None
        self._wakeup = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._attached_before = False

    @property
    def port(self) -> ByteLink | None:
        return self._port

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def attach(self, port: ByteLink) -> None:
        """Start using ``port``; after a previous port, unconfirmed output is sent again."""
        if self._attached_before:
            self.link.reset()
            self.link.poll(self.now())  # start the message in flight over at once
        self._attached_before = True
        self._port = port
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_loop(), name=f"{self.name}-writer")
        self.service()

    def detach(self) -> ByteLink | None:
        """Stop using the current port (it was lost or replaced); returns it for closing."""
        port, self._port = self._port, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return port

    def send(self, raw: bytes) -> None:
        """Queue one message; raises :class:`~dxserial.errors.FramingError` when full."""
        self.link.send(raw, self.now())
        self.service()

    def feed(self, data: bytes) -> None:
        self.link.receive_data(data, self.now())
        self.service()

    async def read_until_lost(self, port: ByteLink) -> DxSerialError | None:
        """Feed everything read from ``port`` to the link; return why reading stopped.

        ``None`` means a clean end of file (a TCP peer that closed).
        """
        while True:
            try:
                data = await port.read()
            except DxSerialError as exc:
                return exc
            except OSError as exc:
                return PortError(f"{self.name}: {exc}")
            if not data:
                return None
            self.feed(data)

    def service(self) -> None:
        """Hand the link's events to the owner, wake the writer, re-arm the timer."""
        for event in self.link.events():
            self._on_event(event)
        if self._port is not None:
            self._wakeup.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        # No port, no clock: an unplugged adapter must not use up the handshake's attempts.
        # attach() resets the link, so the message in flight starts over from the beginning.
        deadline = self.link.next_deadline()
        if deadline is not None and self._port is not None:
            self._timer = asyncio.get_running_loop().call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.link.poll(self.now())
        self.service()

    async def _write_loop(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while (port := self._port) is not None:
                data = self.link.data_to_send()
                if not data:
                    break
                try:
                    await port.write(data)
                except (DxSerialError, OSError) as exc:
                    log.debug("%s: write failed: %s", self.name, exc)
                    break  # the reader sees the loss; attach() re-sends what was unconfirmed
                if isinstance(self.link, NulLink):
                    self.link.confirm_written()
                    self.service()

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        port = self.detach()
        if port is not None:
            with contextlib.suppress(Exception):
                await port.close()
