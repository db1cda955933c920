"""The typer application object that every command module registers on."""

from __future__ import annotations

import typer

from dxserial import __version__


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dxserial {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="dxserial",
    help="Carry DamExchange (DXP) draughts-engine messages over serial lines and TCP.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """dxserial: DXP over RS-232/USB-serial (NULMODEM) and TCP, bridged, checked and recorded."""
