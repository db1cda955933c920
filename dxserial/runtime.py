"""Which event loop runs a command: uvloop where it is installed, else asyncio's own.

uvloop makes each pass of the loop cheaper (the bridge's round trip is a few passes), and
is a dependency wherever it builds (not on Windows).  ``DXSERIAL_LOOP=asyncio`` forces
the standard loop, to compare the two or to rule uvloop out when hunting a problem.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: the loop :func:`run` will use."""
    if os.environ.get("DXSERIAL_LOOP", "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop :func:`loop_name` names.

    What start-up imported (typer, click, rich: tens of thousands of objects) is
    moved out of the garbage collector's sight first, so that its full collections,
    which a long-running bridge triggers now and then, do not walk them all again.
    """
    gc.collect()
    gc.freeze()
    if loop_name() == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main)
    return asyncio.run(main)


__all__ = ["loop_name", "run"]
