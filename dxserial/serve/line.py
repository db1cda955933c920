"""One line of a rig: its bridge, kept running whatever the port or the bridge does.

The bridge (:class:`~dxserial.bridge.runner.Bridge`) already reopens a port that vanishes
while it runs.  What this adds is what a daemon of many lines needs: a port that is not
there when the line starts is waited for (a serial number is looked up again on each
attempt), a bridge that ends by itself or fails is started again after a pause, and every
record the line logs goes to a logger of its own, so each carries the line's name.  A
line's faults stay in its task: nothing here lets an exception reach another line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dxserial.bridge.judge import SERIAL
from dxserial.bridge.runner import Bridge
from dxserial.bridge.statefile import port_identity
from dxserial.errors import DxSerialError
from dxserial.files import output_dir
from dxserial.game.trace import TraceWriter
from dxserial.protocol.messages import AcceptCode, GameAccept, GameEnd, GameRequest, Message, Move
from dxserial.serve.rig import LineSpec
from dxserial.serve.usb import find_serial_number
from dxserial.transports.tcp import format_address
from dxserial.wirelog import enabled as wire_enabled
from dxserial.wirelog import log_crossing

#: Seconds between attempts to start a line whose port or address is not available.
RETRY_INTERVAL = 1.0
#: Seconds before a bridge that ended by itself (or failed) is started again.
RESTART_PAUSE = 5.0


def line_logger(name: str) -> logging.Logger:
    """The logger of line ``name``; its records carry ``line`` for the formatter."""
    return logging.getLogger(f"dxserial.line.{name}")


class _Tally(logging.Filter):
    """Marks each record with the line's name and counts the line's warnings."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.line = name
        self.warnings = 0
        self.last_warning = ""

    def filter(self, record: logging.LogRecord) -> bool:
        record.line = self.line
        if record.levelno >= logging.WARNING:
            self.warnings += 1
            self.last_warning = record.getMessage()
        return True


class LineRunner:
    """Runs one :class:`LineSpec` until :meth:`stop`; :meth:`status` says how it goes."""

    def __init__(
        self,
        spec: LineSpec,
        *,
        watch: Callable[[str, dict[str, Any]], None] | None = None,
        retry: float = RETRY_INTERVAL,
        restart_pause: float = RESTART_PAUSE,
        finder: Callable[[str], str | None] = find_serial_number,
    ) -> None:
        self.spec = spec
        self._find = finder
        self.name = spec.name
        self.log = line_logger(spec.name)
        self._tally = _Tally(spec.name)
        for old in [f for f in self.log.filters if isinstance(f, _Tally)]:
            self.log.removeFilter(old)  # a line removed and added again by a reload
        self.log.addFilter(self._tally)
        self._watch = watch
        self.retry = retry
        self.restart_pause = restart_pause
        self.state = "starting"
        self.detail = ""
        self.port = ""
        self.bridge: Bridge | None = None
        self.since = time.time()
        self.starts = 0
        self.games = 0
        self.engines: tuple[str, str] = ("", "")
        self.moves = 0
        self._asking = "?"  # the initiator of the GAMEREQ on its way
        self._in_game = False
        self._wire = False
        self.counts: dict[str, int] = {}  # of the bridges of this line that ended
        self._stop = asyncio.Event()
        self._said = ""
        self.task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ running

    def start(self) -> asyncio.Task[None]:
        self.task = asyncio.create_task(self._run(), name=f"line-{self.name}")
        return self.task

    def stop(self) -> None:
        """End the line (a signal handler may call this): its bridge closes its games."""
        self._stop.set()
        if self.bridge is not None:
            self.bridge.stop()

    async def wait(self) -> None:
        if self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)

    async def _run(self) -> None:
        try:
            while not self._stop.is_set():
                pause = await self._once()
                if pause and not self._stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop.wait(), pause)
        finally:
            self._set("stopped", "")

    async def _once(self) -> float:
        """One bridge on the line, start to end; the pause before the next (0: none)."""
        spec = self.spec
        port = spec.config.port
        if spec.serial_number is not None:
            found = self._find(spec.serial_number)
            if found is None:
                self._waiting(f"no USB adapter with serial number {spec.serial_number} is "
                              "plugged in")
                return self.retry
            port = found
        self.port = port
        writer = None
        try:
            config = replace(spec.config, port=port)
            if config.pdn is not None:
                config = replace(config, pdn=output_dir(config.pdn, "PDN folder"))
            writer = TraceWriter(spec.trace) if spec.trace is not None else None
            self._wire = wire_enabled()
            self.bridge = Bridge(
                config, trace=writer, on_ready=self._ready, logger=self.log,
                observer=self._observed,  # the status's engines and games: no board work
                watch=self._watch_news if self._watch is not None else None,
                identity=port_identity(port, spec.serial_number),
            )
            self.starts += 1
            follow = None
            if spec.serial_number is not None:
                follow = asyncio.create_task(self._follow(spec.serial_number, port))
            try:
                await self.bridge.run()
            finally:
                if follow is not None:
                    follow.cancel()
        except DxSerialError as exc:  # the port is not there, busy, the address taken ...
            if self.state == "running":
                self._failed(f"{exc}")
                return self.restart_pause
            self._waiting(str(exc))
            return self.retry
        except Exception as exc:  # a bug must not take the other lines down
            self.log.exception("line failed: %s", exc)
            self._set("failed", str(exc))
            return self.restart_pause
        finally:
            if writer is not None:
                writer.close()
            self._keep_counts()
        if self._stop.is_set():
            return 0.0
        self._failed("the bridge ended by itself")
        return self.restart_pause

    async def _follow(self, serial: str, port: str) -> None:
        """While the port is lost, look for the adapter: on another path (no udev link,
        ttyUSB0 came back as ttyUSB1) the bridge reopens it there, its sessions kept; alone
        it would wait for the old path."""
        while True:
            await asyncio.sleep(self.retry)
            bridge = self.bridge
            if bridge is None or bridge.driver.port(SERIAL) is not None:
                continue
            found = self._find(serial)
            if found is not None and found != port:
                self.log.warning("the adapter with serial number %s is back as %s (was %s): "
                                 "the line reopens it there", serial, found, port)
                bridge.move_port(found)
                self.port = port = found

    def _keep_counts(self) -> None:
        bridge, self.bridge = self.bridge, None
        if bridge is None:
            return
        for key, value in bridge.counters.items():
            self.counts[key] = self.counts.get(key, 0) + value

    def _ready(self, line: str) -> None:
        self._said = ""
        self._set("running", line.removeprefix("bridge ready: "))
        self.log.info("%s", line)

    def _waiting(self, why: str) -> None:
        self._set("waiting", why)
        if why != self._said:  # said once, not every retry
            self._said = why
            self.log.warning("waiting: %s; trying again every %g s", why, self.retry)

    def _failed(self, why: str) -> None:
        self._set("restarting", why)
        self.log.error("%s; starting it again in %g s", why, self.restart_pause)

    def _set(self, state: str, detail: str) -> None:
        if state != self.state:
            self.since = time.time()
        self.state, self.detail = state, detail

    def _observed(self, direction: str, message: Message) -> None:
        """Each message queued across: who plays, how far, how many games (the live view's
        news would tell the same, at the cost of a board position per move)."""
        if self._wire:
            log_crossing(direction, message)
        side = direction.partition("->")[0]
        if isinstance(message, Move):
            self.moves += 1
        elif isinstance(message, GameRequest):
            self._asking = f"{message.name.strip() or '?'} ({side})"
        elif isinstance(message, GameAccept):
            if message.code is AcceptCode.ACCEPT:
                self.engines = (self._asking, f"{message.name.strip() or '?'} ({side})")
                self.moves = 0
                self._in_game = True
        elif isinstance(message, GameEnd) and self._in_game:
            self._in_game = False
            self.games += 1

    def _watch_news(self, event: dict[str, Any]) -> None:
        if self._watch is not None:
            self._watch(self.name, event)

    # ------------------------------------------------------------------ status

    def status(self) -> dict[str, Any]:
        """This line as the status command and the web page show it (JSON-ready)."""
        bridge = self.bridge
        counts = dict(self.counts)
        peer = None
        serial_open = False
        listen = None
        if bridge is not None:
            for key, value in bridge.counters.items():
                counts[key] = counts.get(key, 0) + value
            peer = bridge.tcp_peer
            serial_open = bridge.driver.port(SERIAL) is not None
            if bridge.listen_address is not None:
                listen = _address(bridge.listen_address)
        config = self.spec.config
        state = self.state
        if state == "running" and not serial_open:
            state = "port lost"
        return {
            "line": self.name,
            "port": self.spec.where,
            "device": self.port,
            "state": state,
            "detail": self.detail,
            "since": round(self.since, 3),
            "listen": listen or _address(config.listen),
            "connect": _address(config.connect),
            "peer": peer,
            "engines": list(self.engines),
            "games": self.games,
            "moves": self.moves,
            "messages": counts.get("serial->tcp", 0) + counts.get("tcp->serial", 0),
            "counts": counts,
            "warnings": self._tally.warnings,
            "last_warning": self._tally.last_warning,
            "starts": self.starts,
        }


def _address(where: tuple[str, int] | None) -> str | None:
    return None if where is None else format_address(where[0], where[1])


__all__ = ["RESTART_PAUSE", "RETRY_INTERVAL", "LineRunner", "line_logger"]
