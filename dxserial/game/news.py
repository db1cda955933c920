"""A game's story for a live view, typed: started, move, take-back, ended, and the table.

The bridge's judge and the match both tell it with these; ``event()`` gives the JSON-ready
dict a :data:`Watcher` takes (the live view, in ``live/view.py``, is one), so the page is
fed the same way by both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dxserial.game.thinking import Thinking
from dxserial.protocol.messages import Colour, colour_name

__all__ = [
    "GameClosed",
    "GameNews",
    "GameOpened",
    "MoveMade",
    "TableShown",
    "TakenBack",
    "Watcher",
]

#: A watcher (the live web view) gets JSON-ready dicts, ``kind`` one of "game", "move",
#: "takeback", "result", "standings": the ``event()`` of the news below.
Watcher = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class GameOpened:
    """A game started: who plays which colour from where (the bridge's side, or the match's
    engine label), the start position; ``opening`` and the director's clock (``left``) when
    a match has them."""

    number: int
    white: str
    black: str
    white_side: str
    black_side: str
    fen: str
    minutes: int | float
    opening: str | None = None
    left: dict[str, float] | None = None

    def event(self) -> dict[str, Any]:
        event: dict[str, Any] = {
            "kind": "game", "number": self.number, "fen": self.fen, "minutes": self.minutes,
            "white": f"{self.white} ({self.white_side})",
            "black": f"{self.black} ({self.black_side})",
        }
        if self.opening is not None:
            event["opening"] = self.opening
        if self.left is not None:
            event["left"] = self.left
        return event


@dataclass(frozen=True)
class MoveMade:
    """A move the engines saw; ``fen`` is None when the referee cannot know the position
    (an illegal move forwarded under ``warn``: the record is unreliable from there)."""

    number: int
    ply: int
    pdn: str
    colour: Colour
    fen: str | None
    seconds: int
    total: bool = False  # ``seconds`` is the mover's total for the game (cumulative times)
    left: dict[str, float] | None = None  # the director's clock after the move
    thinking: Thinking | None = None  # what the mover said of it (Hub engines only)

    def event(self) -> dict[str, Any]:
        event: dict[str, Any] = {
            "kind": "move", "number": self.number, "ply": self.ply, "pdn": self.pdn,
            "colour": colour_name(self.colour), "fen": self.fen, "seconds": self.seconds,
            "total": self.total,
        }
        if self.left is not None:
            event["left"] = self.left
        if self.thinking is not None:  # the score from White's side, as in the PDN
            event["thinking"] = {
                "score": self.thinking.white_score(self.colour is Colour.WHITE),
                "depth": self.thinking.depth, "pv": list(self.thinking.pv),
            }
        return event


@dataclass(frozen=True)
class TakenBack:
    """A take-back was accepted: the game is back to ``ply`` plies, at ``fen``."""

    number: int
    ply: int
    fen: str | None

    def event(self) -> dict[str, Any]:
        return {"kind": "takeback", "number": self.number, "ply": self.ply, "fen": self.fen}


@dataclass(frozen=True)
class GameClosed:
    """A game ended: by the GAMEEND exchange, or cut short (``*`` unless the board decided)."""

    number: int
    result: str
    reason: str

    def event(self) -> dict[str, Any]:
        return {
            "kind": "result", "number": self.number, "result": self.result, "reason": self.reason
        }


@dataclass(frozen=True)
class TableShown:
    """The standings after a game: the results table's lines."""

    table: list[str]

    def event(self) -> dict[str, Any]:
        return {"kind": "standings", "table": self.table}


GameNews = GameOpened | MoveMade | TakenBack | GameClosed
