"""A DXP engine as a Hub engine, as a machine for the one driver.

:class:`HubMachine` turns the driver's inputs into the
:class:`~dxserial.hub.adapter.HubAdapter`'s and its actions into the driver's:
the Hub client is a raw side of lines (``HUB``), the DXP engine a link side (``DXP``).
The adapter's :class:`~dxserial.hub.adapter.StartOver` hangs the engine's side up and
sets :attr:`HubMachine.starting_over`; the runner then opens a fresh connection and calls
:meth:`HubMachine.reconnected` (or :meth:`HubMachine.reconnect_failed`).
"""

from __future__ import annotations

import logging

from dxserial.drive.actions import Action, Done, Forget, Hangup, Log, Send
from dxserial.drive.machine import BaseMachine
from dxserial.errors import MessageError
from dxserial.hub import adapter as adapter_actions
from dxserial.hub.adapter import HubAdapter
from dxserial.protocol import hub
from dxserial.protocol.messages import escape, parse
from dxserial.protocol.nulmodem import LinkProblem

#: The Hub client's side (stdin/stdout, one line per read and write) and the engine's.
HUB, DXP = "hub", "dxp"


class HubMachine(BaseMachine[str]):
    """The adapter's inputs from the driver's, its actions in the driver's vocabulary."""

    def __init__(self, adapter: HubAdapter, *, log_messages: bool = False) -> None:
        self.adapter = adapter
        self._level = logging.INFO if log_messages else logging.DEBUG
        self.result: Done | None = None
        self.drain = False  # the adapter left by itself: its last messages are delivered
        self.starting_over = False  # the engine's side was hung up for a fresh connection

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
        if self.starting_over:
            return []  # the old connection ending: the runner opens the fresh one
        return self._do([], self.adapter.link_lost(why or "the engine closed the connection", now))

    def link_down(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.left(DXP, now, f"the engine stopped answering: {why}")

    def undelivered(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.left(DXP, now, f"cannot send to the engine: {why}")

    def reconnected(self, now: float) -> list[Action]:
        """The fresh connection to the engine is attached."""
        self.starting_over = False
        return [] if self.result is not None else self._do([], self.adapter.reconnected(now))

    def reconnect_failed(self, why: str, now: float) -> list[Action]:
        self.starting_over = False
        return self.left(DXP, now, why)

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
            elif isinstance(action, adapter_actions.StartOver):
                self.starting_over = True
                out += [Forget(DXP), Hangup(DXP, action.why)]
            elif isinstance(action, adapter_actions.Withdraw):
                out.append(Forget(DXP))
            else:  # Stop: the rest is not carried out
                self.result = Done(action.code, action.message)
                self.drain = True
                out.append(self.result)
                break
        return out


__all__ = ["DXP", "HUB", "HubMachine"]
