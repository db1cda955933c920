"""The clock a Hub ``level`` becomes in a GAMEREQ, and the engine's time left on it.

A DXP engine plans its time from the GAMEREQ only: ``minutes`` for the game (per player)
and, when ``moves`` is not 0, that many moves (Scan 2.0 and 3.1 end the game when they are
played).  dxserial holds the engine to exactly that clock, no other: a move of dxserial's
own for "no move in time" only when the engine's time on the clock it was offered is gone
(plus ``grace``).  See docs/hub.md for how each ``level`` form is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dxserial.protocol import hub
from dxserial.protocol.hub import say_seconds

__all__ = [
    "ClockOffer",
    "EngineClock",
    "game_clock",
    "move_time_clock",
    "offer_for",
    "say_seconds",
]

#: How many moves a ``move-time`` clock is offered for: enough that a game rarely needs a
#: second GAMEREQ, few enough that whole minutes fit the move time closely.
SANE_MOVES = range(40, 81)
_MAX_FIELD = 999  # three digits in the GAMEREQ


@dataclass(frozen=True)
class ClockOffer:
    """What one GAMEREQ offers: ``minutes`` for ``moves`` (0: the whole game)."""

    minutes: int
    moves: int
    #: How the client's ``level`` was read, for the log.
    reading: str
    #: ``level infinite``: the client stops the search itself; no deadline of ours.
    timed: bool = True
    #: The level asks for what DXP cannot carry (depth, nodes): a warning, not a note.
    approximate: bool = False

    def describe(self) -> str:
        per = f"{self.moves} moves" if self.moves else "the game"
        return f"{self.minutes} minute{'s' if self.minutes != 1 else ''} for {per}"


def move_time_clock(move_time: float) -> tuple[int, int]:
    """(minutes, moves) whose average per move is ``move_time`` as closely as whole
    minutes allow, never below it: N moves in ceil(N*T/60) minutes, N from
    :data:`SANE_MOVES` (more when even 80 moves take less than a minute)."""
    if move_time * SANE_MOVES[-1] < 60:
        moves = min(_MAX_FIELD, max(1, math.floor(60 / max(move_time, 1e-9))))
        return 1, moves
    best: tuple[float, int, int] | None = None
    for moves in SANE_MOVES:
        minutes = math.ceil(round(moves * move_time / 60, 9))
        if minutes > _MAX_FIELD:
            break
        slack = minutes * 60 / moves - move_time
        if best is None or slack < best[0] - 1e-9:
            best = (slack, minutes, moves)
    if best is None:  # a move time of hours: the largest clock, fewer moves
        return _MAX_FIELD, max(1, math.floor(_MAX_FIELD * 60 / move_time))
    return best[1], best[2]


def offer_for(level: hub.Level, default_minutes: int) -> ClockOffer:
    """The GAMEREQ clock for a Hub ``level``.

    * ``move-time=T``: :func:`move_time_clock`;
    * ``time=T [moves=N] [inc=I]``: the client's clock, T plus the increments of N moves
      (40 without N), rounded *down* to whole minutes (never 0), and N: the engine never
      plans with more time than the client gives it;
    * ``depth=``, ``nodes=``, ``infinite``: DXP has no such limit; ``default_minutes`` for
      the game (``--minutes``).
    """
    if level.move_time is not None:
        minutes, moves = move_time_clock(level.move_time)
        return ClockOffer(minutes, moves, f"move-time={level.move_time:g}")
    if level.time is not None:
        count = level.moves or 40
        total = level.time + level.inc * count
        minutes = max(1, min(_MAX_FIELD, math.floor(total / 60)))
        moves = min(_MAX_FIELD, level.moves or 0)
        parts = [f"time={level.time:g}"]
        if level.moves:
            parts.insert(0, f"moves={level.moves}")
        if level.inc:
            parts.append(f"inc={level.inc:g}")
        return ClockOffer(minutes, moves, " ".join(parts))
    if level.infinite:
        return ClockOffer(default_minutes, 0, "infinite (until stop)", timed=False)
    if level.depth is not None:
        reading = f"depth={level.depth} (a DXP engine takes no depth limit)"
    elif level.nodes is not None:
        reading = f"nodes={level.nodes} (a DXP engine takes no node limit)"
    else:
        reading = "none given yet"
    return ClockOffer(default_minutes, 0, reading, approximate=True)


def game_clock(level: hub.Level, default_minutes: int) -> tuple[int, int]:
    """The GAMEREQ's (minutes, moves) for ``level``: :func:`offer_for` in short."""
    offer = offer_for(level, default_minutes)
    return offer.minutes, offer.moves


@dataclass
class EngineClock:
    """The engine's time on the clock it was offered, as dxserial measures its moves:
    from sending it the position (GAMEACC, or our MOVE) to its MOVE.  Every ``moves``
    moves the period's minutes are added again, as Scan's own clock does."""

    offer: ClockOffer
    left: float = 0.0
    moves_done: int = 0

    def __post_init__(self) -> None:
        self.left = self.offer.minutes * 60.0

    def spent(self, seconds: float) -> None:
        self.left -= max(0.0, seconds)
        self.moves_done += 1
        moves = self.offer.moves
        if moves and self.moves_done % moves == 0:
            self.left += self.offer.minutes * 60.0

    def limit(self, level: hub.Level) -> float | None:
        """Seconds the engine's next move may take: its time left, and never more than
        the client's own clock (``time=`` + ``inc=``).  ``None``: no limit (infinite)."""
        if not self.offer.timed:
            return None
        left = max(0.0, self.left)
        if level.time is not None:
            left = min(left, level.time + level.inc)
        return left
