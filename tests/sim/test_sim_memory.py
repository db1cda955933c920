"""The in-process cable: what one end writes the other reads, through the line's faults,
in order; a full end holds its writer back; an unplugged end fails and cannot reopen."""

from __future__ import annotations

import asyncio

import pytest
from helpers import until

from dxserial.errors import ConfigError, PortError
from dxserial.sim.memory import Cable, cable, delayed, faulty, split
from dxserial.transports.base import Port, PushPort
from dxserial.transports.openers import open_serial
from dxserial.transports.schemes import choices


async def test_what_one_end_writes_the_other_reads() -> None:
    c = Cable("t")
    a, b = c.open("a"), c.open("b")
    assert isinstance(a, Port) and isinstance(a, PushPort)
    await a.write(b"hello")
    assert await b.read() == b"hello"
    assert b.try_write(b"back")
    assert await a.read() == b"back"
    assert c.written == {"a": 5, "b": 4}


async def test_split_and_delayed_pieces_arrive_in_order() -> None:
    c = Cable("t", a_to_b=split(2, delayed(0.01)))
    a, b = c.open("a"), c.open("b")
    got: list[bytes] = []
    b.start_push(got.append, lambda why: None)
    a.try_write(b"abcde")
    a.try_write(b"fg")
    await until(lambda: b"".join(got) == b"abcdefg", 2)
    assert got == [b"ab", b"cd", b"e", b"fg"]


async def test_a_faulty_line_drops_and_corrupts_and_counts_it() -> None:
    line = faulty(drop=0.1, corrupt=0.1, seed=3)
    c = Cable("t", a_to_b=line)
    a, b = c.open("a"), c.open("b")
    a.try_write(bytes(1000))
    got = await b.read()
    assert len(got) == 1000 - line.dropped
    assert sum(1 for x in got if x) == line.corrupted > 0
    assert c.stats()["a->b"] == {"written": 1000, "dropped": line.dropped,
                                 "corrupted": line.corrupted}


async def test_a_full_end_holds_its_writer_back_until_read() -> None:
    c = Cable("t", capacity=10)
    a, b = c.open("a"), c.open("b")
    b.pause_reading()
    got: list[bytes] = []
    b.start_push(got.append, lambda why: None)
    assert a.try_write(b"0123456789")
    assert not a.try_write(b"x")  # b holds 10 unread bytes
    writer = asyncio.create_task(a.write(b"more"))
    for _ in range(10):  # turns of the loop: nothing may move while b is paused
        await asyncio.sleep(0)
    assert not writer.done() and got == []
    b.resume_reading()
    await asyncio.wait_for(writer, 2)
    await until(lambda: b"".join(got) == b"0123456789more", 2)


async def test_unplugged_end_fails_and_opens_again_only_once_replugged() -> None:
    with cable("plug") as c:
        a = await open_serial("memory://plug")
        ended: list[object] = []
        a.start_push(lambda data: None, ended.append)
        c.open("b")
        c.unplug()
        assert len(ended) == 1 and "unplugged" in str(ended[0])
        with pytest.raises(PortError, match="unplugged"):
            await open_serial("memory://plug")
        c.replug()
        again = await open_serial("memory://plug")
        with pytest.raises(PortError, match="busy"):
            await open_serial("memory://plug")
        await again.close()


async def test_the_scheme_is_for_tests_only() -> None:
    with pytest.raises(PortError, match="no in-process cable"):
        await open_serial("memory://nobody")
    assert "memory://" not in choices(endpoints=True)
    with pytest.raises(ConfigError):
        await open_serial("memry://x")
