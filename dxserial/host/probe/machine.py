"""The probe as a machine for the one driver: the Prober's script, its actions translated.

The :class:`~dxserial.host.probe.prober.Prober` decides everything; this only speaks the driver's
vocabulary: its Open is a :class:`~dxserial.drive.actions.Reopen` of the engine's side,
Write a raw Send, Progress a Say, and a finding (or an interrupt) :class:`Done`.
"""

from __future__ import annotations

from dxserial.drive.actions import Action, Done, Reopen, Say, Send
from dxserial.drive.machine import BaseMachine
from dxserial.host.probe.prober import Finding, Open, Prober, Progress
from dxserial.wirelog import log_bytes

#: The probe's one side: the engine's serial port, raw bytes (no layer-1 link).
ENGINE = "engine"


class ProbeMachine(BaseMachine[str]):
    def __init__(self, prober: Prober) -> None:
        self.prober = prober

    @property
    def finding(self) -> Finding | None:
        return self.prober.finding

    def start(self, now: float) -> list[Action]:
        self.prober.start(now)
        return self._take()

    def opened(self, now: float) -> list[Action]:
        """The port is open at the speed asked for."""
        self.prober.opened(now)
        return self._take()

    def line(self, side: str, data: bytes, now: float) -> list[Action]:
        log_bytes("engine->probe", data)
        self.prober.feed(data, now)
        return self._take()

    def poll(self, now: float) -> list[Action]:
        self.prober.poll(now)
        return self._take()

    def next_deadline(self) -> float | None:
        return self.prober.next_deadline()

    def stop(self, now: float) -> list[Action]:
        self.prober.interrupt(now)
        return self._take()

    def _take(self) -> list[Action]:
        out: list[Action] = []
        for action in self.prober.actions():
            if isinstance(action, Progress):
                out.append(Say(action.text))
            elif isinstance(action, Open):
                out.append(Reopen(ENGINE, action.speed))
            else:
                log_bytes("probe->engine", action.data)
                out.append(Send(ENGINE, action.data))
        if self.prober.done:
            out.append(Done(0, self.prober.finding.verdict if self.prober.finding else ""))
        return out


__all__ = ["ENGINE", "ProbeMachine"]
