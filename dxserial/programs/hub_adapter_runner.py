"""Runs :class:`~dxserial.programs.hub_adapter.HubAdapter` on the one driver: Hub on
stdin/stdout, DXP on an endpoint (NULMODEM or NUL frames on a serial line, NUL frames on
TCP), as ``dxserial engine`` does.

:class:`HubMachine` (sans-I/O) turns the driver's inputs into the adapter's and the
adapter's actions into the driver's; the Hub side is a raw side whose port reads and
writes whole lines (:class:`StdioLinePort`).  The Hub side is served at once
(``hub``/``init`` need no engine); the endpoint is opened meanwhile, and a GAMEREQ sent
before it is up waits inside the link.
"""

from __future__ import annotations

import asyncio
import logging

from dxserial.drive.actions import Action, Done, Log, Send
from dxserial.drive.driver import Driver
from dxserial.drive.machine import BaseMachine
from dxserial.engine.runner import RunResult
from dxserial.errors import DxSerialError, MessageError
from dxserial.programs import hub_adapter as adapter_actions
from dxserial.programs.hub_adapter import HubAdapter
from dxserial.protocol import hub
from dxserial.protocol.messages import escape, parse
from dxserial.protocol.nulmodem import LinkProblem
from dxserial.transports.endpoints import EngineEndpoint
from dxserial.transports.stdio_lines import StdioLinePort, StdioLines

log = logging.getLogger("dxserial.hub")

#: Seconds the last messages (a closing GAMEEND) get to be delivered.
DRAIN_TIMEOUT = 5.0
#: The Hub client's side (stdin/stdout, one line per read and write) and the engine's.
HUB, DXP = "hub", "dxp"


class HubMachine(BaseMachine[str]):
    """The adapter's inputs from the driver's, its actions in the driver's vocabulary."""

    def __init__(self, adapter: HubAdapter, *, log_messages: bool = False) -> None:
        self.adapter = adapter
        self._level = logging.INFO if log_messages else logging.DEBUG
        self.result: Done | None = None
        self.drain = False  # the adapter left by itself: its last messages are delivered

    def line(self, side: str, data: bytes, now: float) -> list[Action]:
        text = data.decode("utf-8", "replace").removesuffix("\n")
        if self.result is not None or not text.strip():
            return []
        return self._do([Log(self._level, f"hub in  {text}")], self.adapter.hub_line(text, now))

    def receive(self, side: str, raw: bytes, now: float) -> list[Action]:
        if self.result is not None:
            return []
        try:
            msg = parse(raw, strict=False)
        except MessageError as exc:
            return self._do([], self.adapter.dxp_invalid(f"'{escape(raw)}': {exc}", now))
        out: list[Action] = [Log(self._level, f"dxp in  {escape(msg.wire)} ({msg.NAME})")]
        return self._do(out, self.adapter.dxp(msg, now))

    def left(self, side: str, now: float, why: str = "") -> list[Action]:
        if self.result is not None:
            return []
        if side == HUB:
            return self._do([], self.adapter.hub_closed(now))
        return self._do([], self.adapter.link_lost(why or "the engine closed the connection", now))

    def link_down(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.left(DXP, now, f"the engine stopped answering: {why}")

    def undelivered(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.left(DXP, now, f"cannot send to the engine: {why}")

    def line_problem(self, side: str, problem: LinkProblem, now: float) -> list[Action]:
        return [Log(problem.level, f"line: {problem.error}")]

    def poll(self, now: float) -> list[Action]:
        return [] if self.result is not None else self._do([], self.adapter.poll(now))

    def next_deadline(self) -> float | None:
        return None if self.result is not None else self.adapter.next_deadline()

    def stop(self, now: float) -> list[Action]:
        """A signal: leave at once, as before (nothing more is sent)."""
        if self.result is not None:
            return []
        self.result = Done(1, "stopped by a signal")
        return [self.result]

    def _do(self, out: list[Action], actions: list[adapter_actions.Action]) -> list[Action]:
        level = self._level
        for action in actions:
            if isinstance(action, adapter_actions.SendHub):
                text = hub.format_line(action.line)
                out += [Log(level, f"hub out {text}"), Send(HUB, f"{text}\n".encode())]
            elif isinstance(action, adapter_actions.SendDxp):
                msg = action.message
                out += [Log(level, f"dxp out {escape(msg.wire)} ({msg.NAME})"),
                        Send(DXP, msg.wire)]
            elif isinstance(action, adapter_actions.Log):
                out.append(Log(action.level, action.text))
            else:  # Stop: the rest is not carried out
                self.result = Done(action.code, action.message)
                self.drain = True
                out.append(self.result)
                break
        return out


class HubAdapterRunner:
    """One Hub client on stdin/stdout until it quits, the engine is lost, or :meth:`stop`."""

    def __init__(
        self, adapter: HubAdapter, endpoint: EngineEndpoint, *, log_messages: bool = False
    ) -> None:
        self.endpoint = endpoint
        self.machine = HubMachine(adapter, log_messages=log_messages)
        self.driver: Driver[str] = Driver(self.machine, log=log)
        self.driver.add_side(HUB, None)
        self.driver.add_side(DXP, endpoint.make_link())

    def stop(self) -> None:
        """Leave now (a signal handler may call this): exit 1, "stopped by a signal"."""
        self.driver.act(self.machine.stop)

    async def run(self) -> RunResult:
        driver, endpoint = self.driver, self.endpoint
        io = StdioLines()
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
        driver = self.driver
        try:
            port = await self.endpoint.open()
        except DxSerialError as exc:
            reason = str(exc)
            driver.act(lambda now: self.machine.left(DXP, now, reason))
            return
        driver.attach(DXP, port)
        why = await driver.read(DXP, port)
        reason = str(why) if why else "the engine closed the connection"
        driver.act(lambda now: self.machine.left(DXP, now, reason))
