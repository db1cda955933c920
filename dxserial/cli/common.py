"""Small helpers shared by the commands: logging set-up, the shared -v/-q, option sources.

The options several commands declare alike (NULMODEM, layer 1) are in :mod:`dxserial.cli.options`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Protocol

import typer

from dxserial.transports.serial import is_pseudo_terminal
from dxserial.wirelog import WIRE

#: What -v, -vv and -q mean, on every command (each gets them from :func:`add_shared_options`).
VERBOSE_HELP = (
    "-v: log each message crossing (direction, bytes, what it is); -vv: also the link's "
    "detail (debug)."
)
QUIET_HELP = "Only warnings and errors."
#: What -v says on commands that carry no messages, by command name.
_VERBOSE_HELPS = {
    "udev": "Accepted as on every command; udev says what it does with or without it.",
}
#: The Hub commands talk on stdout; a Hub client may read their stderr as the engine's.
HUB_VERBOSE_HELP = (
    "-v: what happens (games, engines) on stderr; -vv: every line and message too. Without it "
    "only warnings and errors: a Hub client may read stderr as the engine's output (pydraughts "
    "does)."
)
HUB_QUIET_HELP = "Only warnings and errors (the default here)."
#: The shared -v/-q as typed (one command runs per process; reset when one is resolved).
_given: dict[str, Any] = {}


def configure_logging(verbose: int, quiet: bool) -> None:
    """Log to stderr, one line per event, with a timestamp a person can line up with traces.

    A command's own ``verbose``/``quiet`` are combined with the shared ``-v``/``-q`` that
    :func:`add_shared_options` gave it, whichever the user typed.
    """
    verbose = max(verbose, _given.get("verbose", 0))
    quiet = quiet or _given.get("quiet", False)
    level = logging.WARNING if quiet else logging.DEBUG if verbose >= 2 else logging.INFO
    handler = _AroundLiveLine(sys.stderr)
    handler.setFormatter(
        logging.Formatter("%(asctime)s.%(msecs)03d %(levelname)s %(message)s", "%H:%M:%S")
    )
    root = logging.getLogger("dxserial")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    WIRE.setLevel(logging.INFO if verbose >= 1 and not quiet else logging.WARNING)


class LiveLine(Protocol):
    """A status line redrawn in place on the terminal (cli.display.TerminalProgress)."""

    def hide(self) -> None: ...
    def show(self) -> None: ...


#: The live line on the terminal, if a command draws one: log lines must not run into it.
live_line: list[LiveLine] = []


class _AroundLiveLine(logging.StreamHandler):  # type: ignore[type-arg]
    """Clears the live line before a log line and draws it again after."""

    def emit(self, record: logging.LogRecord) -> None:
        for line in live_line:
            line.hide()
        super().emit(record)
        for line in live_line:
            line.show()


def _shared(name: str) -> Any:
    def callback(_ctx: Any, _param: Any, value: Any) -> None:
        _given[name] = value
        configure_logging(0, False)

    return callback


def add_shared_options(command: Any, verbose_help: str | None = None) -> None:
    """Give ``command`` (and a group's subcommands) ``-v``/``-vv`` and ``-q`` if it does not
    declare them itself, so every command has them with one meaning."""
    from typer.core import TyperGroup, TyperOption

    _given.clear()
    verbose_help = verbose_help or _VERBOSE_HELPS.get(command.name, VERBOSE_HELP)
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            add_shared_options(sub, verbose_help)
        return
    names = {param.name for param in command.params}
    names |= {opt for param in command.params for opt in getattr(param, "opts", ())}
    if not names & {"verbose", "-v", "--verbose"}:
        command.params.append(
            TyperOption(
                param_decls=["--verbose", "-v"], count=True, default=0, expose_value=False,
                callback=_shared("verbose"), help=verbose_help, metavar="",
            )
        )
    if not names & {"quiet", "-q", "--quiet"}:
        command.params.append(
            TyperOption(
                param_decls=["--quiet", "-q"], is_flag=True, default=False, expose_value=False,
                callback=_shared("quiet"), help=QUIET_HELP, metavar="",
            )
        )


def option_given(ctx: typer.Context, name: str, value: object) -> bool:
    """True when the user set option ``name``: command line, environment or config file."""
    source = ctx.get_parameter_source(name)
    if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
        return True
    default = next((p.default for p in ctx.command.params if p.name == name), None)
    return value != default  # a config file changed it


def given_where(ctx: typer.Context, name: str, option: str, config_file: object) -> str:
    """Where the user set option ``name``: the option, its environment variable or the file."""
    source = ctx.get_parameter_source(name)
    kind = source.name if source is not None else "DEFAULT"
    if kind == "COMMANDLINE":
        return option
    if kind == "ENVIRONMENT":
        return "the environment"
    return f"'{name}' in {config_file}" if config_file else option


def note_pty_speed(port: str, baud: int, where: str = "--baud") -> None:
    """Say what a speed means on a pty, rather than accept it silently.

    A pty has no line: the speed is a setting the program on its other end may follow
    (``dxserial vpair --termios`` does) or not, which the bridge cannot see from here, so
    this is a note, not a warning that the speed is ignored.
    """
    if is_pseudo_terminal(port):
        logging.getLogger("dxserial").info(
            "%s is a pseudo-terminal: %d baud (%s) paces nothing by itself; the program on "
            "its other end follows it (dxserial vpair --termios) or keeps its own speed (a "
            "dxserial vpair without --termios: its --baud)",
            port, baud, where,
        )
