"""When to start an engine process again, and when to give up on it; sans I/O.

One :class:`Supervisor` per engine process slot.  It is told what happened (``started``,
``ready``, ``ended``) with a clock reading, and answers :meth:`Supervisor.wanted` with
an action: :class:`Start` it now, :class:`Wait` until a time (the back-off after a
failure), or :class:`GiveUp` (more failures than ``max_restarts``).  The asyncio side
(:mod:`dxserial.processes.endpoint`) applies the actions.

Back-off: after the k-th failure in a row the next start waits ``backoff * 2**(k-1)``
seconds, at most ``backoff_cap``; a run that reached ready and then ended without a
failure (an engine that serves one connection and exits) starts again at once and ends
the streak.  ``max_restarts`` counts restarts after failures over the whole event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GiveUp", "Start", "Supervisor", "Wait"]


@dataclass(frozen=True)
class Start:
    """Start the engine now; ``reason`` says why (first start, or after what)."""

    reason: str
    restart: bool


@dataclass(frozen=True)
class Wait:
    """Not before ``until`` (back-off)."""

    until: float


@dataclass(frozen=True)
class GiveUp:
    reason: str


Action = Start | Wait | GiveUp


@dataclass
class Supervisor:
    name: str
    max_restarts: int = 10
    backoff: float = 0.5
    backoff_cap: float = 10.0
    starts: int = 0
    failures: int = 0  # over the event
    streak: int = 0  # failures in a row
    running: bool = False
    ever_ready: bool = False
    events: list[str] = field(default_factory=list)
    _not_before: float = 0.0
    _last_end: str = ""
    _failed_last: bool = False
    _given_up: str | None = None

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    def wanted(self, now: float) -> Action:
        """The engine is needed (a game is about to start) and no process is running."""
        if self._given_up is not None:
            return GiveUp(self._given_up)
        if now < self._not_before:
            return Wait(self._not_before)
        if self.starts == 0:
            return Start("first start", restart=False)
        return Start(f"restart {self.restarts + 1} after: {self._last_end}", restart=True)

    def started(self, now: float, what: str) -> None:
        self.starts += 1
        self.running = True
        if self.starts > 1:
            # After a failure, its "failed: ..." event already says why: not twice.
            self.events.append(f"restart {self.restarts}" if self._failed_last else what)

    def ready(self, now: float) -> None:
        self.ever_ready = True

    def ended(self, now: float, *, failure: str | None, status: str) -> None:
        """The process is gone: ``failure`` if it cost a game (or never got ready)."""
        self.running = False
        self._last_end = f"{failure}; {status}" if failure else status
        self._failed_last = failure is not None
        if failure is None:
            self.streak = 0
            self._not_before = now
            return
        self.failures += 1
        self.streak += 1
        self.events.append(f"failed: {failure}; {status}")
        if self.failures > self.max_restarts:
            self._given_up = (
                f"gave up after {self.max_restarts} restart(s) (max_restarts); last: "
                f"{self._last_end}"
            )
            return
        delay = min(self.backoff_cap, self.backoff * 2 ** (self.streak - 1))
        self._not_before = now + delay

    def next_deadline(self) -> float | None:
        return self._not_before if not self.running and self._given_up is None else None
