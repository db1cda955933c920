"""``dxserial hub-engine``: the built-in engine speaks the Hub protocol on stdin/stdout."""

from __future__ import annotations

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import HUB_QUIET_HELP, HUB_VERBOSE_HELP, configure_logging
from dxserial.engine.player import DEFAULT_DEPTH, MAX_DEPTH, check_depth
from dxserial.hub_engine.engine import HubEngine
from dxserial.hub_engine.runner import run_hub_engine


@app.command("hub-engine")
def hub_engine_command(
    depth: int = typer.Option(
        DEFAULT_DEPTH,
        "--depth",
        help=f"Search depth in plies (1..{MAX_DEPTH}); 'level depth=N' replaces it, "
        "'level move-time=' / 'time=' search to this depth but never past the time, "
        "'level infinite' until 'stop'.",
    ),
    name: str = typer.Option("dxserial", "--name", help="Engine name in the 'id' answer."),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Seed for choosing among equal moves (default: random).",
        show_default=False,
    ),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help=HUB_VERBOSE_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=HUB_QUIET_HELP),
) -> None:
    """Speak the Hub protocol (Scan 3.x, Hub GUI, pydraughts) on stdin/stdout with the
    built-in engine.

    Answers hub, init, pos, level, go, stop, ping, new-game and quit; a line it cannot read
    gets 'error message=...' and the session goes on. Exits 0 on quit or end of input.
    """
    configure_logging(verbose - 1 if verbose else 0, quiet or not verbose)
    check_depth(depth, "--depth")
    engine = HubEngine(name=name, depth=depth)
    raise typer.Exit(runtime.run(run_hub_engine(engine, seed)))
