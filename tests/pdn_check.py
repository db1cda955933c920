"""Every PDN file a program writes, read back by two readers: pydraughts' ``PDNReader`` (a
third-party reader users have, PyPI ``pydraughts``) with every move played on pydraughts'
own board, and dxserial's reader; both must find the same games, moves and results."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from draughts import Board  # pydraughts, a test extra: no skipping, these tests need it
from draughts.PDN import PDNReader

from dxserial.draughts import Position, parse_pdn_move
from dxserial.game.pdn import read_pdn


@dataclass
class ReadGame:
    """One game as both readers saw it."""

    moves: list[str]
    result: str
    tags: dict[str, str]


def _legal(board: Board, text: str) -> object:
    """The legal move of pydraughts' board that ``text`` names (``32-28``, ``27x18``, or
    every landing square ``27x18x9`` where the short form is ambiguous)."""
    squares = [int(s) for s in re.split(r"[-x:]", text)]
    found = [
        m for m in board.legal_moves()
        if m.steps_move[0] == squares[0] and m.steps_move[-1] == squares[-1]
        and (len(squares) == 2 or list(m.steps_move) == squares)
    ]
    assert found, f"pydraughts: {text} is not a legal move in {board.fen}"
    return found[0]


def pydraughts_games(path: Path) -> list[ReadGame]:
    """The games pydraughts' reader finds in ``path``, each move played on its board."""
    games = []
    for game in PDNReader(filename=str(path)).games:
        fen = game.tags.get("FEN")
        moves = list(game.moves)
        if fen and fen.startswith("B") and moves[:1] * 2 == moves[:2]:
            # pydraughts 0.6.7 lists a game's first move twice when Black moves first
            # (PDN.py, _PDNGame._read); the file has it once, as '1... 18-22'.
            moves = moves[1:]
        board = Board("standard", fen) if fen else Board("standard")
        for text in moves:
            board.push(_legal(board, text))
        games.append(ReadGame(moves, game.game_ending, dict(game.tags)))
    return games


def both_read(path: Path, *, games: int | None = None) -> list[ReadGame]:
    """``path`` as pydraughts reads it, checked against dxserial's reader: the same games,
    moves (legal on both boards) and results.  ``games``: how many there must be."""
    ours = read_pdn(path)
    theirs = pydraughts_games(path)
    assert len(theirs) == len(ours), (len(theirs), len(ours))
    for mine, other in zip(ours, theirs, strict=True):
        texts = [m.text for m in mine.moves]
        assert other.moves == texts
        assert other.result == mine.result
        position = Position.from_fen(mine.start_fen)
        for text in texts:
            position = position.play(parse_pdn_move(position, text))
    if games is not None:
        assert len(ours) == games
    return theirs
