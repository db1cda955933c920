"""A match's scores and what it reports as it goes: standings, the results table, progress.

Kept apart from the game flow in :mod:`dxserial.match.runner` so a match's scoring and
display can be read (and tested) without its connections.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from dxserial.game.referee import GameResult
from dxserial.protocol.messages import Colour

__all__ = [
    "GameSummary",
    "Progress",
    "QuietProgress",
    "Standing",
    "results_table",
    "score",
    "score_text",
]


@dataclass
class Standing:
    """One engine's score: a win is 2 points, a draw 1 (as in ``2-0`` / ``1-1``)."""

    label: str
    name: str
    where: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    unfinished: int = 0

    @property
    def points(self) -> int:
        return 2 * self.wins + self.draws

    @property
    def played(self) -> int:
        return self.wins + self.draws + self.losses + self.unfinished


@dataclass(frozen=True)
class GameSummary:
    number: int
    white: str  # engine label, "A" or "B"
    black: str
    result: GameResult
    plies: int
    pdn: Path | None


def score(standings: dict[str, Standing], summary: GameSummary) -> None:
    """Count one game's result in both engines' standings."""
    winner = summary.result.winner
    for label, colour in ((summary.white, Colour.WHITE), (summary.black, Colour.BLACK)):
        standing = standings[label]
        if summary.result.result == "1-1":
            standing.draws += 1
        elif winner is None:
            standing.unfinished += 1
        elif winner is colour:
            standing.wins += 1
        else:
            standing.losses += 1


def score_text(a: Standing, b: Standing, games: int) -> str:
    """The score for the live line: ``A 3 - 1 B after 2 game(s)``."""
    return f"A {a.points} - {b.points} B after {games} game(s)"


def results_table(standings: list[Standing], games: int) -> list[str]:
    """The final table, one engine per row."""
    width = max(len(f"{s.label}  {s.name}") for s in standings)
    head = f"  {'engine'.ljust(width)}  {'W':>3} {'D':>3} {'L':>3} {'*':>3}  score"
    rows = [f"results after {games} game(s); scoring: win 2, draw 1, loss 0", head]
    for s in standings:
        who = f"{s.label}  {s.name}".ljust(width)
        rows.append(
            f"  {who}  {s.wins:>3} {s.draws:>3} {s.losses:>3} {s.unfinished:>3}"
            f"  {s.points}/{2 * s.played}   ({s.where})"
        )
    return rows


class Progress(Protocol):
    """Where a match or tournament reports as it goes (the CLI draws it on a terminal)."""

    def line(self, text: str) -> None:
        """A line that stays."""

    def update(self, text: str) -> None:
        """The live status: the game in progress ("" when none)."""

    def clear(self) -> None:
        """No live status any more."""


class QuietProgress:
    """Reports nothing: a match run from code that has nowhere to show it."""

    def line(self, text: str) -> None:
        pass

    def update(self, text: str) -> None:
        pass

    def clear(self) -> None:
        pass
