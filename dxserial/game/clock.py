"""The director's chess clock for one game: sans-I/O, every reading takes ``now``.

DXP's GAMEREQ gives each side minutes for the game, or for a number of moves (then the
same time again for the next as many moves).  The director, not the engines, keeps the
time: a side's clock runs from the moment the director delivers it the move it must answer
(or the game, for the first move) until its answer arrives.  ``margin`` is the line's share
of that, per move (a 2400-baud NULMODEM MOVE takes about 0.1 s each way): it is not
charged, and a flag falls only once a side has used more than its time *and* the margin.

Two controls only Hub engines can be told of (``level inc=``, ``level move-time=``; a
GAMEREQ carries neither): a Fischer ``increment`` added to a side's time after each of its
moves (made in time), and a time ``per_move``: each move has ``seconds`` of its own, nothing
carried over.
"""

from __future__ import annotations

from dataclasses import dataclass

from dxserial.draughts.pieces import Colour

__all__ = ["GameClock", "TimeControl"]


@dataclass(frozen=True)
class TimeControl:
    """``seconds`` for each period of ``moves`` moves (0: one period, the whole game)."""

    seconds: float
    moves: int = 0
    margin: float = 0.0
    increment: float = 0.0  # Fischer: added after each move
    per_move: bool = False  # ``seconds`` for each move, nothing carried over

    @classmethod
    def from_gamereq(cls, minutes: float, moves: int, margin: float = 0.0) -> TimeControl:
        return cls(float(minutes) * 60.0, moves, margin)

    def describe(self) -> str:
        if self.per_move:
            return f"{self.seconds:g} s a move (margin {self.margin:g} s a move)"
        per = f" for {self.moves} moves" if self.moves else " for the game"
        inc = f" + {self.increment:g} s a move" if self.increment else ""
        return f"{self.seconds:g} s{per}{inc} (margin {self.margin:g} s a move)"

    def tag(self) -> str:
        """PGN's TimeControl: ``moves/seconds``, ``seconds``, ``seconds+increment``, or
        ``*seconds`` for a time per move (the standard's sandclock form)."""
        if self.seconds <= 0:
            return "-"
        if self.per_move:
            return f"*{self.seconds:g}"
        if self.moves:
            return f"{self.moves}/{self.seconds:g}"
        return f"{self.seconds:g}+{self.increment:g}" if self.increment else f"{self.seconds:g}"


class GameClock:
    """Both sides' time; at most one runs."""

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self._left = {Colour.WHITE: control.seconds, Colour.BLACK: control.seconds}
        self._moves = {Colour.WHITE: 0, Colour.BLACK: 0}
        self.running: Colour | None = None
        self._since = 0.0

    @property
    def since(self) -> float:
        """When the running clock was started."""
        return self._since

    def start(self, colour: Colour, now: float) -> None:
        """``colour`` was just given what it must answer: its clock runs from ``now``."""
        if self.control.per_move and self.running is not colour:
            self._left[colour] = self.control.seconds  # a new move: its own time
        self.running, self._since = colour, now

    def stop(self, colour: Colour, now: float) -> float:
        """``colour``'s answer arrived at ``now``: the seconds charged (the margin is not).

        Its time left may now be below zero: the flag fell before the answer came.  A move
        that completes a period adds the next period's time.
        """
        charged = 0.0
        if self.running is colour:
            charged = max(0.0, now - self._since - self.control.margin)
            self._left[colour] -= charged
            self.running = None
        self._moves[colour] += 1
        if self.control.increment and self._left[colour] >= 0:
            self._left[colour] += self.control.increment
        moves = self.control.moves
        if moves and self._moves[colour] % moves == 0 and self._left[colour] >= 0:
            self._left[colour] += self.control.seconds
        return charged

    def left(self, colour: Colour, now: float) -> float:
        """Seconds ``colour`` has left at ``now`` (below zero: its flag has fallen)."""
        left = self._left[colour]
        if self.running is colour:
            left -= max(0.0, now - self._since - self.control.margin)
        return left

    def flag_at(self) -> float | None:
        """When the running side's flag falls (``None``: no clock runs)."""
        if self.running is None:
            return None
        return self._since + self.control.margin + self._left[self.running]

    def fallen(self, now: float) -> Colour | None:
        """The side whose flag has fallen by ``now``, if any."""
        flag = self.flag_at()
        if flag is not None and now >= flag:
            return self.running
        return next((c for c in (Colour.WHITE, Colour.BLACK) if self._left[c] < 0), None)
