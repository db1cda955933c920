"""``dxserial demo``: a game through a real bridge on a virtual cable, no hardware needed."""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.cli.options import parameters
from dxserial.demo import DemoInterrupted, DemoOptions, DemoResult, run_demo
from dxserial.drive.driver import on_signals
from dxserial.engine.player import MAX_DEPTH, check_depth
from dxserial.errors import ConfigError
from dxserial.files import output_dir
from dxserial.setting import Setting, checked


def _moves(value: Any, flag: str) -> int:
    if not 1 <= value <= 999:
        raise ConfigError(f"{flag} {value}: must be 1..999")
    return int(value)


def _depth(value: Any, flag: str) -> int:
    return check_depth(value, flag)


def _baud(value: Any, flag: str) -> int | None:
    if value < 0:
        raise ConfigError(f"{flag} {value}: must be 0 (full speed) or a line speed")
    return int(value) or None


def _cycles(value: Any, flag: str) -> int | str:
    if value < 0:
        raise ConfigError(f"{flag} {value}: must be 0 (as fast as possible) or more")
    return int(value) or "max"


_DEMO = DemoOptions()

#: Every setting of ``dxserial demo``, in the order of its --help; each default the demo's
#: (:class:`DemoOptions`), checked as it is read.
SETTINGS: tuple[Setting, ...] = (
    Setting("moves", _DEMO.moves, "Moves per side before the game is ended as a draw "
            "(GAMEREQ's limit).", kind=int, parse=_moves, show_default=True),
    Setting("baud", _DEMO.baud, "Emulated line speed: each character takes 10 bits of time, as "
            "on a real cable; 0 runs the line at full speed.", kind=int, parse=_baud,
            show_default=True),
    Setting("depth", _DEMO.depth, f"Search depth of both built-in engines (1..{MAX_DEPTH}).",
            kind=int, parse=_depth, show_default=True),
    Setting("seed", _DEMO.seed, "Tie-break seed of the engines (same game each run).",
            kind=int, show_default=True),
    Setting("no_board", not _DEMO.board, "Show the messages, not the board.", kind=bool,
            show_default=True),
    Setting("pdn", None, "Keep the game's PDN file in DIR (created if missing).", kind=Path),
    Setting("dos", _DEMO.dos, "The serial-side engine is a real DOS program (DXENG.COM, built "
            "by dos/build.sh) in a headless DOSBox, on DOSBox's emulated 8250 UART. Needs: sudo "
            "apt-get install dosbox bcc.", kind=bool, show_default=True),
    Setting("cycles", _DEMO.cycles, "With --dos: DOSBox's emulated CPU speed in instructions "
            "per ms (3000 is about a 286); 0 runs it as fast as the host allows.", kind=int,
            parse=_cycles, show_default=True),
    Setting("verbose", 0, "Show the bridge's log.", kind=int, flags=("--verbose", "-v"),
            count=True, show_default=True),
)


def demo_command(**given: Any) -> None:
    """Play a short game through the bridge, with no hardware.

    A virtual null-modem pair stands in for the cable. The built-in engine on one end speaks
    NULMODEM, as a DOS engine would; the bridge joins the other end to a free TCP port on
    127.0.0.1; the built-in engine plays it over TCP. Every message that crosses the bridge
    is shown, with the board after each move, then the result and the PDN record.

    With --dos the NULMODEM side is a real DOS program in DOSBox instead of the built-in
    engine; its own log is shown after the game.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    verbose, pdn = values["verbose"], values["pdn"]
    if pdn is not None:  # made once every option is known good
        pdn = output_dir(pdn, "PDN folder")
    configure_logging(verbose, quiet=verbose == 0)
    if verbose == 0:
        logging.getLogger("dxserial").setLevel(logging.ERROR)
        # The demo says itself how a game ended or why it stopped; the bridge's own account
        # (messages left undelivered by a Ctrl-C, for instance) is for -v.
        logging.getLogger("dxserial.bridge").setLevel(logging.CRITICAL)
    options = DemoOptions(board=not values["no_board"], pdn_dir=pdn,
                          **{k: values[k] for k in ("moves", "baud", "depth", "seed", "dos",
                                                    "cycles")})
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


demo_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("demo")(demo_command)


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
