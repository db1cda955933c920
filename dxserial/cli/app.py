"""The typer application every command module registers on, loading commands on demand.

Importing all command modules costs far more than typer itself (asyncio, pyserial, the
bridge, the referee ...), and ``dxserial --version``, ``dxserial --help`` and shell
completion need none of them.  :data:`COMMANDS` names each command's module and its
one-line help; a module is imported only when its command runs or shows its own help.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from dxserial import __version__

#: Command name -> (module that registers it on :data:`app`, one-line help for the list).
#: The help must match the first paragraph of the command's docstring (a test checks it);
#: the order is the README's command map, the commands a user came for first (a test checks it).
COMMANDS: dict[str, tuple[str, str]] = {
    "bridge": (
        "dxserial.cli.bridge_cmd",
        "Bridge a DXP engine on a serial port to a DXP engine on TCP.",
    ),
    "serve": (
        "dxserial.cli.serve_cmd",
        "Bridge every serial line of a rig file, each as 'dxserial bridge' would, in one "
        "process.",
    ),
    "probe": (
        "dxserial.cli.probe_cmd",
        "Find out how the engine on PORT speaks DXP, and print the bridge command that works.",
    ),
    "vpair": (
        "dxserial.cli.vpair_cmd",
        "Join two pseudo-terminals like a null-modem cable, published at two paths.",
    ),
    "demo": ("dxserial.cli.demo_cmd", "Play a short game through the bridge, with no hardware."),
    "engine": (
        "dxserial.cli.engine_cmd",
        "Play DXP with the built-in engine (a small alpha-beta search) on ENDPOINT.",
    ),
    "match": (
        "dxserial.cli.match_cmd",
        "Play a match between two follower engines; dxserial is the initiator to both.",
    ),
    "tournament": (
        "dxserial.cli.tournament_cmd",
        "Play a round robin or a gauntlet between engines listed in a TOML file.",
    ),
    "hub": (
        "dxserial.cli.hub_cmd",
        "Be a Hub engine (stdin/stdout) that plays each 'go' through the DXP engine at "
        "ENDPOINT.",
    ),
    "hub-engine": (
        "dxserial.cli.hub_engine_cmd",
        "Speak the Hub protocol (Scan 3.x, Hub GUI, pydraughts) on stdin/stdout with the "
        "built-in engine.",
    ),
    "replay": (
        "dxserial.cli.replay_cmd",
        "Show the games of a bridge trace or PDN file move by move.",
    ),
    "rate": (
        "dxserial.cli.rate_cmd",
        "Rate every engine of the PDN files jointly, with 95% intervals and LOS.",
    ),
    "parse": ("dxserial.cli.parse_cmd", "Parse DXP messages and print their type and fields."),
    "moves": (
        "dxserial.cli.moves_cmd",
        "List the legal moves of a position (FMJD international rules).",
    ),
    "ports": (
        "dxserial.cli.ports_cmd",
        "List serial ports: links, USB VID:PID, maker, serial number, driver, latency timer.",
    ),
    "selftest": (
        "dxserial.cli.selftest_cmd",
        "Check a serial line before a match: every byte, the round trip per character, the "
        "modem lines, and a verdict saying what to fix.",
    ),
    "udev": (
        "dxserial.cli.udev_cmd",
        "Install the udev rules and systemd unit that start a bridge when an adapter appears.",
    ),
}


class _NotLoaded(TyperCommand):
    """Stands in for a command in the command list until the command is used."""


class LazyGroup(TyperGroup):
    """A typer group that imports a command's module only when the command is resolved.

    The command list (``dxserial --help``, completion of command names, "did you mean")
    comes from :data:`COMMANDS`; running ``dxserial CMD`` or ``dxserial CMD --help``
    imports the module and swaps in the real command.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        loaded = dict(self.commands)  # modules imported before the group was built
        commands: dict[str, Any] = {
            name: _NotLoaded(name=name, help=short, short_help=short)
            for name, (_, short) in COMMANDS.items()
        }
        commands.update(loaded)
        self.commands = commands

    # ctx is click's Context; typer vendors click privately, hence Any.
    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and isinstance(self.commands.get(args[0]), _NotLoaded):
            self.commands[args[0]] = _load(args[0])
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            from dxserial.cli.common import add_shared_options  # the command imported it

            add_shared_options(command)
            plain_flags(command, ctx)
        return name, command, rest

    def get_help_option(self, ctx: Any) -> Any:
        """Called when help is shown, after typer added --install-completion and friends."""
        option = super().get_help_option(ctx)
        plain_flags(self)
        if isinstance(option, TyperOption):
            option.metavar = ""
        return option


def _load(name: str) -> Any:
    """Import ``name``'s module (it registers on :data:`app`) and build its click command."""
    importlib.import_module(COMMANDS[name][0])
    holder = typer.Typer(rich_markup_mode=app.rich_markup_mode, add_completion=False)
    holder.registered_commands = [
        info
        for info in app.registered_commands
        if (info.name or getattr(info.callback, "__name__", "")) == name
    ]
    holder.registered_groups = [info for info in app.registered_groups if info.name == name]
    return typer.main.get_group(holder).commands[name]


def plain_flags(command: Any, ctx: Any = None) -> None:
    """Show no value placeholder (``<bool>``, ``<int>``) after flags and counters in help,
    and no ``[env var: ...]`` line under every option.

    typer's rich help prints one even for options that take no value, which reads as if
    ``--rtscts true`` or ``-v 2`` were expected.
    """
    for param in command.params:
        flag = isinstance(param, TyperOption) and (param.is_flag or param.count)
        if flag and param.metavar is None:
            param.metavar = ""
        if isinstance(param, TyperOption) and param.count:
            param.show_default = False  # "[default: 0]" under -v says nothing
        # One line per option is enough: a command with DXSERIAL_* variables says so once.
        param.show_envvar = False
    if ctx is not None:
        help_option = command.get_help_option(ctx)
        if isinstance(help_option, TyperOption):
            help_option.metavar = ""
    if isinstance(command, TyperGroup) and not isinstance(command, LazyGroup):
        for sub in command.commands.values():
            plain_flags(sub, ctx)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dxserial {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="dxserial",
    cls=LazyGroup,
    help="Carry DamExchange (DXP) draughts-engine messages over serial lines and TCP.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every command
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
