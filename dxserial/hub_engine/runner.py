"""Runs the built-in Hub engine on stdin/stdout under the one driver.

Lines are read while a search runs (:mod:`dxserial.hub_engine.machine`), so ``stop``
ends it within milliseconds and ``ping`` is answered at once.  End of input is a quit, as
the protocol asks.  Exit status 0 on ``quit`` or end of input.
"""

from __future__ import annotations

import asyncio
import logging

from dxserial.drive.actions import Done
from dxserial.drive.driver import Driver
from dxserial.hub_engine.engine import HubEngine
from dxserial.hub_engine.machine import CLIENT, HubEngineMachine
from dxserial.transports.stdio_lines import StdioLinePort, StdioLines

log = logging.getLogger("dxserial.hub_engine")


async def run_hub_engine(engine: HubEngine, seed: int | None = None) -> int:
    """Serve one Hub client on stdin/stdout until it quits; the exit status."""
    io = StdioLines()
    await io.open()
    port = StdioLinePort(io)
    machine = HubEngineMachine(engine, seed)
    driver: Driver[str] = Driver(machine, log=log)
    driver.add_side(CLIENT, None)
    driver.attach(CLIENT, port)

    async def read() -> None:
        await driver.read(CLIENT, port)  # to the end of input: a quit
        driver.end(Done(0, "end of input"))

    reader = asyncio.create_task(read(), name="hub-engine-stdin")
    try:
        done = await driver.wait()
        return done.code if done is not None else 0
    finally:
        machine.cut()
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await driver.close()
