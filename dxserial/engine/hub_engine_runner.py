"""Runs :class:`~dxserial.engine.hub_engine.HubEngine` on stdin/stdout under asyncio.

Lines are read while a search runs (in a worker thread), so ``stop`` ends it within
milliseconds and ``ping`` is answered at once.  End of input is a quit, as the protocol
asks.  Exit status 0 on ``quit`` or end of input.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import threading
import time

from dxserial.draughts import LegalMove
from dxserial.engine.hub_engine import CutSearch, HubEngine, Log, Quit, Send, Think
from dxserial.engine.search import SearchCancelled, choose_move
from dxserial.protocol import hub
from dxserial.transports.stdio_lines import StdioLines

log = logging.getLogger("dxserial.hub_engine")


class _Search:
    """One search in a worker thread; ``cut`` makes its clock jump past any deadline."""

    def __init__(self, think: Think, rng: random.Random) -> None:
        self.cut = threading.Event()
        self.started = time.monotonic()
        self.task = asyncio.ensure_future(asyncio.to_thread(self._run, think, rng))

    def _clock(self) -> float:
        return math.inf if self.cut.is_set() else time.monotonic()

    def _run(self, think: Think, rng: random.Random) -> LegalMove | None:
        deadline = think.deadline if think.deadline is not None else math.inf
        try:
            return choose_move(
                think.position, think.depth, rng, deadline=deadline, clock=self._clock
            )
        except SearchCancelled:
            return None


async def run_hub_engine(engine: HubEngine, seed: int | None = None) -> int:
    """Serve one Hub client on stdin/stdout until it quits; the exit status."""
    io = StdioLines()
    await io.open()
    rng = random.Random(seed)
    search: _Search | None = None
    reading: asyncio.Future[str | None] | None = None
    try:
        while True:
            if reading is None:
                reading = asyncio.ensure_future(io.next())
            waits: set[asyncio.Future[object]] = {reading}  # type: ignore[arg-type]
            if search is not None:
                waits.add(search.task)  # type: ignore[arg-type]
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            actions = []
            if search is not None and search.task in done:
                spent = time.monotonic() - search.started
                actions += engine.searched(search.task.result(), spent)
                search = None
            if reading in done:
                text, reading = reading.result(), None
                if text is None:
                    return 0
                if text.strip():
                    actions += engine.receive(text, time.monotonic())
            for action in actions:
                if isinstance(action, Send):
                    if not io.write(hub.format_line(action.line)):
                        return 0  # the client is gone
                elif isinstance(action, Think):
                    search = _Search(action, rng)
                elif isinstance(action, CutSearch) and search is not None:
                    search.cut.set()
                elif isinstance(action, Log):
                    log.log(action.level, "%s", action.text)
                elif isinstance(action, Quit):
                    return 0
    finally:
        if search is not None:
            search.cut.set()
            await asyncio.gather(search.task, return_exceptions=True)
        if reading is not None:
            reading.cancel()
        io.close()
