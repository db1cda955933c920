"""``dxserial replay FILE``: a bridge trace or a PDN file, shown move by move.

The replaying is :mod:`dxserial.game.replay`'s; this module only prints it.
"""

from __future__ import annotations

from pathlib import Path

import typer

from dxserial.cli.app import app
from dxserial.game.replay import ReplayError, load_games, plural


@app.command("replay")
def replay_command(
    file: Path = typer.Argument(
        ..., help="A bridge trace (JSON lines, from --trace) or a PDN file.", show_default=False
    ),
    game: int = typer.Option(
        0, "--game", min=0, metavar="N", help="Show only game N (1 = the first); default: all."
    ),
    no_board: bool = typer.Option(False, "--no-board", help="Moves only, no diagrams."),
    final: bool = typer.Option(
        False, "--final", help="Only each game's final position, result and violations."
    ),
    check: bool = typer.Option(
        False,
        "--check",
        help="Only the violations and the count; exit code 1 if there is one (as when the "
        "file cannot be read), for scripts.",
    ),
) -> None:
    """Show the games of a bridge trace or PDN file move by move.

    Each ply: number, side, PDN move, the raw DXP MOVE (from a trace) and the
    board after it.  Every violation is a line starting with '!!' and the last
    line counts them.  Messages the bridge did not forward (duplicates,
    dropped) are listed but not applied.

    The exit code is 0 even when violations are found (with --check: 1); a file
    that cannot be read prints a one-line error and the exit code is 1.
    """
    games, preamble = load_games(file, board=not no_board and not final and not check)
    if game:
        if game > len(games):
            raise ReplayError(
                f"{file} has {plural(len(games), 'game')}: there is no game {game}"
            )
        shown = [games[game - 1]]
    else:
        shown = list(games)
        if preamble is not None and preamble.entries:
            shown.insert(0, preamble)
    if not shown:
        raise ReplayError(f"{file}: no game was started in this trace")
    for log in shown:
        if check:
            for line in log.alerts:
                typer.echo(f"game {log.number}: {line}" if log.number else line)
            continue
        if log.number:
            typer.echo(log.title)
        if final:
            for line in log.alerts:
                typer.echo(line)
            if log.number:
                typer.echo(log.final.render() if log.final else "final position unknown")
        else:
            for line in log.entries:
                typer.echo(line)
        if log.number:
            typer.echo(f"result {log.result or '* (unfinished)'}")
            typer.echo("")
    violations = sum(log.violations for log in shown)
    counted = [log for log in shown if log.number]
    typer.echo(f"{plural(len(counted), 'game')}, {plural(violations, 'violation')}")
    if check and violations:
        raise typer.Exit(1)
