"""pydraughts' HubEngine (a real third-party Hub client) plays a game against a Hub
engine command: one side the engine, the other pydraughts' random mover; every engine
move is checked against pydraughts' own board.  Shared by the Hub tests."""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from draughts import Board
from draughts.engine import HubEngine, Limit

#: The console script: pydraughts resolves argv[0] with realpath, which would take a venv's
#: python link to the system python (without dxserial); the script keeps the venv.
DXSERIAL = str(Path(sys.executable).parent / "dxserial")
needs_script = pytest.mark.skipif(
    not Path(DXSERIAL).exists(), reason=f"needs the installed console script {DXSERIAL}"
)


@dataclass
class HubGame:
    plies: int
    winner: int | None  # pydraughts: 2 White, 1 Black, 0 draw, None unfinished
    engine_moves: int
    infos: list[dict[str, object]]


def key(text: str) -> tuple[int, int, frozenset[int]]:
    parts = text.replace("x", "-").split("-")
    return int(parts[0]), int(parts[1]), frozenset(int(p) for p in parts[2:])


def play(
    engine: HubEngine, *, seed: int, limit: Limit, max_plies: int, engine_is_white: bool = True
) -> HubGame:
    rng = random.Random(seed)
    board = Board()
    engine_moves = 0
    infos: list[dict[str, object]] = []
    while not board.is_over() and len(board.move_stack) < max_plies:
        legal = {key(m.hub_move): m for m in board.legal_moves()}
        engine_turn = (board.turn == 2) == engine_is_white
        if engine_turn:
            result = engine.play(board, limit, False)
            infos.append(dict(engine.info))
            text = result.move.hub_move
            assert key(text) in legal, f"illegal engine move {text} in {board.fen}"
            board.push(legal[key(text)])
            engine_moves += 1
        else:
            board.push(legal[rng.choice(sorted(legal))])
    return HubGame(len(board.move_stack), board.winner(), engine_moves, infos)


def close(client: HubEngine) -> None:
    """Kill a client's engine if it still runs and close pydraughts' pipes to it."""
    if client.p.poll() is None:
        client.kill_process()
    for pipe in (client.p.stdin, client.p.stdout):
        if pipe is not None:
            pipe.close()
