"""Adjudication from the engines' own scores: a draw both agree on, a loss both see.

Off by default; only for engines that report scores (Hub engines, see
:mod:`dxserial.game.thinking`): a DXP engine reports none, and a game cannot be judged on
scores one side never gave, so a pairing with such an engine is refused when the file is
read.  Each key's name, default, check and help are together in :data:`KEYS`.

* **Draw** (``adjudicate_draw = { after_move = 40, moves = 8, margin = 0.05 }``): from full
  move ``after_move`` on, once the last ``moves`` scored moves of *each* side are all within
  ``margin`` men of 0.
* **Resign** (``adjudicate_resign = { moves = 4, score = 3.0 }``): one side's last ``moves``
  scored moves all at or below ``-score``, and its opponent's last ``moves`` all at or above
  ``+score`` (confirmed by the opponent, so one engine's bad evaluation loses no game).

A move without a score (a forced move, played without a search) neither counts nor breaks
a run.  The result names the rule in PDN ``Termination``.  docs/adjudication.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dxserial.errors import ConfigError
from dxserial.game.referee import GameResult
from dxserial.game.thinking import Thinking
from dxserial.protocol.messages import Colour, colour_name

__all__ = ["KEYS", "Adjudication", "Adjudicator", "DrawRule", "ResignRule"]

#: key -> (example as TOML, help); both off when absent.
KEYS: dict[str, tuple[str, str]] = {
    "adjudicate_draw": (
        "{ after_move = 40, moves = 8, margin = 0.05 }",
        "Hub engines only: a draw once both scores stay within margin (men) for moves "
        "moves each, from move after_move on (off when absent)",
    ),
    "adjudicate_resign": (
        "{ moves = 4, score = 3.0 }",
        "Hub engines only: a loss once one side's score stays at or below -score for moves "
        "moves and its opponent's at or above +score (off when absent)",
    ),
}


@dataclass(frozen=True)
class DrawRule:
    after_move: int = 40
    moves: int = 8
    margin: float = 0.05


@dataclass(frozen=True)
class ResignRule:
    moves: int = 4
    score: float = 3.0


@dataclass(frozen=True)
class Adjudication:
    """The rules in force (None: off)."""

    draw: DrawRule | None = None
    resign: ResignRule | None = None

    @property
    def on(self) -> bool:
        return self.draw is not None or self.resign is not None

    def keys(self) -> list[str]:
        """The keys that are set, for an error message."""
        return [k for k, v in (("adjudicate_draw", self.draw),
                               ("adjudicate_resign", self.resign)) if v is not None]

    @classmethod
    def checked(cls, values: Mapping[str, Any], name: Callable[[str], str] = str
                ) -> Adjudication:
        """From a file's keys; :class:`ConfigError` (one line) if one is off."""
        draw = resign = None
        if "adjudicate_draw" in values:
            table = _table(values["adjudicate_draw"], "adjudicate_draw",
                           {"after_move": int, "moves": int, "margin": float}, name)
            draw = DrawRule(**table)
        if "adjudicate_resign" in values:
            table = _table(values["adjudicate_resign"], "adjudicate_resign",
                           {"moves": int, "score": float}, name)
            resign = ResignRule(**table)
        return cls(draw, resign)


def _table(value: Any, key: str, fields: dict[str, type], name: Callable[[str], str]
           ) -> dict[str, Any]:
    example = KEYS[key][0]
    if not isinstance(value, dict):
        raise ConfigError(f"{name(key)} must be a table, {key} = {example}")
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ConfigError(f"{name(key)}: unknown setting(s) {', '.join(unknown)}; "
                          f"{key} = {example}")
    out: dict[str, Any] = {}
    for field_name, kind in fields.items():
        if field_name not in value:
            continue
        got = value[field_name]
        good = isinstance(got, int | float) and not isinstance(got, bool)
        if kind is int:
            good = isinstance(got, int) and not isinstance(got, bool) and got >= (
                0 if field_name == "after_move" else 1)
        elif good:
            good = got >= 0 if field_name == "margin" else got > 0
        if not good:
            need = ("a whole number >= 1" if kind is int and field_name != "after_move"
                    else "a whole number >= 0" if kind is int else "a number of men > 0"
                    if field_name == "score" else "a number of men >= 0")
            raise ConfigError(f"{name(key)}: {field_name} must be {need}, not {got!r}")
        out[field_name] = kind(got)
    return out


@dataclass
class Adjudicator:
    """One game's scores as the moves come; :meth:`observe` says when to end it."""

    rules: Adjudication
    scores: dict[Colour, list[float]] = field(
        default_factory=lambda: {Colour.WHITE: [], Colour.BLACK: []})

    def observe(self, mover: Colour, thinking: Thinking | None, move_number: int
                ) -> GameResult | None:
        """``mover`` played its move of full move ``move_number``, saying ``thinking``."""
        if thinking is None or thinking.score is None:
            return None  # no score: neither counts nor breaks a run
        self.scores[mover].append(thinking.score)
        draw, resign = self.rules.draw, self.rules.resign
        if resign is not None:
            for loser in (mover, mover.other):
                own = self.scores[loser][-resign.moves:]
                theirs = self.scores[loser.other][-resign.moves:]
                if (len(own) == len(theirs) == resign.moves
                        and all(s <= -resign.score for s in own)
                        and all(s >= resign.score for s in theirs)):
                    return GameResult.win_for(loser.other, (
                        f"adjudicated: {colour_name(loser)} lost, its score at or below "
                        f"-{resign.score:g} for {resign.moves} moves, confirmed by "
                        f"{colour_name(loser.other)}'s"))
        if draw is not None and move_number >= draw.after_move:
            runs = [self.scores[c][-draw.moves:] for c in (Colour.WHITE, Colour.BLACK)]
            if all(len(r) == draw.moves and all(abs(s) <= draw.margin for s in r)
                   for r in runs):
                return GameResult("1-1", (
                    f"adjudicated: draw, both scores within {draw.margin:g} for "
                    f"{draw.moves} moves from move {draw.after_move}"))
        return None
