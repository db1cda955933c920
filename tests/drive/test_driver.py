"""The one driver (drive/driver.py) with machines written for the test, on in-memory ports.

What a program relies on: actions in the order the machine gave them (an input that comes
while actions are applied queues its actions behind them), the judgement after the writes, a Work job holds the other inputs back, the
machine's deadline wakes it, a stop before a port opens ends the wait, raw sides write bytes
as they are.  The bridge, engine, match and probe tests cover the programs on it.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from dxserial.drive.actions import Action, Done, Log, Say, Send, Work
from dxserial.drive.driver import Driver
from dxserial.drive.machine import BaseMachine
from dxserial.protocol.links import NulLink

log = logging.getLogger("test.driver")


class MemoryPort:
    """A port whose writes are kept and whose reads come from a queue (b"" ends it)."""

    name = "memory"

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.closed = False

    async def read(self) -> bytes:
        return await self.incoming.get()

    async def write(self, data: bytes) -> None:
        self.written.append(data)

    def try_write(self, data: bytes) -> bool:
        self.written.append(data)
        return True

    async def close(self) -> None:
        self.closed = True


class Echo(BaseMachine[str]):
    """Answers each message on side "a" with itself on side "b", and logs what it saw."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def receive(self, side: str, raw: bytes, now: float) -> list[Action]:
        self.seen.append(f"receive {raw.decode()}")
        return [Send("b", raw), Log(logging.INFO, f"forwarded {raw.decode()}")]

    def delivered(self, side: str, raw: bytes, now: float) -> list[Action]:
        self.seen.append(f"delivered {raw.decode()} to {side}")
        return []

    def settle(self) -> list[Action]:
        self.seen.append("settle")
        return []


def test_actions_apply_in_order_and_settle_comes_after_each_messages_writes() -> None:
    async def main() -> list[str]:
        machine = Echo()
        driver: Driver[str] = Driver(machine, log=log)
        driver.add_side("a", NulLink())
        driver.add_side("b", NulLink())
        a, b = MemoryPort(), MemoryPort()
        driver.attach("a", a)
        driver.attach("b", b)
        driver.pump("a").feed(b"C1\x00C2\x00")
        assert b.written == [b"C1\x00", b"C2\x00"]  # one write per message
        await driver.close()
        return machine.seen

    seen = asyncio.run(main())
    # The NUL link confirms a delivery during the write (an input while actions are being
    # applied: its actions queue behind); the judgement (settle) comes after the writes.
    assert seen == [
        "receive C1", "delivered C1 to b", "settle", "receive C2", "delivered C2 to b", "settle",
    ]


class Timed(BaseMachine[str]):
    """Says "tick" at each deadline, three times, then is done."""

    def __init__(self, start: float) -> None:
        self.at: float | None = start + 0.01
        self.ticks = 0

    def next_deadline(self) -> float | None:
        return self.at

    def poll(self, now: float) -> list[Action]:
        self.ticks += 1
        if self.ticks == 3:
            self.at = None
            return [Say("tick"), Done(0, "three ticks")]
        self.at = now + 0.01
        return [Say("tick")]


def test_the_machines_deadline_wakes_it_until_it_is_done() -> None:
    async def main() -> tuple[list[str], Done | None]:
        said: list[str] = []
        loop = asyncio.get_running_loop()
        driver: Driver[str] = Driver(Timed(loop.time()), log=log, say=said.append)
        driver.act(lambda now: [])  # arms the timer
        done = await asyncio.wait_for(driver.wait(), 5)
        await driver.close()
        return said, done

    said, done = asyncio.run(main())
    assert said == ["tick", "tick", "tick"]
    assert done == Done(0, "three ticks")


class Thinker(BaseMachine[str]):
    """A message starts a job in a thread; messages meanwhile wait until it returns."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.order: list[str] = []

    def receive(self, side: str, raw: bytes, now: float) -> list[Action]:
        self.order.append(f"in {raw.decode()}")
        if raw == b"C1":
            return [Work(self._think)]
        return [Done(0, "ok")] if raw == b"C3" else []

    def _think(self) -> list[Action]:
        self.release.wait(5)
        self.order.append("thought")
        return [Send("a", b"Cmove")]


def test_inputs_wait_in_order_while_a_work_job_runs() -> None:
    async def main() -> tuple[list[str], list[bytes]]:
        release = threading.Event()
        machine = Thinker(release)
        driver: Driver[str] = Driver(machine, log=log)
        driver.add_side("a", NulLink())
        port = MemoryPort()
        driver.attach("a", port)
        driver.pump("a").feed(b"C1\x00C2\x00C3\x00")
        assert machine.order == ["in C1"]  # C2 and C3 wait for the job
        release.set()
        await asyncio.wait_for(driver.wait(), 5)
        await driver.close()
        return machine.order, port.written

    order, written = asyncio.run(main())
    assert order == ["in C1", "thought", "in C2", "in C3"]
    assert written == [b"Cmove\x00"]


def test_a_stop_before_the_port_opens_ends_the_wait() -> None:
    async def main() -> tuple[object, bool]:
        driver: Driver[str] = Driver(BaseMachine(), log=log)
        never: asyncio.Future[MemoryPort] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.01, driver.stop)
        got = await asyncio.wait_for(driver.until_stopped(never), 5)
        await driver.close()
        return got, never.cancelled()

    got, cancelled = asyncio.run(main())
    assert got is None
    assert cancelled


class Raw(BaseMachine[str]):
    def __init__(self) -> None:
        self.heard = b""

    def line(self, side: str, data: bytes, now: float) -> list[Action]:
        self.heard += data
        return [Send(side, b"\x02" + data)] if data != b"end" else [Done(0, "end")]


def test_a_raw_side_hands_bytes_to_line_and_writes_sends_as_they_are() -> None:
    async def main() -> tuple[bytes, list[bytes]]:
        machine = Raw()
        driver: Driver[str] = Driver(machine, log=log)
        driver.add_side("engine", None)
        port = MemoryPort()
        driver.attach("engine", port)
        reader = asyncio.create_task(driver.read("engine", port))
        for chunk in (b"ab", b"c", b"end"):
            port.incoming.put_nowait(chunk)
        await asyncio.wait_for(driver.wait(), 5)
        reader.cancel()
        await driver.close()
        return machine.heard, port.written

    heard, written = asyncio.run(main())
    assert heard == b"abcend"
    assert written == [b"\x02ab", b"\x02c"]


def test_a_flood_is_held_back_from_the_log_only_the_trace_keeps_every_line() -> None:
    """Issue #36 point 13: past the burst, a kind of line (a connection named) stopped
    reaching the trace too; a real connection could hide behind a flood of them."""

    async def main() -> tuple[list[dict[str, object]], list[str]]:
        traced: list[dict[str, object]] = []
        logged: list[str] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                logged.append(record.getMessage())

        flood_log = logging.getLogger("test.driver.flood")
        flood_log.setLevel(logging.INFO)
        flood_log.addHandler(Keep())
        flood_log.propagate = False
        driver: Driver[str] = Driver(BaseMachine(), log=flood_log, trace=traced.append)
        driver.apply([
            Log(logging.INFO, f"TCP client 127.0.0.1:{40000 + n} connected", "tcp sessions")
            for n in range(30)
        ])
        await driver.close()
        return traced, logged

    traced, logged = asyncio.run(main())
    named = [r["text"] for r in traced if "connected" in str(r["text"])]
    assert len(named) == 30  # every connection is in the trace
    assert "TCP client 127.0.0.1:40029 connected" in named
    held = [r for r in traced if r.get("log") == "held back"]
    assert len(held) == 10
    assert len([x for x in logged if "connected" in x]) == 20  # the log keeps its burst
