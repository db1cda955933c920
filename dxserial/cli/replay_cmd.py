"""``dxserial replay FILE``: a bridge trace or a PDN file, shown move by move.

The replaying is :mod:`dxserial.game.replay`'s; this module only prints it.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.game.replay import ReplayError, load_games, plural
from dxserial.setting import Setting, checked

#: Every setting of ``dxserial replay``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("file", None, "A bridge trace (JSON lines, from --trace) or a PDN file.", kind=Path,
            argument=True),
    Setting("game", 0, "Show only game N (1 = the first); default: all.", kind=int, minimum=0,
            ranged=True, metavar="N", show_default=True),
    Setting("no_board", False, "Moves only, no diagrams.", kind=bool, show_default=True),
    Setting("final", False, "Only each game's final position, result and violations.",
            kind=bool, show_default=True),
    Setting("check", False, "Only the violations and the count; exit code 1 if there is one (as "
            "when the file cannot be read), for scripts.", kind=bool, show_default=True),
)


def replay_command(**given: Any) -> None:
    """Show the games of a bridge trace or PDN file move by move.

    Each ply: number, side, PDN move, the raw DXP MOVE (from a trace) and the
    board after it.  Every violation is a line starting with '!!' and the last
    line counts them.  Messages the bridge did not forward (duplicates,
    dropped) are listed but not applied.

    The exit code is 0 even when violations are found (with --check: 1); a file
    that cannot be read prints a one-line error and the exit code is 1.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    file, game, no_board, final, check = values.values()
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


replay_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("replay")(replay_command)
