"""Command-line entry point: thin wrappers that parse options and call the library.

Every command module registers itself on :data:`app` when imported below.  A
:class:`~dxserial.errors.DxSerialError` that escapes a command becomes one line on stderr
and exit code 1; usage errors are exit code 2 (click's convention).
"""

from __future__ import annotations

import sys

from dxserial.cli.app import app
from dxserial.errors import DxSerialError

# Command modules: importing one registers its command(s) on ``app``.
from dxserial.cli import parse_cmd  # noqa: F401  isort: skip
from dxserial.cli import vpair_cmd  # noqa: F401  isort: skip
from dxserial.cli import moves_cmd  # noqa: F401  isort: skip
from dxserial.cli import udev_cmd  # noqa: F401  isort: skip
from dxserial.cli import ports_cmd  # noqa: F401  isort: skip
from dxserial.cli import replay_cmd  # noqa: F401  isort: skip
from dxserial.cli import bridge_cmd  # noqa: F401  isort: skip
from dxserial.cli import selftest_cmd  # noqa: F401  isort: skip
from dxserial.cli import demo_cmd  # noqa: F401  isort: skip
from dxserial.cli import engine_cmd  # noqa: F401  isort: skip
from dxserial.cli import match_cmd  # noqa: F401  isort: skip

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
