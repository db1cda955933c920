"""Command-line entry point: thin wrappers that parse options and call the library.

Commands live in ``dxserial.cli.*_cmd`` modules, imported only when their command is used
(see :data:`dxserial.cli.app.COMMANDS`), so ``dxserial --version`` and ``--help`` start
fast.  A :class:`~dxserial.errors.DxSerialError` that escapes a command becomes one line on
stderr and exit code 1; usage errors are exit code 2 (click's convention).
"""

from __future__ import annotations

import sys

from dxserial.cli.app import app
from dxserial.errors import DxSerialError

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    try:
        app(prog_name="dxserial")
    except DxSerialError as exc:
        print(f"dxserial: error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
