"""What a program's sans-I/O machine takes in (the driver calls these) and gives back.

Every input carries ``now`` (the driver's clock) and returns the actions to carry out.
:class:`BaseMachine` answers every input with nothing, so a machine writes only the inputs
it cares about.  The bridge's relay, the engine's player, a match's conductor and the probe
are machines; :class:`~dxserial.drive.driver.Driver` runs any of them.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from dxserial.drive.actions import Action, Log
from dxserial.protocol.nulmodem import LinkProblem

S = TypeVar("S", bound=str)
S_contra = TypeVar("S_contra", bound=str, contravariant=True)


class Machine(Protocol[S_contra]):
    def joined(self, side: S_contra, now: float, who: str = "") -> list[Action]:
        """An engine's session starts on ``side`` (a port opened, a peer connected)."""
        ...

    def left(self, side: S_contra, now: float, why: str = "") -> list[Action]:
        """The engine on ``side`` is gone (port lost, peer closed, link down)."""
        ...

    def receive(self, side: S_contra, raw: bytes, now: float) -> list[Action]:
        """One whole message (framing removed) arrived from ``side``."""
        ...

    def settle(self) -> list[Action]:
        """Work left for after the writes of the last input (the bridge judges here)."""
        ...

    def delivered(self, side: S_contra, raw: bytes, now: float) -> list[Action]:
        """``side``'s link confirmed its engine got ``raw`` (NULMODEM: the echo)."""
        ...

    def undelivered(
        self, side: S_contra, raws: list[bytes], why: str, now: float
    ) -> list[Action]:
        """``side``'s link gave up on these messages (line down, queue full)."""
        ...

    def link_down(
        self, side: S_contra, raws: list[bytes], why: str, now: float
    ) -> list[Action]:
        """``side``'s link gave up (NULMODEM: no echo after every attempt); ``raws`` unsent."""
        ...

    def line_problem(self, side: S_contra, problem: LinkProblem, now: float) -> list[Action]:
        """``side``'s line had noise, a frame cut off or dropped (``problem.lost``)."""
        ...

    def line(self, side: S_contra, data: bytes, now: float) -> list[Action]:
        """Raw bytes from a side with no layer-1 link (the probe's)."""
        ...

    def poll(self, now: float) -> list[Action]:
        """The machine's deadline came."""
        ...

    def next_deadline(self) -> float | None:
        """When :meth:`poll` is due (``None``: no timer)."""
        ...

    def stop(self, now: float) -> list[Action]:
        """Asked to stop (a signal, the caller): wind down, then :class:`Done`."""
        ...


class BaseMachine(Generic[S]):
    """Every input answered with nothing: subclass and write the ones that matter."""

    def joined(self, side: S, now: float, who: str = "") -> list[Action]:
        return []

    def left(self, side: S, now: float, why: str = "") -> list[Action]:
        return []

    def receive(self, side: S, raw: bytes, now: float) -> list[Action]:
        return []

    def settle(self) -> list[Action]:
        return []

    def delivered(self, side: S, raw: bytes, now: float) -> list[Action]:
        return []

    def undelivered(self, side: S, raws: list[bytes], why: str, now: float) -> list[Action]:
        return []

    def link_down(self, side: S, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.undelivered(side, raws, why, now)

    def line_problem(self, side: S, problem: LinkProblem, now: float) -> list[Action]:
        return [Log(problem.level, f"{side} line: {problem.error}", f"{side} line")]

    def line(self, side: S, data: bytes, now: float) -> list[Action]:
        return []

    def poll(self, now: float) -> list[Action]:
        return []

    def next_deadline(self) -> float | None:
        return None

    def stop(self, now: float) -> list[Action]:
        return []


__all__ = ["BaseMachine", "Machine"]
