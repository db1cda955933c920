"""FMJD's draw rules for international draughts, with the counters each rule needs.

Pure and sans-I/O like the rest of the rules layer: a :class:`DrawCounter` is fed the
positions of one game in order and says when a rule ends the game as a draw (repetition,
25 moves of kings, the 16-move and 5-move endgames).  It works on positions only, so a
referee can rebuild it after a take-back.  The rules as written, where they come from and
how pydraughts differs: docs/draw-rules.md.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from dxserial.draughts.board import Position
from dxserial.draughts.pieces import Colour

__all__ = ["ARTICLE", "Draw", "DrawCounter", "DrawRule", "endgame_rule"]

ARTICLE = "FMJD Annex 1, art. 6"


class DrawRule(enum.StrEnum):
    REPETITION = "threefold repetition"
    KINGS_ONLY = "25-move rule"
    SIXTEEN = "16-move rule"
    FIVE = "5-move rule"


#: Plies each count may last: moves of *each* player, so twice the number of moves.
_PLIES = {DrawRule.KINGS_ONLY: 50, DrawRule.SIXTEEN: 32, DrawRule.FIVE: 10}


@dataclass(frozen=True)
class Draw:
    """A draw rule met: which, and in words (for a CHAT, a log line, a PDN tag)."""

    rule: DrawRule
    detail: str

    @property
    def text(self) -> str:
        """Short enough for a PDN Termination tag."""
        the = "" if self.rule is DrawRule.REPETITION else "the "
        return f"draw by {the}{self.rule} ({ARTICLE})"

    @property
    def long(self) -> str:
        return f"{self.text}: {self.detail}"


def endgame_rule(position: Position) -> DrawRule | None:
    """The endgame count the material stands under: 16 moves, 5 moves, or none.

    Against a lone king: three pieces with at least one king (three kings, two kings and a
    man, a king and two men) is the 16-move rule; one or two pieces with at least one king
    (two kings, a king and a man, a king) the 5-move rule.
    """
    for strong, weak in ((position.white, position.black), (position.black, position.white)):
        if weak.bit_count() != 1 or not weak & position.kings:
            continue
        pieces, kings = strong.bit_count(), (strong & position.kings).bit_count()
        if kings == 0:
            continue
        if pieces == 3:
            return DrawRule.SIXTEEN
        if pieces <= 2:
            return DrawRule.FIVE
    return None


class DrawCounter:
    """Follows one game's positions; :attr:`draw` is set once a rule has ended the game."""

    def __init__(self, start: Position) -> None:
        self._seen: Counter[Position] = Counter({start: 1})
        self._last = start
        self._kings_only = 0  # plies in a row with only kings moved, nothing captured
        self._endgame: dict[DrawRule, int] = {}  # a running endgame count: plies so far
        self._enter_endgame(start)
        self.draw: Draw | None = None

    @classmethod
    def replay(cls, positions: Iterable[Position]) -> DrawCounter:
        """A counter for the game through ``positions`` (the first is the start)."""
        it = iter(positions)
        counter = cls(next(it))
        for position in it:
            counter.play(position)
        return counter

    @property
    def counts(self) -> dict[str, int]:
        """The running counts in plies (for a log line or a test)."""
        out = {str(DrawRule.KINGS_ONLY): self._kings_only}
        out.update({str(rule): plies for rule, plies in self._endgame.items()})
        return out

    def _enter_endgame(self, position: Position) -> None:
        rule = endgame_rule(position)
        if rule is None:
            self._endgame.clear()
        elif rule is DrawRule.FIVE:
            self._endgame.setdefault(DrawRule.FIVE, 0)  # a 16-move count runs on
        else:
            self._endgame.pop(DrawRule.FIVE, None)  # cannot happen by a legal move
            self._endgame.setdefault(DrawRule.SIXTEEN, 0)

    def play(self, after: Position) -> Draw | None:
        """The next position of the game (one ply later); the draw if a rule now ends it."""
        before = self._last
        self._last = after
        if before.turn is Colour.WHITE:
            own_before, own_after, opp_before, opp_after = (
                before.white, after.white, before.black, after.black
            )
        else:
            own_before, own_after, opp_before, opp_after = (
                before.black, after.black, before.white, after.white
            )
        captured = opp_after != opp_before  # only a capture changes the opponent's pieces
        man_moved = (own_before & ~before.kings) != (own_after & ~after.kings)
        endgame = self._endgame
        for rule in endgame:
            endgame[rule] += 1
        if captured or man_moved:
            # Irreversible: no earlier position can come back; the material may have changed.
            self._kings_only = 0
            self._seen.clear()
            self._enter_endgame(after)
        else:
            self._kings_only += 1
        seen = self._seen[after] + 1
        self._seen[after] = seen
        if self.draw is None:
            self.draw = self._verdict(seen)
        return self.draw

    def _verdict(self, seen: int) -> Draw | None:
        if seen >= 3:
            return Draw(
                DrawRule.REPETITION,
                "the same position with the same side to move for the third time",
            )
        if self._endgame:
            for rule, plies in sorted(
                self._endgame.items(), key=lambda kv: _PLIES[kv[0]] - kv[1]
            ):
                if plies >= _PLIES[rule]:
                    return Draw(rule, f"{_PLIES[rule] // 2} moves each played in this endgame")
        if self._kings_only >= _PLIES[DrawRule.KINGS_ONLY]:
            return Draw(
                DrawRule.KINGS_ONLY,
                "25 moves each with only kings moved, no man moved and nothing captured",
            )
        return None

    def would_draw(self, after: Position) -> Draw | None:
        """The draw that playing into ``after`` would bring, without playing it."""
        trial = DrawCounter.__new__(DrawCounter)
        trial._seen = Counter(self._seen)
        trial._last = self._last
        trial._kings_only = self._kings_only
        trial._endgame = dict(self._endgame)
        trial.draw = None
        return trial.play(after)
