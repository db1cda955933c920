"""What real engines say that the protocol page does not allow, and how dxserial reads it.

Each habit has a short key and one sentence: the bridge, ``dxserial engine`` and
``dxserial match`` name it once per session as a note, never as a violation, because the
message means something unambiguous.  See docs/commands/bridge.md, "Engines that bend the protocol".
"""

from __future__ import annotations

__all__ = [
    "BRIDGE_GAMEEND_TIMEOUT",
    "CUMULATIVE_TIMES",
    "DEFAULT_GAMEEND_TIMEOUT",
    "GAMEEND_NOT_AWAITED",
    "GAMEEND_REASON_ECHO",
    "GAMEEND_UNANSWERED",
    "HABITS",
    "NAME_FIELD",
    "CumulativeTimes",
    "habit_text",
]

GAMEEND_REASON_ECHO = "gameend-reason-echo"
GAMEEND_UNANSWERED = "gameend-unanswered"
GAMEEND_NOT_AWAITED = "gameend-not-awaited"
CUMULATIVE_TIMES = "cumulative-times"
NAME_FIELD = "name-field"

HABITS: dict[str, str] = {
    GAMEEND_REASON_ECHO: "answers a GAMEEND with the reason it received instead of 0; "
    "taken as the answer",
    GAMEEND_UNANSWERED: "does not answer a GAMEEND; its next GAMEREQ, or silence for the "
    "GAMEEND timeout, is taken as the answer",
    GAMEEND_NOT_AWAITED: "sends its next GAMEREQ without waiting for the answer to its own "
    "GAMEEND; the game is over, and an answer still on its way is not given to it",
    CUMULATIVE_TIMES: "sends in each MOVE the total time it used in the game, not the "
    "move's time; read as totals",
    NAME_FIELD: "pads or sizes a name field its own way; read where the rest of the "
    "message is unambiguous",
}

#: Seconds a GAMEEND may wait for its answer before the silence is taken as the answer.
#: The bridge's default is shorter than an engine's, so through a bridge the bridge speaks
#: first (on the silent engine's behalf) and the engine behind it never has to.
DEFAULT_GAMEEND_TIMEOUT = 5.0
BRIDGE_GAMEEND_TIMEOUT = 3.0


def habit_text(habit: str) -> str:
    return HABITS.get(habit, habit)


class CumulativeTimes:
    """Tells, from the numbers, whether a side's MOVE seconds are totals for the game.

    A total never goes down, and sooner or later exceeds the time the move can have taken
    (the time since the side's turn began, known to whoever watches the wire) or, without
    a clock, the sum of the values outgrows the game's time.  Once seen it stays seen for
    the game; :meth:`used` gives the side's total either way.
    """

    __slots__ = ("_broken", "_last", "_sum", "cumulative")

    SLACK = 2.0  # seconds of clock difference a per-move time may show

    def __init__(self) -> None:
        self._last = 0
        self._sum = 0
        self.cumulative = False
        self._broken = False  # went down once: per-move times

    def add(self, seconds: int, took: float | None = None, budget: float | None = None) -> bool:
        """One MOVE's seconds (``took``: how long the move can have taken; ``budget``: the
        game's seconds per side).  True when this move showed the values are totals."""
        newly = False
        if seconds < self._last:
            self._broken = True
        elif not self._broken and not self.cumulative and seconds > 0:
            too_long = took is not None and seconds > took + self.SLACK and seconds > 1
            too_much = budget is not None and budget > 0 and self._sum + seconds > 1.5 * budget
            if too_long or too_much:
                self.cumulative = newly = True
        self._last = seconds
        self._sum += seconds
        return newly

    def used(self) -> int:
        """Seconds this side has used in the game as far as its MOVEs tell."""
        return self._last if self.cumulative else self._sum
