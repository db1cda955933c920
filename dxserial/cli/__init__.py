"""Command-line entry point: thin wrappers that parse options and call the library.

Commands live in ``dxserial.cli.*_cmd`` modules, imported only when their command is used
(see :data:`dxserial.cli.app.COMMANDS`), so ``dxserial --version`` and ``--help`` start
fast.  Every error is one line on stderr: a usage or configuration error (click's own, or
a :class:`~dxserial.errors.ConfigError`) exits 2, which the shipped systemd unit takes for
"do not restart"; any other :class:`~dxserial.errors.DxSerialError` exits 1.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

try:
    from dxserial.cli.app import app
except KeyboardInterrupt:  # Ctrl-C while typer is still importing: no traceback
    sys.exit(130)

__all__ = ["app", "main"]

#: Exit code of a usage or configuration error (click's convention, RestartPreventExitStatus).
USAGE = 2


def main() -> None:
    """Console-script entry point."""
    try:
        sys.exit(_run())
    except KeyboardInterrupt:  # also while Python is still importing the command
        sys.exit(130)


def _run() -> int:
    import typer

    from dxserial.errors import ConfigError, DxSerialError

    click = _click_exceptions()
    try:
        code: Any = app(prog_name="dxserial", standalone_mode=False)
    except ConfigError as exc:
        return _error(str(exc), USAGE)
    except DxSerialError as exc:
        return _error(str(exc), 1)
    except click.NoArgsIsHelpError as exc:  # a group run bare: its help, on stderr
        print(exc.format_message(), file=sys.stderr)
        return USAGE
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "dxserial"
        return _error(f"{exc.format_message().rstrip('.')}; see '{where} --help'", exc.exit_code)
    except click.ClickException as exc:
        return _error(exc.format_message(), exc.exit_code)
    except typer.Abort:
        return 130
    except BrokenPipeError:  # `dxserial ... | head`: the reader is gone, say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code if isinstance(code, int) else 0


def _click_exceptions() -> Any:
    """click's exceptions module: typer's own copy (since typer 0.27), else click's."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:
        return importlib.import_module("click.exceptions")


def _error(text: str, code: int) -> int:
    print(f"dxserial: error: {text}", file=sys.stderr)
    return code
