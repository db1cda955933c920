"""``dxserial demo``: a game through a real bridge on a virtual cable, no hardware needed."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from pathlib import Path

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.demo import DemoInterrupted, DemoOptions, DemoResult, run_demo
from dxserial.drive.driver import on_signals
from dxserial.engine.player import MAX_DEPTH, check_depth
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
    depth: int = typer.Option(
        2, "--depth", help=f"Search depth of both built-in engines (1..{MAX_DEPTH})."
    ),
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
    dos: bool = typer.Option(
        False,
        "--dos",
        help="The serial-side engine is a real DOS program (DXENG.COM, built by dos/build.sh) "
        "in a headless DOSBox, on DOSBox's emulated 8250 UART. Needs: sudo apt-get install "
        "dosbox bcc.",
    ),
    cycles: int = typer.Option(
        20000,
        "--cycles",
        help="With --dos: DOSBox's emulated CPU speed in instructions per ms (3000 is about "
        "a 286); 0 runs it as fast as the host allows.",
    ),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="Show the bridge's log."),
) -> None:
    """Play a short game through the bridge, with no hardware.

    A virtual null-modem pair stands in for the cable. The built-in engine on one end speaks
    NULMODEM, as a DOS engine would; the bridge joins the other end to a free TCP port on
    127.0.0.1; the built-in engine plays it over TCP. Every message that crosses the bridge
    is shown, with the board after each move, then the result and the PDN record.

    With --dos the NULMODEM side is a real DOS program in DOSBox instead of the built-in
    engine; its own log is shown after the game.
    """
    if moves < 1 or moves > 999:
        raise ConfigError(f"--moves {moves}: must be 1..999")
    check_depth(depth, "--depth")
    if baud < 0:
        raise ConfigError(f"--baud {baud}: must be 0 (full speed) or a line speed")
    if cycles < 0:
        raise ConfigError(f"--cycles {cycles}: must be 0 (as fast as possible) or more")
    if pdn is not None:
        pdn = output_dir(pdn, "PDN folder")
    configure_logging(verbose, quiet=verbose == 0)
    if verbose == 0:
        logging.getLogger("dxserial").setLevel(logging.ERROR)
        # The demo says itself how a game ended or why it stopped; the bridge's own account
        # (messages left undelivered by a Ctrl-C, for instance) is for -v.
        logging.getLogger("dxserial.bridge").setLevel(logging.CRITICAL)
    options = DemoOptions(
        moves=moves,
        baud=baud or None,
        depth=depth,
        seed=seed,
        board=not no_board,
        pdn_dir=pdn,
        dos=dos,
        cycles=cycles or "max",
    )
    got: list[signal.Signals] = []
    try:
        result = runtime.run(_run(options, got))
    except DemoInterrupted as exc:
        sig = got[0] if got else signal.SIGINT
        how = "interrupted by Ctrl-C" if sig is signal.SIGINT else f"stopped by {sig.name}"
        typer.echo(f"dxserial: demo {how} {exc}", err=True)
        raise typer.Exit(128 + sig.value) from None
    typer.echo(f"result: {result.result}")
    typer.echo("")
    typer.echo(result.pdn_text.rstrip())
    if result.pdn_path is not None:
        typer.echo(f"\nPDN written to {result.pdn_path}")


async def _run(options: DemoOptions, got: list[signal.Signals]) -> DemoResult:
    """Run the demo; Ctrl-C or SIGTERM cancels it, so that it cleans up after itself.

    Without this SIGTERM killed the process outright (its temporary directory stayed) and
    Ctrl-C waited for a search to finish, then left without a word.
    """
    task = asyncio.current_task()
    assert task is not None

    def on_signal(sig: signal.Signals) -> Callable[[], None]:
        def cancel() -> None:
            if not got:  # the first signal cancels; more of them change nothing
                got.append(sig)
                task.cancel()

        return cancel

    with (
        on_signals(on_signal(signal.SIGINT), signal.SIGINT),
        on_signals(on_signal(signal.SIGTERM), signal.SIGTERM),
    ):
        return await run_demo(options, out=lambda line: typer.echo(line))
