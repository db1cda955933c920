"""The one asyncio driver: runs any program's sans-I/O machine (docs/driver.md).

A side is a layer-1 link (or raw bytes) over whatever port the program attaches to it; the
driver feeds the machine what the links report, applies the actions it returns, keeps one
timer on :meth:`Machine.next_deadline`, and stops on a signal, on :meth:`stop` or on a
:class:`~dxserial.drive.actions.Done`.  How ports come and go (a serial port reopened, a
TCP listener, an engine's endpoint) is the program's: it calls :meth:`attach`,
:meth:`read` and :meth:`detach`, and tells the machine with :meth:`act`.

Actions are applied in order from one queue: an input that arrives while actions are being
applied (a link that confirms a delivery during a write) queues its actions behind them, so
nothing is applied from inside another apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dxserial.drive.actions import (
    Action,
    Done,
    Forget,
    Hangup,
    Log,
    News,
    Observed,
    Say,
    Send,
    Trace,
    Withdraw,
    Work,
    WriteRecord,
)
from dxserial.drive.flood import FloodGuard
from dxserial.drive.machine import Machine
from dxserial.errors import DxSerialError, FramingError, PortError
from dxserial.game.record import GameRecord
from dxserial.protocol.links import Layer1Link
from dxserial.protocol.messages import Message
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)
from dxserial.transports.base import Port
from dxserial.transports.linkdriver import DEFAULT_HIGH_WATER, LinkDriver

S = TypeVar("S", bound=str)
T = TypeVar("T")
#: The longest a stop waits, past its grace, for a NULMODEM frame under way to end.
FRAME_DRAIN_LIMIT = 30.0


@dataclass
class _Side(Generic[S]):
    name: S
    pump: LinkDriver | None  # None: raw bytes, no layer-1 link (the probe)
    gate: str | None  # the side whose queue what is read here feeds (backpressure)
    port: Port | None = None  # a raw side's port
    unwritten: deque[bytes] = field(default_factory=deque)  # a raw side's, in order
    writer: asyncio.Task[None] | None = None


class Driver(Generic[S]):
    """Runs one machine until it is done or stopped; see the module docstring."""

    def __init__(
        self,
        machine: Machine[S],
        *,
        log: logging.Logger,
        trace: Callable[[dict[str, Any]], None] | None = None,
        record: Callable[[GameRecord], None] | None = None,
        say: Callable[[str], None] | None = None,
        observer: Callable[[str, Message], None] | None = None,
        watch: Callable[[dict[str, Any]], None] | None = None,
        flood: FloodGuard | None = None,
        on_action: Callable[[Action], None] | None = None,
    ) -> None:
        self.machine = machine
        self.log = log
        self._trace = trace
        self._record = record
        self._say = say
        self._observer = observer
        self._watch = watch
        self._flood = flood or FloodGuard()
        self._on_action = on_action  # the program's own actions (Reopen, ...)
        self._sides: dict[str, _Side[S]] = {}
        self._queue: deque[Action] = deque()
        self._applying = False
        self._settle_due = False
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = asyncio.Event()
        self._working = False  # a Work job runs: inputs wait in _held, in order
        self._held: deque[Callable[[], None]] = deque()
        self._jobs: set[asyncio.Task[None]] = set()
        self._closed = False  # no timer after close(): the machine's last words only
        self.done: Done | None = None

    # ------------------------------------------------------------------ set-up

    def add_side(
        self,
        side: S,
        link: Layer1Link | None,
        *,
        gate: S | None = None,
        high_water: int = DEFAULT_HIGH_WATER,
    ) -> None:
        """A side with a layer-1 link (``None``: raw bytes to :meth:`Machine.line`)."""
        pump = None
        if link is not None:
            pump = LinkDriver(
                link, lambda event: self._on_event(side, event), name=side,
                high_water=high_water,
            )
        self._sides[side] = _Side(side, pump, gate)

    def pump(self, side: S) -> LinkDriver:
        """The link driver of ``side`` (its link, port and queue)."""
        pump = self._sides[side].pump
        assert pump is not None, f"{side} has no layer-1 link"
        return pump

    def port(self, side: S) -> Port | None:
        entry = self._sides[side]
        return entry.pump.port if entry.pump is not None else entry.port

    def now(self) -> float:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop.time()

    # ------------------------------------------------------------------ ports

    def attach(self, side: S, port: Port) -> None:
        """Start using ``port`` for ``side`` (unconfirmed output is sent again on it)."""
        entry = self._sides[side]
        if entry.pump is not None:
            entry.pump.attach(port)
        else:
            entry.port = port

    def detach(self, side: S) -> Port | None:
        """Stop using ``side``'s port (lost or replaced); returns it for closing."""
        entry = self._sides[side]
        if entry.pump is not None:
            return entry.pump.detach()
        port, entry.port = entry.port, None
        entry.unwritten.clear()
        return port

    async def read(self, side: S, port: Port) -> DxSerialError | None:
        """Feed what ``port`` reads to ``side`` until it ends; why (``None``: clean end)."""
        entry = self._sides[side]
        if entry.pump is not None:
            gate = self._sides[entry.gate].pump if entry.gate is not None else None
            return await entry.pump.read_until_lost(port, gate=gate)
        while True:
            try:
                data = await port.read()
            except DxSerialError as exc:
                return exc
            except OSError as exc:
                return PortError(f"{side}: {exc}")
            if not data:
                return None
            self._input(self._line_feed(side, data))

    def _line_feed(self, side: S, data: bytes) -> Callable[[], None]:
        return lambda: self.apply(self.machine.line(side, data, self.now()))

    async def until_stopped(self, awaitable: Awaitable[T]) -> T | None:
        """``awaitable``'s result, or ``None`` if a stop comes first (then it is cancelled)."""
        task = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._stopping.wait())
        try:
            done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return None

    # ------------------------------------------------------------------ inputs

    def act(self, call: Callable[[float], list[Action]]) -> None:
        """Give the machine an input now (``call`` gets the clock) and apply its answer."""
        self._input(lambda: self.apply(call(self.now())))

    def _input(self, feed: Callable[[], None]) -> None:
        if self._working:
            self._held.append(feed)
        else:
            feed()

    def _on_event(self, side: S, event: LinkEvent) -> None:
        if self._working:  # a job runs: the machine takes this after it, in order
            self._held.append(lambda: self._on_event(side, event))
            return
        machine = self.machine
        if isinstance(event, MessageReceived):
            self._received(side, event.raw)
        elif isinstance(event, MessageDelivered):
            self.apply(machine.delivered(side, event.raw, self.now()))
        elif isinstance(event, LinkDown):
            why = str(event.error)
            self.apply(machine.link_down(side, list(event.undelivered), why, self.now()))
        elif isinstance(event, LinkProblem):
            self.apply(machine.line_problem(side, event, self.now()))

    def _received(self, side: S, raw: bytes) -> None:
        self._settle_due = True
        self.apply(self.machine.receive(side, raw, self.now()))

    # ------------------------------------------------------------------ actions

    def apply(self, actions: list[Action]) -> None:
        """Carry out ``actions`` in order, after any already queued."""
        if self._applying:  # an input while actions are applied: its actions wait behind
            self._queue.extend(actions)
            return
        self._applying = True
        do, queue = self._do, self._queue
        try:
            for action in actions:
                do(action)
            while True:
                while queue:
                    do(queue.popleft())
                if not self._settle_due:
                    break
                self._settle_due = False  # the writes are done: now the judgement
                queue.extend(self.machine.settle())
        finally:
            self._applying = False
        self._arm_timer()

    def _do(self, action: Action) -> None:
        if isinstance(action, Send):  # the most frequent first
            entry = self._sides[action.side]
            if entry.pump is None:
                self._write_raw(entry, action.raw)
                return
            try:
                entry.pump.send(action.raw, checked=action.checked)
            except FramingError as exc:
                self._queue.extend(
                    self.machine.undelivered(entry.name, [action.raw], str(exc), self.now())
                )
        elif isinstance(action, Log):
            self._log(action.level, action.text, action.kind)
        elif isinstance(action, Trace):
            if self._trace is not None:
                self._trace(action.fields)
        elif isinstance(action, Forget):
            self.pump(self._sides[action.side].name).link.clear()
        elif isinstance(action, Withdraw):
            link = self.pump(self._sides[action.side].name).link
            if isinstance(link, NulModemLink):
                link.withdraw(action.raw)
        elif isinstance(action, WriteRecord):
            if self._record is not None:
                self._record(action.record)
        elif isinstance(action, Observed):
            if self._observer is not None:
                self._observer(action.direction, action.message)
        elif isinstance(action, News):
            if self._watch is not None:
                self._watch(action.news.event())
        elif isinstance(action, Say):
            if self._say is not None:
                self._say(action.text)
        elif isinstance(action, Work):
            self._start_work(action)
        elif isinstance(action, Hangup):
            self._hang_up(self._sides[action.side].name)
        elif isinstance(action, Done):
            if self.done is None:
                self.done = action
            self._stopping.set()
        elif self._on_action is not None:
            self._on_action(action)

    def _write_raw(self, entry: _Side[S], data: bytes) -> None:
        """A raw side writes bytes as they are: now if the kernel takes them, else in order."""
        port = entry.port
        if port is None:
            return
        if not entry.unwritten and port.try_write(data):
            return
        entry.unwritten.append(data)
        if entry.writer is None or entry.writer.done():
            entry.writer = asyncio.ensure_future(self._write_later(entry, port))
            self._jobs.add(entry.writer)
            entry.writer.add_done_callback(self._jobs.discard)

    async def _write_later(self, entry: _Side[S], port: Port) -> None:
        while entry.unwritten and entry.port is port:
            try:
                await port.write(entry.unwritten.popleft())
            except (DxSerialError, OSError) as exc:  # the reader sees the loss
                self.log.debug("%s: write failed: %s", entry.name, exc)
                entry.unwritten.clear()

    def _log(self, level: int, text: str, kind: str | None) -> None:
        """Log (and trace) one line; a flood of one ``kind`` is summarised in the log only:
        the trace keeps every line (docs/bridge.md, "The log and the trace")."""
        if not self.log.isEnabledFor(level) and self._trace is None:
            return
        if kind is not None:
            show, hidden = self._flood.allow(kind, self.now())
            if hidden:
                tail = " (held back from the log; every one is in the trace)"
                self.emit(
                    logging.WARNING,
                    self._flood.summary(kind, hidden, *((tail,) if self._trace else ())),
                )
            if not show:
                self._trace_event(level, text, held=True)
                return
        self.emit(level, text)

    def _trace_event(self, level: int, text: str, *, held: bool = False) -> None:
        """One log line as a trace record, from INFO up (``held``: not in the log)."""
        if level >= logging.INFO and self._trace is not None:
            fields: dict[str, Any] = {
                "kind": "event", "level": logging.getLevelName(level).lower(), "text": text,
            }
            if held:
                fields["log"] = "held back"
            self._trace(fields)

    def flood_drain(self) -> list[tuple[str, int]]:
        """The kinds of line still hidden by the flood guard, and how many of each."""
        return list(self._flood.drain())

    def emit(self, level: int, text: str) -> None:
        """One line to the log, and to the trace from INFO up."""
        self.log.log(level, text)
        self._trace_event(level, text)

    def _hang_up(self, side: S) -> None:
        port = self.detach(side)
        if port is not None:
            task = asyncio.ensure_future(port.close())
            self._jobs.add(task)
            task.add_done_callback(self._jobs.discard)

    def _start_work(self, work: Work) -> None:
        hold = work.hold or work.then is None
        if hold:
            self._working = True

        async def run() -> None:
            try:
                result = await asyncio.to_thread(work.job)
            finally:
                if hold:
                    self._working = False
            self.apply(result if work.then is None else work.then(result, self.now()))
            while self._held and not self._working:
                self._held.popleft()()

        task = asyncio.ensure_future(run())
        self._jobs.add(task)
        task.add_done_callback(self._job_done)

    def _job_done(self, task: asyncio.Task[None]) -> None:
        self._jobs.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.error("%s", task.exception())
            if self.done is None:
                self.done = Done(1, f"failed: {task.exception()}")
            self._stopping.set()

    # ------------------------------------------------------------------ timer

    def _arm_timer(self) -> None:
        if self._closed:
            return
        deadline = self.machine.next_deadline()
        timer = self._timer
        if timer is None and deadline is None:  # the usual case: nothing waits
            return
        if timer is not None:
            if deadline is not None and timer.when() == deadline:
                return
            timer.cancel()
            self._timer = None
        if deadline is not None:
            loop = self._loop or asyncio.get_running_loop()
            self._timer = loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.act(self.machine.poll)
        if self._timer is None:
            self._arm_timer()

    # ------------------------------------------------------------------ running

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Stop (a signal handler may call this): the machine winds down, then the run ends."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self.act(self.machine.stop)

    def end(self, done: Done | None = None) -> None:
        """End the run now, without the machine's stop (a port failed under it)."""
        if done is not None and self.done is None:
            self.done = done
        self._stopping.set()

    async def wait(self) -> Done | None:
        """Until the machine is done or :meth:`stop` is called; the :class:`Done`, if any."""
        await self._stopping.wait()
        return self.done

    async def drain(self, timeout: float) -> None:
        """Give the messages in flight up to ``timeout`` seconds to be delivered; then a
        frame under way still ends (a NULMODEM line: never cut mid-message), none starts."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        links = [
            e.pump.link for e in self._sides.values()
            if e.pump is not None and e.pump.port is not None
        ]
        while loop.time() < deadline:
            if not any(link.queued or not link.idle for link in links) and not self._working:
                return
            await asyncio.sleep(0.01)
        framed = [link for link in links if isinstance(link, NulModemLink)]
        for link in framed:
            link.finish_frame()
        # Each byte is echoed or its echo times out, which ends the attempt: bounded.
        hard = loop.time() + FRAME_DRAIN_LIMIT
        while loop.time() < hard and any(link.mid_frame for link in framed):
            await asyncio.sleep(0.01)

    def signals(self, *signums: int) -> contextlib.AbstractContextManager[None]:
        """SIGINT and SIGTERM (or ``signums``) call :meth:`stop` while inside."""
        return on_signals(self.stop, *signums)

    async def close(self) -> None:
        """Cancel the timer and any job; close every side's link driver and port."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for job in list(self._jobs):
            job.cancel()
        await asyncio.gather(*self._jobs, return_exceptions=True)
        for entry in self._sides.values():
            if entry.pump is not None:
                await entry.pump.close()
            elif entry.port is not None:
                port, entry.port = entry.port, None
                with contextlib.suppress(Exception):
                    await port.close()


@contextlib.contextmanager
def on_signals(stop: Callable[[], None], *signums: int) -> Iterator[None]:
    """SIGINT and SIGTERM (or ``signums``) call ``stop`` while inside (every command's way)."""
    loop = asyncio.get_running_loop()
    chosen = signums or (signal.SIGINT, signal.SIGTERM)
    installed = []
    for signum in chosen:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


__all__ = ["Driver", "on_signals"]
