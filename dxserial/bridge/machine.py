"""The bridge as one machine for the driver: the relay, plus whether the serial engine is there.

The relay (:mod:`dxserial.bridge.relay`) holds the rules for messages and sessions.  What
this adds is the serial side's presence, with the clock passed in: a lost port counts as the
engine gone after ``serial_grace`` seconds unless it comes back; an open port whose engine
stopped answering (NULMODEM link down) counts as gone after the same grace, unless it speaks.
"""

from __future__ import annotations

import logging

from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.bridge.relay import Relay
from dxserial.drive.actions import Action, Log
from dxserial.drive.machine import BaseMachine
from dxserial.protocol.nulmodem import LinkProblem

#: Noise reports closer together than this belong to one burst: logged once, then summed.
NOISE_GAP = 1.0


class BridgeMachine(BaseMachine[Side]):
    """The relay's inputs, and the serial engine's comings and goings timed here."""

    def __init__(
        self, relay: Relay, *, port: str, serial_grace: float, silent_slot: float = 0.0
    ) -> None:
        self.relay = relay
        self.port = port
        self.serial_grace = serial_grace
        self.silent_slot = silent_slot
        self._tcp_heard: float | None = None  # the TCP engine's last message (or its arrival)
        # A burst of noise on the serial line: (first report, last report, reports since).
        self._burst: tuple[float, float, int] | None = None
        self._gone_at: float | None = None  # the port is lost: the engine is gone then
        self._silent_at: float | None = None  # the engine stopped answering: gone then

    # ------------------------------------------------------------------ messages

    def receive(self, side: Side, raw: bytes, now: float) -> list[Action]:
        if side == TCP:
            self._tcp_heard = now
        if side == SERIAL:
            self._silent_at = None
            if not self.relay.present[SERIAL]:  # it speaks again: a new session
                out = self.relay.joined(SERIAL, now, f"{self.port} (it speaks again)")
                return out + self.relay.receive(SERIAL, raw, now)
        return self.relay.receive(side, raw, now)

    def settle(self) -> list[Action]:
        return self.relay.settle()

    def delivered(self, side: Side, raw: bytes, now: float) -> list[Action]:
        return self.relay.delivered(side, raw, now)

    def undelivered(self, side: Side, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.relay.undelivered(side, raws, why, now)

    def link_down(self, side: Side, raws: list[bytes], why: str, now: float) -> list[Action]:
        out: list[Action] = [Log(logging.ERROR, f"{side} link down: {why}")]
        out += self.relay.undelivered(side, raws, f"the {side} engine stopped answering", now)
        if side == SERIAL and self._silent_at is None and self.relay.present[SERIAL]:
            grace = self.serial_grace
            out.append(Log(logging.WARNING, f"the serial engine counts as gone if it stays "
                           f"silent for {grace:g} s more (its port is still open)"))
            self._silent_at = now + grace
        return out

    def line_problem(self, side: Side, problem: LinkProblem, now: float) -> list[Action]:
        if side == TCP:
            self.relay.counts["invalid"] += 1
            return [Log(logging.WARNING, f"tcp->serial: {problem.error}", "framing tcp")]
        if problem.lost is not None:
            return self.relay.dropped_by_line(SERIAL, problem.lost, str(problem.error), now)
        if problem.noise:
            return self._noise(problem, now)
        return [Log(problem.level, f"serial line: {problem.error}", "serial line")]

    def _noise(self, problem: LinkProblem, now: float) -> list[Action]:
        """Noise is logged once per burst (the first report), then counted until the line
        has been quiet ``NOISE_GAP`` s; each report is a DEBUG line."""
        text = f"serial line: {problem.error}"
        if self._burst is None:
            self._burst = (now, now, 0)
            return [Log(problem.level, f"{text} (noise: more within {NOISE_GAP:g} s is one "
                        "burst, summed up when the line is quiet)", "serial line")]
        first, _, count = self._burst
        self._burst = (first, now, count + 1)
        return [Log(logging.DEBUG, text)]

    def _burst_over(self, now: float) -> list[Action]:
        burst = self._burst
        if burst is None or now < burst[1] + NOISE_GAP:
            return []
        self._burst = None
        first, last, count = burst
        if not count:
            return []
        return [Log(logging.WARNING, f"serial line: noise burst over: {count} more noise "
                    f"report(s) in {last - first:.1f} s after the first, none delivered",
                    "serial line")]

    # ------------------------------------------------------------------ engines

    def joined(self, side: Side, now: float, who: str = "") -> list[Action]:
        if side == TCP:
            self._tcp_heard = now
        return self.relay.joined(side, now, who)

    def silent_holder(self, now: float) -> str | None:
        """The evidence that the connected TCP engine holds the only slot in silence, or
        ``None``: nothing heard from it for ``silent_slot`` s, and no game open (an engine
        thinking over a move is never silent for this rule)."""
        heard = self._tcp_heard
        if not self.silent_slot or heard is None or not self.relay.present[TCP]:
            return None
        if self.relay.judge.game_open or self.relay.closing is not None:
            return None
        if now - heard < self.silent_slot:
            return None
        return f"it has sent nothing for {now - heard:.0f} s with no game open"

    def left(self, side: Side, now: float, why: str = "") -> list[Action]:
        return self.relay.left(side, now, why)

    def port_lost(self, now: float) -> None:
        """The serial port is gone (unplugged, DOSBox closed): its engine is, after the grace."""
        self._gone_at = now + self.serial_grace

    def port_back(self, now: float) -> list[Action]:
        """The serial port opened again: a new session if its engine had been given up."""
        self._gone_at = None
        if not self.relay.present[SERIAL]:
            return self.relay.joined(SERIAL, now, self.port)
        return []

    # ------------------------------------------------------------------ time

    def poll(self, now: float) -> list[Action]:
        out = self.relay.poll(now) + self._burst_over(now)
        if self._gone_at is not None and now >= self._gone_at:
            self._gone_at = None
            why = f"port gone for more than {self.serial_grace:g} s"
            out += self.relay.left(SERIAL, now, why)
        if self._silent_at is not None and now >= self._silent_at:
            self._silent_at = None
            why = (f"the serial engine stopped answering (silent for {self.serial_grace:g} s "
                   "more)")
            out += self.relay.left(SERIAL, now, why)
        return out

    def next_deadline(self) -> float | None:
        deadline = self.relay.next_deadline()
        gone, silent = self._gone_at, self._silent_at
        burst = self._burst[1] + NOISE_GAP if self._burst is not None else None
        if gone is None and silent is None and burst is None:
            return deadline
        return min(t for t in (deadline, gone, silent, burst) if t is not None)

    def shutdown(self, now: float) -> list[Action]:
        """The bridge stops: what was not delivered is lost, each one named."""
        self._gone_at = self._silent_at = None
        return self.relay.shutdown(now)


__all__ = ["BridgeMachine"]
