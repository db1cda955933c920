"""``dxserial moves``: the legal moves of a position, in PDN and as DXP MOVE messages."""

from __future__ import annotations

import inspect
from typing import Any

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.draughts import START_FEN, Position, pdn_moves, perft
from dxserial.protocol.dxp_moves import to_dxp_move
from dxserial.protocol.messages import colour_name, encode
from dxserial.setting import Setting, checked


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def moves_table(position: Position) -> list[str]:
    """A summary line, a header, then one line per legal move: PDN, DXP MOVE, captured."""
    side = colour_name(position.turn)
    named = pdn_moves(position)
    if not named:
        return [f"{side} to move has no legal move and has lost"]
    most = position.max_capture()
    summary = f"{side} to move, {_plural(len(named), 'legal move')}"
    if most:
        summary += f"; a capture of {_plural(most, 'piece')} is compulsory"
    rows = [
        (
            text,
            encode(to_dxp_move(move)).decode("ascii"),
            ",".join(str(sq) for sq in sorted(move.captured)) or "-",
        )
        for move, text in named
    ]
    header = ("PDN", "DXP MOVE", "captured")
    w_pdn = max(len(r[0]) for r in [*rows, header]) + 2
    w_dxp = max(len(r[1]) for r in [*rows, header]) + 2
    return [summary] + [f"{a:<{w_pdn}}{b:<{w_dxp}}{c}" for a, b, c in [header, *rows]]


#: Every setting of ``dxserial moves``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("fen", START_FEN, "The position as a PDN FEN, e.g. 'W:W31-50:B1-20' (side to move "
            "first, K marks a king, ranges allowed). Default: the normal start position.",
            argument=True, optional=True, show_default=True),
    Setting("depth", 0, "Also print the perft leaf counts for depths 1..N (one line each). Pure "
            "Python: depth 6 from the start takes about a second, each further depth ~6 times "
            "longer.", kind=int, flags=("--perft",), minimum=0, maximum=12, ranged=True,
            metavar="N", show_default=True),
    Setting("board", False, "Print a text diagram of the position before the moves.", kind=bool,
            show_default=True),
)


def moves_command(**given: Any) -> None:
    """List the legal moves of a position (FMJD international rules).

    One line per move: its PDN (long form only where two moves share from and to),
    the DXP MOVE message an engine would send for it (0 seconds, captured squares
    ascending), and the captured squares.

    A FEN that cannot be read prints a one-line error; the exit code is then 1.
    """
    fen, depth, board = (checked(one, given[one.key], option=True) for one in SETTINGS)
    position = Position.from_fen(fen)
    if board:
        typer.echo(position.render())
    for line in moves_table(position):
        typer.echo(line)
    if depth:
        typer.echo("")
        for d in range(1, depth + 1):
            typer.echo(f"perft {d}: {perft(position, d)}")


moves_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("moves")(moves_command)
