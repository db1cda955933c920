"""The Hub engine on the one driver: its search runs while the client's lines are answered."""

from __future__ import annotations

import asyncio
import logging

from dxserial.drive.driver import Driver
from dxserial.hub_engine.engine import HubEngine
from dxserial.hub_engine.machine import CLIENT, HubEngineMachine

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


class LinePort:
    """Lines in from a queue, lines out into a list (a Hub client in memory)."""

    name = "lines"

    def __init__(self) -> None:
        self.incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.lines: list[str] = []
        self.arrived = asyncio.Event()

    async def read(self) -> bytes:
        return await self.incoming.get()

    async def write(self, data: bytes) -> None:
        self.try_write(data)

    def try_write(self, data: bytes) -> bool:
        self.lines.append(data.decode().rstrip("\n"))
        self.arrived.set()
        return True

    async def close(self) -> None:
        pass

    def say(self, text: str) -> None:
        self.incoming.put_nowait(f"{text}\n".encode())

    async def wait_for(self, start: str) -> str:
        while True:
            found = [line for line in self.lines if line.startswith(start)]
            if found:
                return found[-1]
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 10)


def test_ping_is_answered_during_a_search_and_stop_cuts_it() -> None:
    async def main() -> list[str]:
        machine = HubEngineMachine(HubEngine(depth=10), seed=1)
        driver: Driver[str] = Driver(machine, log=logging.getLogger("test"))
        driver.add_side(CLIENT, None)
        port = LinePort()
        driver.attach(CLIENT, port)
        reader = asyncio.create_task(driver.read(CLIENT, port))
        for text in ("hub", "init", "level infinite", f"pos pos={START}", "go analyze", "ping"):
            port.say(text)
        await port.wait_for("pong")
        assert machine.search is not None  # still thinking: no depth limit, no deadline
        assert not [line for line in port.lines if line.startswith("done")]
        port.say("stop")
        await port.wait_for("done move=")
        port.say("quit")
        done = await asyncio.wait_for(driver.wait(), 10)
        assert done is not None and done.code == 0
        reader.cancel()
        await driver.close()
        return port.lines

    lines = asyncio.run(main())
    assert lines.index("pong") < next(i for i, x in enumerate(lines) if x.startswith("done "))
