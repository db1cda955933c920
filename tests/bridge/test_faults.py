"""Short form of the fault suite (bench/faults.py): the bridge on a bad line and with
awkward TCP peers, every message counted.

The bridge runs in the test's own event loop on an in-process cable
(:mod:`dxserial.sim.memory`), a NULMODEM (or NUL frame) engine on the cable's other end
driven by the same loop, and DXP clients over TCP on 127.0.0.1.  Each test streams
distinct CHATs both ways and checks what arrived: everything once on TCP; everything once
at the serial engine after it drops a NULMODEM repeat of the message right before (as a
real engine does); nothing lost unless the bridge said so; memory bounded where a stalled
peer would make it grow.  No speed is asserted.  The last tests run the same scenarios
end to end (``dxserial vpair`` and ``dxserial bridge`` as processes, real ptys), as does
``python3 bench/faults.py`` in its long form.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import faults  # bench/faults.py (bench/ is on pytest's pythonpath)
import pytest
from faults import Row, make_stream, missed_repeats, reported_lost, sentinel, tally

from dxserial.sim.memory import faulty
from dxserial.testing.inproc import BridgeRun, LoopPeer, bridge_on_cable, nul_peer, nulmodem_peer
from dxserial.testing.inproc import until as wait
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import MemorySampler

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

#: The bridge's RSS may grow this much at most while a peer stalls: far below what
#: buffering the stalled messages in the bridge would take.
MEMORY_BOUND_MIB = 8.0
#: Echo timeout of both NULMODEM ends in process (the cable answers within one pass of
#: the loop; end to end over ptys bench/faults.py uses 0.3 s).
ECHO_TIMEOUT = 0.1


def by_direction(rows: list[Row]) -> dict[str, Row]:
    return {row.direction: row for row in rows}


def assert_all_once(row: Row, *, corruption: bool = False) -> None:
    """Every message arrived exactly once, nothing lost, nothing twice.

    On a corrupting line a character garbled on its way *and* in its echo is invisible to
    the echo handshake (NULMODEM has no checksum): the message then arrives garbled
    instead.  Such a message is told apart (same length, one character different) and is
    the only loss allowed.

    No duplicate may reach either engine after its own dedup: NULMODEM repeats of a CHAT
    are dropped by the bridge too (the two chat_repeat tests at the end pin the cases).
    """
    what = f"{row.scenario}, {row.direction}: {row}"
    assert row.extra.get("complete", True), f"streams did not finish: {what}"
    assert row.twice == 0 and row.missed == 0, f"delivered twice: {what}"
    assert row.reported == 0, f"the bridge reported losses: {what}"
    if corruption:
        assert row.lost == row.replaced, f"lost: {what}"
        assert row.once + row.twice == row.sent - row.replaced, what
    else:
        assert row.lost == 0, f"lost: {what}"
        assert row.once + row.twice == row.sent, what
        assert row.garbled == 0, f"garbled: {what}"


# ----------------------------------------------------------------------- the rig


class Run:
    """A bridge in this loop, the serial engine on the cable's end b, this process's memory."""

    def __init__(self, run: BridgeRun, engine: LoopPeer) -> None:
        self.run = run
        self.engine = engine
        self.memory = MemorySampler(os.getpid())
        self.started = time.monotonic()

    def client(self, **kwargs: Any) -> DxpClient:
        return DxpClient("127.0.0.1", self.run.port, timeout=20.0, **kwargs)

    async def finish(self, scenario: str, s2t: tuple[list[bytes], list[bytes]],
                     t2s: list[bytes], note: str = "", **extra: Any) -> list[Row]:
        """Stop the bridge and count both directions (as bench/faults.py's ``finish``)."""
        self.memory.stop()
        mem = (self.memory.peak_mib, self.memory.final_mib, self.memory.growth_mib,
               time.monotonic() - self.started)
        counts = await self.run.stop()
        log = self.run.log()
        sent, got = s2t
        t = tally(sent, got)
        missed = missed_repeats(self.run.trace_path, sent)
        s2t_row = Row(scenario, "serial->tcp", len(sent), t.once, t.twice, missed, t.lost,
                      reported_lost(log, "serial->tcp"), t.garbled, t.replaced,
                      counts.get("duplicates", 0), *mem, note, dict(extra, counts=counts))
        t = tally(t2s, self.engine.accepted)
        t2s_row = Row(scenario, "tcp->serial", len(t2s), t.once, t.twice, 0, t.lost,
                      reported_lost(log, "tcp->serial"), t.garbled, t.replaced,
                      self.engine.repeats, *mem, note, dict(extra, counts=counts))
        return [s2t_row, t2s_row]


Scenario = Callable[[Run], Awaitable[list[Row]]]


async def on_cable(tmp_path: Path, scenario: Scenario, *, link: str = "nulmodem",
                   cable_args: dict[str, Any] | None = None, seed: int = 1) -> list[Row]:
    """Run ``scenario`` on a fresh bridge with its serial engine; both gone afterwards."""
    async with bridge_on_cable(tmp_path, link=link, echo_timeout=ECHO_TIMEOUT,
                               cable_args=cable_args) as run:
        end_b = run.cable.open("b")
        engine = (nulmodem_peer(end_b, timeout=ECHO_TIMEOUT, seed=seed, backoff=0.1)
                  if link == "nulmodem" else nul_peer(end_b))
        r = Run(run, engine)
        try:
            return await scenario(r)
        finally:
            r.memory.stop()
            engine.close()


async def exchange(r: Run, client: DxpClient, s2t: list[bytes], t2s: list[bytes], *,
                   stall: float = 20.0, limit: float = 120.0) -> bool:
    """Both streams at once, each followed by its sentinel; wait for both sentinels."""
    r.engine.send_many([*s2t, sentinel("s")])
    client.send_many([*t2s, sentinel("t")])
    return await wait(
        lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
        lambda: (len(client.received), len(r.engine.raw)), stall=stall, limit=limit,
    )


# ----------------------------------------------------------------------- line faults


@pytest.mark.parametrize(("rate", "messages", "longest"), [(0.001, 30, 24), (0.01, 10, 8)])
async def test_drop_and_corrupt(tmp_path: Path, rate: float, messages: int,
                                longest: int) -> None:
    """Drop and corrupt, each at ``rate`` per byte and direction (5 %: long form only)."""
    s2t = make_stream("s", messages, 21, longest=longest)
    t2s = make_stream("t", messages, 21, longest=longest)
    line = {"a_to_b": faulty(rate, rate, seed=21), "b_to_a": faulty(rate, rate, seed=22)}

    async def scenario(r: Run) -> list[Row]:
        with r.client() as client:
            complete = await exchange(r, client, s2t, t2s)
        stats = r.run.cable.stats()
        hit = {k: sum(d.get(k, 0) for d in stats.values()) for k in ("dropped", "corrupted")}
        return await r.finish("line faults", (s2t, client.received), t2s, complete=complete,
                              **hit)

    rows = by_direction(await on_cable(tmp_path, scenario, cable_args=line, seed=21))
    for row in rows.values():
        assert_all_once(row, corruption=True)
    if rate >= 0.01:  # the line really was bad (at 0.1 % a short run may see no fault)
        assert rows["serial->tcp"].extra["dropped"] > 0
        assert rows["serial->tcp"].extra["corrupted"] > 0


async def test_serial_end_unplugged_and_replugged_repeatedly(tmp_path: Path) -> None:
    """Each time the bridge's end is pulled out the bridge notices, and each time it is put
    back the bridge reopens it; both streams run all along."""
    cycles, down, up = 3, 0.3, 0.3
    s2t, t2s = make_stream("s", 150, 22), make_stream("t", 150, 22)

    async def scenario(r: Run) -> list[Row]:
        log = r.run.log
        with r.client() as client:
            r.engine.send_many([*s2t, sentinel("s")])
            client.send_many([*t2s, sentinel("t")])
            for k in range(1, cycles + 1):
                await asyncio.sleep(up)  # scenario timing: the cable is in
                r.run.cable.unplug()
                assert await wait(lambda k=k: log().count("lost: unplugged") == k), log()
                await asyncio.sleep(down)  # scenario timing: the cable is out
                r.run.cable.replug()
                assert await wait(lambda k=k: log().count("is back;") == k), log()
            complete = await wait(
                lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
                lambda: (len(client.received), len(r.engine.raw)), stall=20.0,
            )
        return await r.finish("unplugged", (s2t, client.received), t2s,
                              reopens=log().count("is back;"), complete=complete)

    rows = by_direction(await on_cable(tmp_path, scenario, seed=22))
    for row in rows.values():
        assert_all_once(row)
    assert rows["serial->tcp"].extra["reopens"] == cycles


# ----------------------------------------------------------------------- TCP peers


async def tcp_hangups(tmp_path: Path, n: int, *, clients: int, abrupt: bool,
                      seed: int) -> dict[str, Row]:
    """TCP clients that hang up in the middle of a message, one after another (as
    bench/faults.py's ``tcp_hangups``, whose docstring tells the story)."""
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    share = max(1, n // (clients + 1))
    received: list[bytes] = []

    async def scenario(r: Run) -> list[Row]:
        log = r.run.log
        r.engine.send_many(s2t)
        for k in range(clients):
            client = r.client()
            try:
                mine = t2s[k * share:(k + 1) * share]
                client.send_many(mine)
                # its own messages reach the serial engine, and some of the serial stream
                # reaches it, before it hangs up
                assert await wait(lambda m=mine: set(m) <= set(r.engine.accepted),
                                  lambda: len(r.engine.raw))
                want = min(len(s2t), (k + 1) * share)
                assert await wait(lambda c=client, w=want: len(received) + len(c.received) >= w,
                                  lambda c=client: len(c.received))
                await asyncio.to_thread(client.send_bytes, f"Ct-cut{k} half a mess".encode())
                if abrupt:
                    client.abort()
                else:
                    client.half_close()
                    await wait(client.eof.is_set)
                # one client at a time: the next one connects once the bridge let go
                assert await wait(lambda k=k: log().count("went away") >= k + 1), log()
            finally:
                client.close()
                received.extend(client.received)
        last = r.client()
        try:
            assert await wait(lambda: log().count("connected (session") >= clients + 1)
            r.engine.send_many([sentinel("s")])
            last.send_many([*t2s[clients * share:], sentinel("t")])
            complete = await wait(lambda: sentinel("s") in received + last.received
                                  and sentinel("t") in r.engine.raw,
                                  lambda: (len(last.received), len(r.engine.raw)))
        finally:
            last.close()
            received.extend(last.received)
        cut = log().count("tcp->serial: peer hung up mid-message")
        return await r.finish("hang-ups", (s2t, received), t2s, cut_reported=cut,
                              complete=complete)

    return by_direction(await on_cable(tmp_path, scenario, seed=seed))


async def test_tcp_clients_hang_up_mid_message(tmp_path: Path) -> None:
    rows = await tcp_hangups(tmp_path, 60, clients=3, abrupt=False, seed=23)
    for row in rows.values():
        assert_all_once(row)
    assert rows["tcp->serial"].extra["cut_reported"] == 3  # each cut-off message is logged


async def test_tcp_clients_reset_mid_message(tmp_path: Path) -> None:
    """A reset connection loses what the bridge already wrote into it (TCP has no receipt);
    what the clients sent, and everything after, still arrives once."""
    rows = await tcp_hangups(tmp_path, 60, clients=3, abrupt=True, seed=24)
    assert_all_once(rows["tcp->serial"])
    s2t = rows["serial->tcp"]
    assert s2t.extra["complete"]
    assert s2t.twice == s2t.missed and s2t.garbled == 0
    assert s2t.once + s2t.twice + s2t.lost == s2t.sent
    # the cut-off message is reported when the bridge read it before the reset
    assert rows["tcp->serial"].extra["cut_reported"] <= 3


async def test_tcp_client_silent_for_long(tmp_path: Path) -> None:
    """'Long' here: 1.5 s, many NULMODEM echo timeouts (0.1 s) and bridge reopen intervals."""
    idle, n = 1.5, 20
    s2t, t2s = make_stream("s", n, 25), make_stream("t", n, 25)
    half = n // 2
    trickle = 3

    async def scenario(r: Run) -> list[Row]:
        with r.client() as client:
            client.send_many(t2s[:half])
            r.engine.send_many(s2t[:half])
            await wait(lambda: len(client.received) >= half and len(r.engine.accepted) >= half)
            for raw in s2t[half:half + trickle]:
                await asyncio.sleep(idle / (trickle + 1))  # scenario: the client is silent
                r.engine.send(raw)
            await asyncio.sleep(idle / (trickle + 1))
            kept = not client.eof.is_set() and "went away" not in r.run.log()
            complete = await exchange(r, client, s2t[half + trickle:], t2s[half:])
        return await r.finish("silent client", (s2t, client.received), t2s, kept=kept,
                              complete=complete)

    rows = by_direction(await on_cable(tmp_path, scenario, seed=25))
    for row in rows.values():
        assert_all_once(row)
    assert rows["serial->tcp"].extra["kept"], "the bridge dropped a silent client"


async def slow_reader(tmp_path: Path, n: int, *, length: int, link: str, seed: int,
                      settle: float = 1.0) -> dict[str, Row]:
    """A TCP client that stops reading while the serial engine sends ``n`` long CHATs (as
    bench/faults.py's ``slow_reader``: an Ethernet-sized segment, a small receive buffer).
    ``taken``: what the engine got out while the client did not read."""
    s2t = make_stream("s", n, seed, length=length)
    t2s = make_stream("t", max(1, n // 100), seed)

    async def scenario(r: Run) -> list[Row]:
        with r.client(rcvbuf=4096, mss=faults.ETHERNET_MSS) as client:
            client.pause()
            r.engine.send_many([*s2t, sentinel("s")])
            await wait(lambda: len(r.engine.delivered) > n, lambda: len(r.engine.delivered),
                       stall=settle)
            taken = min(n, len(r.engine.delivered))
            r.memory.sample()
            stalled_growth = r.memory.growth_mib
            client.resume()
            complete = await exchange(r, client, [], t2s)
        return await r.finish("slow reader", (s2t, client.received), t2s, taken=taken,
                              stalled_growth_mib=stalled_growth, complete=complete)

    return by_direction(await on_cable(tmp_path, scenario, link=link, seed=seed))


async def test_tcp_client_stops_reading_nulmodem_line(tmp_path: Path) -> None:
    rows = await slow_reader(tmp_path, 200, length=100, link="nulmodem", seed=26)
    for row in rows.values():
        assert_all_once(row)
    assert rows["serial->tcp"].extra["stalled_growth_mib"] < MEMORY_BOUND_MIB
    assert rows["serial->tcp"].growth_mib < MEMORY_BOUND_MIB


async def test_tcp_client_stops_reading_backpressure_reaches_the_serial_engine(
    tmp_path: Path,
) -> None:
    """A NUL-frame line is fast enough to fill the stalled client's socket quickly: the
    bridge must then stop taking messages off the line (the engine's writes wait) and stay
    small.  (The client announces Ethernet's segment size: see dxserial.testing.peers.DxpClient.)"""
    n = 8000
    rows = await slow_reader(tmp_path, n, length=120, link="nul", seed=27)
    for row in rows.values():
        assert_all_once(row)
    s2t = rows["serial->tcp"]
    assert s2t.extra["taken"] < n, "the bridge took everything: no backpressure"
    assert s2t.extra["stalled_growth_mib"] < MEMORY_BOUND_MIB
    assert s2t.growth_mib < MEMORY_BOUND_MIB


async def test_serial_engine_hangs_backpressure_reaches_the_tcp_client(tmp_path: Path) -> None:
    """The serial engine stops reading: the bridge's serial queue fills, it stops reading
    TCP, and the client's sends wait (as bench/faults.py's ``serial_hangs``)."""
    n, settle = 8000, 1.0
    t2s = make_stream("t", n, 28, length=120)
    s2t = make_stream("s", max(1, n // 100), 28)

    async def scenario(r: Run) -> list[Row]:
        with r.client(sndbuf=4096, mss=faults.ETHERNET_MSS) as client:
            r.engine.pause()
            client.send_many([*t2s, sentinel("t")])
            await wait(lambda: client.sent > n, lambda: client.sent, stall=settle)
            taken = min(n, client.sent)
            r.memory.sample()
            stalled_growth = r.memory.growth_mib
            r.engine.resume()
            r.engine.send_many([*s2t, sentinel("s")])
            complete = await wait(
                lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
                lambda: (len(client.received), len(r.engine.raw)), stall=20.0,
            )
        return await r.finish("serial hangs", (s2t, client.received), t2s, taken=taken,
                              stalled_growth_mib=stalled_growth, complete=complete)

    rows = by_direction(await on_cable(tmp_path, scenario, link="nul", seed=28))
    for row in rows.values():
        assert_all_once(row)
    t2s_row = rows["tcp->serial"]
    assert t2s_row.extra["taken"] < n, "the bridge read everything: no backpressure"
    assert t2s_row.extra["stalled_growth_mib"] < MEMORY_BOUND_MIB


# ----------------------------------------------------------------------- end to end


def test_end_to_end_backpressure_reaches_the_serial_engine_through_a_pty() -> None:
    """The same as in process, with the kernel's pty flow control and the bridge's own RSS:
    ``dxserial vpair`` and ``dxserial bridge`` as processes."""
    n = 8000
    rows = by_direction(faults.slow_reader(n, length=120, link="nul", seed=27, settle=1.5,
                                           stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    s2t = rows["serial->tcp"]
    assert s2t.extra["taken"] < n, "the bridge took everything: no backpressure"
    assert s2t.extra["stalled_growth_mib"] < MEMORY_BOUND_MIB
    assert s2t.growth_mib < MEMORY_BOUND_MIB


def test_chat_repeat_right_after_is_dropped() -> None:
    (row,) = faults.chat_repeat(0.5, seed=29)
    assert row.once == 1 and row.twice == 0
    assert row.repeats == 1


def test_chat_repeat_after_several_failed_attempts_is_dropped() -> None:
    """Failed attempts on a noisy line (or a pulled cable) can delay a repeat for long."""
    (row,) = faults.chat_repeat(2.0, seed=30)
    assert row.once == 1 and row.twice == 0
    assert row.repeats == 1


def test_chat_repeat_after_a_tcp_message_crossed_is_dropped() -> None:
    s2t, t2s = faults.chat_repeat(0.3, crossed=True, seed=31)
    assert t2s.once == 1, t2s  # the crossing message reached the serial engine
    assert s2t.twice == 0, f"the repeat reached TCP: {s2t}"
