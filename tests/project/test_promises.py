"""Promises the suite did not hold before (issue 21's hand-made mutations survived them),
each pinned on the path the program really takes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers import run_in_process

from dxserial.game.pdn import parse_pdn
from dxserial.protocol.links import NulLink
from dxserial.transports.linkdriver import LinkDriver


class SlowPort:
    """A TCP peer that does not read at first: the kernel takes nothing until ``open_up``."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.full = True
        self.gate = asyncio.Event()

    async def read(self) -> bytes:
        await asyncio.Event().wait()
        return b""

    async def write(self, data: bytes) -> None:
        await self.gate.wait()
        self.writes.append(data)

    def try_write(self, data: bytes) -> bool:
        if self.full:
            return False
        self.writes.append(data)
        return True

    async def close(self) -> None:
        return None

    def open_up(self) -> None:
        self.full = False
        self.gate.set()


async def test_a_backlog_of_messages_still_leaves_one_message_per_tcp_send() -> None:
    """DXP on TCP: one message per send (pydraughts loses the second of two coalesced ones).
    The bridge writes through the link driver; a backlog behind a peer that does not read
    must not be merged into one write when the peer reads again."""
    port = SlowPort()
    driver = LinkDriver(NulLink(), lambda event: None, name="tcp")
    driver.attach(port)  # type: ignore[arg-type]
    messages = [f"C{n:04d} a chat".encode() for n in range(200)]
    for raw in messages:
        driver.send(raw)
    assert port.writes == []  # all of them wait behind the first
    port.open_up()
    for _ in range(100):
        if len(port.writes) == len(messages):
            break
        await asyncio.sleep(0)  # let the writer task run: no time passes
    await driver.close()
    assert port.writes == [raw + b"\0" for raw in messages]


OTHER_TOOL = """[Event "Lidraughts casual"]
[White "alice"]
[Black "bob"]
[Result "1/2-1/2"]
[GameType "20"]

1. 32-28 19-23 2. 28x19 14x23 1/2-1/2

[Event "Lidraughts casual"]
[White "carol"]
[Black "dave"]
[Result "0-1"]

1. 33-28 18-22 0-1

[Event "Turbo Dambase"]
[White "erin"]
[Black "frank"]

1. 34-29 1-0
"""


def test_a_pdn_from_another_tool_keeps_its_results(tmp_path: Path) -> None:
    """Chess-style results (1/2-1/2, 0-1, 1-0) are draughts' 1-1, 0-2, 2-0, not '*'."""
    assert [g.result for g in parse_pdn(OTHER_TOOL)] == ["1-1", "0-2", "2-0"]
    path = tmp_path / "other.pdn"
    path.write_text(OTHER_TOOL)
    shown = run_in_process("replay", path)
    assert shown.returncode == 0, shown.stderr
    results = [line for line in shown.stdout.splitlines() if line.startswith("result ")]
    assert results == ["result 1-1", "result 0-2", "result 2-0"], shown.stdout
