"""``dxserial demo``: a game through a real bridge on a virtual cable, no hardware needed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import typer

from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.demo import DemoOptions, run_demo
from dxserial.errors import ConfigError
from dxserial.files import output_dir


@app.command("demo")
def demo_command(
    moves: int = typer.Option(
        20, "--moves", help="Moves per side before the game is ended as a draw (GAMEREQ's limit)."
    ),
    baud: int = typer.Option(
        9600,
        "--baud",
        help="Emulated line speed: each character takes 10 bits of time, as on a real "
        "cable; 0 runs the line at full speed.",
    ),
    depth: int = typer.Option(2, "--depth", help="Search depth of both built-in engines."),
    seed: int = typer.Option(
        1, "--seed", help="Tie-break seed of the engines (same game each run)."
    ),
    no_board: bool = typer.Option(False, "--no-board", help="Show the messages, not the board."),
    pdn: Path | None = typer.Option(
        None,
        "--pdn",
        help="Keep the game's PDN file in DIR (created if missing).",
        show_default=False,
    ),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="Show the bridge's log."),
) -> None:
    """Play a short game through the bridge, with no hardware.

    A virtual null-modem pair stands in for the cable. The built-in engine on one end speaks
    NULMODEM, as a DOS engine would; the bridge joins the other end to a free TCP port on
    127.0.0.1; the built-in engine plays it over TCP. Every message that crosses the bridge
    is shown, with the board after each move, then the result and the PDN record.
    """
    if moves < 1 or moves > 999:
        raise ConfigError(f"--moves {moves}: must be 1..999")
    if baud < 0:
        raise ConfigError(f"--baud {baud}: must be 0 (full speed) or a line speed")
    if pdn is not None:
        pdn = output_dir(pdn, "PDN folder")
    configure_logging(verbose, quiet=verbose == 0)
    if verbose == 0:
        logging.getLogger("dxserial").setLevel(logging.ERROR)
    options = DemoOptions(
        moves=moves, baud=baud or None, depth=depth, seed=seed, board=not no_board, pdn_dir=pdn
    )
    result = asyncio.run(run_demo(options, out=lambda line: typer.echo(line)))
    typer.echo(f"result: {result.result}")
    typer.echo("")
    typer.echo(result.pdn_text.rstrip())
    if result.pdn_path is not None:
        typer.echo(f"\nPDN written to {result.pdn_path}")
