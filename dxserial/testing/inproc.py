"""A bridge in the test's own event loop: on an in-process cable, with an engine on its
other end, and nothing but the bridge's TCP side outside the process.

:func:`bridge_on_cable` runs a :class:`~dxserial.bridge.runner.Bridge` on
``memory://NAME`` (:mod:`dxserial.sim.memory`) with the log lines it writes kept for the
test and its trace in a file; :class:`LoopPeer` is the serial engine on end b, the
project's own layer-1 link (NULMODEM or NUL frames) driven by the same loop.  A DXP client
(:class:`~dxserial.testing.peers.DxpClient`, its own thread) talks to the bridge over
127.0.0.1.  Only the bridge's public surface is used (constructor, ``run()``, ``stop()``,
``counters``, ``listen_address``), so these tests hold whatever drives the bridge inside.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dxserial.bridge.runner import Bridge
from dxserial.bridge.settings import BridgeConfig
from dxserial.engine.player import Player
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.errors import PortError
from dxserial.game.trace import TraceWriter
from dxserial.protocol.links import Layer1Link, NulLink, NulModemSettings
from dxserial.protocol.nulmodem import NulModemLink
from dxserial.sim.memory import Cable, MemoryPort, cable
from dxserial.testing.peers import SerialPeer
from dxserial.testing.process import Progress
from dxserial.transports.base import Port
from dxserial.transports.endpoints import (
    EndpointKind,
    EndpointSpec,
    EngineEndpoint,
    LinkOptions,
    parse_engine_endpoint,
)

_names = itertools.count(1)


class LoopPeer(SerialPeer):
    """A serial engine on a :class:`MemoryPort`: a layer-1 link run by the event loop.

    What it receives and delivers is kept as by the threaded peers
    (:class:`~dxserial.testing.peers.SerialPeer`); :meth:`pause` stops it reading (a hung
    engine), so what the bridge writes backs up in the cable.
    """

    def __init__(self, port: MemoryPort, link: Layer1Link) -> None:
        super().__init__()
        self.port = port
        self.link = link
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._writing: asyncio.Task[None] | None = None
        port.start_push(self._feed, self._ended)

    def send(self, raw: bytes) -> None:
        """Queue ``raw``; from another thread too (a blocking dialogue in a worker thread)."""
        if self._elsewhere(self.send, raw):
            return
        self.link.send(raw, self._loop.time())
        self._pump()

    def _elsewhere(self, method: Callable[..., None], *args: Any) -> bool:
        """Called from another thread: hand the call to the loop's thread (True)."""
        try:
            if asyncio.get_running_loop() is self._loop:
                return False
        except RuntimeError:
            pass
        self._loop.call_soon_threadsafe(method, *args)
        return True

    def pause(self) -> None:
        if not self._elsewhere(self.pause):
            self.port.pause_reading()

    def resume(self) -> None:
        if not self._elsewhere(self.resume):
            self.port.resume_reading()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._writing is not None:
            self._writing.cancel()
        self._loop.create_task(self.port.close())

    def _feed(self, data: bytes) -> None:
        self.link.receive_data(data, self._loop.time())
        self._pump()

    def _ended(self, why: object) -> None:
        self.down.append(str(why))

    def _poll(self) -> None:
        self._timer = None
        self.link.poll(self._loop.time())
        self._pump()

    def _pump(self) -> None:
        """Write what the link has (the rest waits for room), hand out events, re-arm."""
        link = self.link
        while self._writing is None:
            out = link.data_to_send()
            if not out:
                break
            if not self.port.try_write(out):
                self._writing = self._loop.create_task(self._write_later(out))
                break
            link.confirm_written()
        self.note(link.events())
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = link.next_deadline()
        if deadline is not None:
            self._timer = self._loop.call_at(deadline, self._poll)

    async def _write_later(self, out: bytes) -> None:
        await self.port.write(out)
        self._writing = None
        self.link.confirm_written()
        self._pump()


def nulmodem_peer(port: MemoryPort, *, timeout: float, max_attempts: int = 100000,
                  seed: int = 1, max_queue: int = 1_000_000, backoff: float = 0.5) -> LoopPeer:
    """A NULMODEM engine (echo handshake) on ``port``; ``backoff``: the longest it waits
    after a wrong echo before it starts over."""
    link = NulModemLink(timeout=timeout, max_attempts=max_attempts, rng=random.Random(seed),
                        max_queue=max_queue, backoff=backoff)
    return LoopPeer(port, link)


def nul_peer(port: MemoryPort, *, max_queue: int = 1_000_000) -> LoopPeer:
    """An engine that speaks NUL frames on ``port``."""
    return LoopPeer(port, NulLink(max_queue=max_queue))


class CableEnd(EngineEndpoint):
    """An engine's endpoint on a port the test holds (an in-process cable's end b)."""

    def __init__(self, port: MemoryPort, options: LinkOptions) -> None:
        super().__init__(EndpointSpec(EndpointKind.SERIAL, "memory (end b)", port="memory"),
                         options)
        self._given: MemoryPort | None = port

    async def open_early(self) -> None:
        return None

    async def open(self, timeout: float | None = None) -> Port:
        given, self._given = self._given, None
        if given is None:
            raise PortError("the cable's end b is taken")
        return given


def engine_task(player: Player, where: MemoryPort | str, options: LinkOptions | None = None
                ) -> asyncio.Task[RunResult]:
    """``player`` run as ``dxserial engine`` runs it, in this loop: on a cable's end, or on
    an ENDPOINT (``tcp://127.0.0.1:PORT``, ``listen://127.0.0.1:0``)."""
    opts = options or LinkOptions(nulmodem=NulModemSettings(timeout=0.3, max_attempts=1000))
    endpoint = (EngineEndpoint(parse_engine_endpoint(where), opts) if isinstance(where, str)
                else CableEnd(where, opts))
    runner = EngineRunner(player, endpoint, on_line=lambda _: None)
    return asyncio.get_running_loop().create_task(runner.run(), name="engine")


class _Lines(logging.Handler):
    """Keeps each log line as ``dxserial bridge`` writes it to stderr."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(
            logging.Formatter("%(asctime)s.%(msecs)03d %(levelname)s %(message)s", "%H:%M:%S")
        )

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@dataclass
class BridgeRun:
    """A bridge running in this loop on ``cable`` end a; the engine goes on end b."""

    bridge: Bridge
    cable: Cable
    trace_path: Path
    task: asyncio.Task[None]
    lines: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        assert self.bridge.listen_address is not None
        return self.bridge.listen_address[1]

    def log(self) -> str:
        """Every line the bridge logged so far, debug included, one per line."""
        return "\n".join(self.lines)

    async def stop(self) -> dict[str, int]:
        """Stop the bridge and return its closing counts."""
        self.bridge.stop()
        await self.task
        return self.bridge.counters


async def until(done: Callable[[], bool], progress: Callable[[], object] = lambda: 0, *,
                stall: float = 10.0, limit: float = 60.0) -> bool:
    """:func:`~dxserial.testing.process.wait_for` for a coroutine: wait until ``done()``;
    give up when ``progress()`` stands still ``stall`` s or after ``limit`` s."""
    loop = asyncio.get_running_loop()
    watch = Progress(progress, stall, limit, loop.time())
    while not done():
        if watch.gave_up(loop.time()):
            return done()
        await asyncio.sleep(0.005)
    return True


@asynccontextmanager
async def bridge_on_cable(
    directory: Path, *, link: str = "nulmodem", echo_timeout: float = 0.3,
    max_attempts: int = 100000, cable_args: dict[str, Any] | None = None,
    name: str | None = None, **config: Any,
) -> AsyncIterator[BridgeRun]:
    """A :class:`Bridge` on a fresh in-process cable, listening on 127.0.0.1 (a free port),
    tracing to ``directory/trace.jsonl``; stopped (if the test did not) when the block ends.

    ``config``: more :class:`~dxserial.bridge.settings.BridgeConfig` fields.  The serial
    state check is off unless asked for (a scripted peer would not answer it); its record
    goes in ``directory``.  ``name``: the cable's (``memory://NAME``, the same line again).
    """
    name = name or f"test{next(_names)}"
    config.setdefault("serial_check", False)
    config.setdefault("state_dir", directory)  # the record of the serial engine's game
    cfg = BridgeConfig(
        port=f"memory://{name}", link=link,  # type: ignore[arg-type]
        nulmodem=NulModemSettings(timeout=echo_timeout, max_attempts=max_attempts),
        **{"listen": ("127.0.0.1", 0), **config},
    )
    lines = _Lines()
    logger = logging.getLogger("dxserial")
    level = logger.level
    logger.addHandler(lines)
    logger.setLevel(logging.DEBUG)
    trace_path = directory / "trace.jsonl"
    try:
        with cable(name, **(cable_args or {})) as made:
            ready = asyncio.Event()
            bridge = Bridge(cfg, trace=TraceWriter(trace_path), on_ready=lambda _: ready.set())
            task = asyncio.create_task(bridge.run(), name="bridge")
            waiter = asyncio.create_task(ready.wait())
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if task.done():
                await task  # it failed to start: its error
            run = BridgeRun(bridge, made, trace_path, task, lines.lines)
            try:
                yield run
            finally:
                if not task.done():
                    bridge.stop()
                    await task
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)


class BridgeThread:
    """:func:`bridge_on_cable` in a thread of its own, with a NULMODEM engine on end b, for
    a test written as a blocking dialogue (``peer.expect()``, ``client.expect()``) as
    against the processes of :mod:`~dxserial.testing.rig`.

    ``peer``: the engine (:class:`LoopPeer`; its ``send`` and ``expect`` may be called from
    the test's thread).  ``config``: :class:`~dxserial.bridge.settings.BridgeConfig` fields.
    """

    def __init__(self, directory: Path, *, seed: int = 1, echo_timeout: float = 0.3,
                 **config: Any) -> None:
        self._args = (directory, seed, echo_timeout, config)
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._run: BridgeRun | None = None
        self._peer: LoopPeer | None = None
        self.counts: dict[str, int] = {}
        self._thread = threading.Thread(target=self._main, name="bridge-loop", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            self._thread.join(10)
            raise self._error
        assert self._run is not None and self._peer is not None

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # handed to the test's thread
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        directory, seed, echo_timeout, config = self._args
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with bridge_on_cable(directory, echo_timeout=echo_timeout, max_attempts=1000,
                                   **config) as run:
            self._run = run
            self._peer = nulmodem_peer(run.cable.open("b"), timeout=echo_timeout,
                                       max_attempts=1000, seed=seed)
            self._ready.set()
            await self._stop.wait()
            self.counts = await run.stop()
            self._peer.close()
            await asyncio.sleep(0)  # let the peer's port close

    @property
    def peer(self) -> LoopPeer:
        """The NULMODEM engine on the cable's end b."""
        assert self._peer is not None
        return self._peer

    @property
    def run(self) -> BridgeRun:
        assert self._run is not None
        return self._run

    @property
    def port(self) -> int:
        return self.run.port

    @property
    def trace_path(self) -> Path:
        return self.run.trace_path

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.run.task.done()

    def log(self) -> str:
        return self.run.log()

    def trace(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.trace_path.read_text().splitlines()]

    def call(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` in the bridge's loop (an unplug, a replug), and wait for it."""
        assert self._loop is not None
        done = threading.Event()

        def run() -> None:
            try:
                fn()
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    def stop(self) -> dict[str, int]:
        """Stop the bridge (as SIGTERM would) and return its closing counts."""
        if self._thread.is_alive() and self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(30)
        if self._error is not None:
            raise self._error
        return self.counts

    def __enter__(self) -> BridgeThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "BridgeRun",
    "BridgeThread",
    "CableEnd",
    "LoopPeer",
    "bridge_on_cable",
    "engine_task",
    "nul_peer",
    "nulmodem_peer",
    "until",
]
