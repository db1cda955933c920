"""Drives a sans-I/O layer-1 link over a real port or socket under asyncio.

The link (:class:`~dxserial.protocol.nulmodem.NulModemLink` or
:class:`~dxserial.protocol.links.NulLink`) decides what to write and when its next
deadline is; this class only moves bytes and keeps one timer.  The port can come and go
(a USB adapter pulled, a TCP peer replaced): messages wait inside the link meanwhile,
and :meth:`LinkDriver.attach` re-sends whatever was not confirmed.

Writes go straight to the kernel while it has room (no task switch on the hot path); only
a backlog is left to a writer task that waits for the transport to drain.  A reader that
feeds this link's *outgoing* queue can wait on :meth:`LinkDriver.room`, so a fast sender
on one side is slowed down by TCP or tty flow control instead of filling memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable

from dxserial.errors import DxSerialError, PortError
from dxserial.protocol.links import Layer1Link
from dxserial.protocol.nulmodem import LinkEvent
from dxserial.transports.base import Port, PushPort

log = logging.getLogger("dxserial.link")

#: Messages waiting to go out before readers that feed them are paused.
DEFAULT_HIGH_WATER = 64

# After a write, the program it woke (an engine, a peer bridge) is often put on this very
# CPU by the scheduler, behind us: yielding once lets it read at once, instead of after the
# bookkeeping and judging that follow the write (measured on a 2-CPU machine: a real game's
# message through the bridge 330 µs -> 140 µs one way, with engines that think between
# messages).  A yield with nothing else to run on this CPU returns at once.
_sched_yield = getattr(os, "sched_yield", lambda: None)


class _YieldOnce:
    """One yield per event-loop callback, after its first write.

    A read that brought hundreds of messages writes them one by one; a yield after each
    handed the CPU to the reader hundreds of times (bulk throughput fell to a third).
    Shared by every driver of the process: one loop runs one callback at a time.
    """

    due = False

    def arm(self) -> None:
        self.due = True

    def after_write(self) -> None:
        if self.due:
            self.due = False
            _sched_yield()


_yield_cpu = _YieldOnce()


class LinkDriver:
    """One layer-1 link, the port it currently runs on, a writer task and a timer."""

    def __init__(
        self,
        link: Layer1Link,
        on_event: Callable[[LinkEvent], None],
        *,
        name: str,
        high_water: int = DEFAULT_HIGH_WATER,
    ) -> None:
        self.link = link
        self.name = name
        self.high_water = high_water
        self._on_event = on_event
        self._port: Port | None = None
        self._backlog: bytes | None = None  # handed out by the link, not yet written
        self._wakeup = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._attached_before = False
        self._servicing = False
        self._again = False
        self._watchers: list[tuple[Callable[[], None], Callable[[], None]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def port(self) -> Port | None:
        return self._port

    def now(self) -> float:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop.time()

    def attach(self, port: Port) -> None:
        """Start using ``port``; after a previous port, unconfirmed output is sent again."""
        if self._attached_before:
            self._backlog = None  # the link's reset() takes it back
            self.link.reset()
            self.link.poll(self.now())  # start the message in flight over at once
        self._attached_before = True
        self._port = port
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_loop(), name=f"{self.name}-writer")
        self.service()

    def detach(self) -> Port | None:
        """Stop using the current port (it was lost or replaced); returns it for closing."""
        port, self._port = self._port, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return port

    def send(self, raw: bytes, *, checked: bool = False) -> None:
        """Queue one message; raises :class:`~dxserial.errors.FramingError` when full."""
        self.link.send(raw, self.now(), checked=checked)
        self.service()

    def feed(self, data: bytes) -> None:
        _yield_cpu.arm()
        self.link.receive_data(data, self.now())
        self.service()

    async def room(self) -> None:
        """Wait until fewer than ``high_water`` messages wait to go out on this link."""
        await self._room.wait()

    async def read_until_lost(
        self, port: Port, gate: LinkDriver | None = None
    ) -> DxSerialError | None:
        """Feed everything read from ``port`` to the link; return why reading stopped.

        ``gate`` is the driver whose queue these messages feed: while it is full, reading
        pauses (backpressure).  ``None`` means a clean end of file (a TCP peer that closed).
        Where the port can push (:meth:`~dxserial.transports.base.StreamPort.start_push`),
        each chunk is handled in the transport's own callback, with no task switch.
        """
        if isinstance(port, PushPort):
            loop = asyncio.get_running_loop()
            ended: asyncio.Future[DxSerialError | None] = loop.create_future()

            def on_end(why: DxSerialError | None) -> None:
                if not ended.done():
                    ended.set_result(why)

            if port.start_push(self.feed, on_end):
                watch = None
                if gate is not None:
                    watch = gate.watch_room(port.pause_reading, port.resume_reading)
                try:
                    return await ended
                finally:
                    if gate is not None and watch is not None:
                        gate.unwatch_room(watch)
        while True:
            if gate is not None:
                await gate.room()
            try:
                data = await port.read()
            except DxSerialError as exc:
                return exc
            except OSError as exc:
                return PortError(f"{self.name}: {exc}")
            if not data:
                return None
            self.feed(data)

    def watch_room(
        self, on_full: Callable[[], None], on_room: Callable[[], None]
    ) -> tuple[Callable[[], None], Callable[[], None]]:
        """Call ``on_full`` when this link's queue reaches the high-water mark, ``on_room``
        when it has room again (now, too, if it is full already)."""
        watch = (on_full, on_room)
        self._watchers.append(watch)
        if not self._room.is_set():
            on_full()
        return watch

    def unwatch_room(self, watch: tuple[Callable[[], None], Callable[[], None]]) -> None:
        if watch in self._watchers:
            self._watchers.remove(watch)
            if not self._room.is_set():
                watch[1]()

    def service(self) -> None:
        """Hand out events, write what the kernel takes now, re-arm the timer.

        Re-entrant calls (an event handler that sends on this same link) are folded into
        the running one.
        """
        if self._servicing:
            self._again = True
            return
        self._servicing = True
        link = self.link
        try:
            self._again = True
            while self._again:
                self._again = False
                for event in link.events():
                    self._on_event(event)
                if self._port is not None and self._backlog is None:
                    self._write_now(self._port)
        finally:
            self._servicing = False
        if self._timer is not None or link.next_deadline() is not None:
            self._arm_timer()
        full = link.queued >= self.high_water
        if full == self._room.is_set():  # the room changed: tell the readers it feeds
            if full:
                self._room.clear()
                for on_full, _ in list(self._watchers):
                    on_full()
            else:
                self._room.set()
                for _, on_room in list(self._watchers):
                    on_room()

    def _write_now(self, port: Port) -> None:
        link = self.link
        while True:
            data = link.data_to_send()
            if not data:
                return
            if not port.try_write(data):
                self._backlog = data
                self._wakeup.set()
                return
            _yield_cpu.after_write()
            self._written()

    def _written(self) -> None:
        # Only a write that delivered something needs another pass (NULMODEM echoes do not).
        if self.link.confirm_written():
            self._again = True

    def _arm_timer(self) -> None:
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
        _yield_cpu.arm()
        self.link.poll(self.now())
        self.service()

    async def _write_loop(self) -> None:
        """Writes the backlog once the transport drained, then hands back to service()."""
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            port, data = self._port, self._backlog
            if port is None or data is None:
                continue
            try:
                await port.write(data)
            except (DxSerialError, OSError) as exc:
                log.debug("%s: write failed: %s", self.name, exc)
                continue  # the reader sees the loss; attach() re-sends what was unconfirmed
            if self._port is port and self._backlog is data:
                self._backlog = None
                self._written()
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
