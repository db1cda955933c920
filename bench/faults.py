#!/usr/bin/env python3
"""Fault suite: the real bridge on a bad line and with awkward TCP peers, message by message.

``python3 bench/faults.py`` runs the long form and prints a Markdown table; bench/run.py
gets the same text from :func:`section`.  tests/bridge/test_faults.py runs a short form of each
scenario through the same functions and asserts on the figures.

The rig is what a user runs: ``dxserial vpair`` (the cable, with seeded drop/corrupt faults
and unplug/replug on its stdin) and ``dxserial bridge`` as processes; the bridge's memory
is read from ``/proc/PID/status`` (VmRSS sampled during the run, VmHWM at the end).  In
this process a NULMODEM engine speaks the echo handshake on the other end of the cable
(:class:`~dxserial.testing.peers.NulModemPeer`) and a DXP client talks to the bridge over
TCP (:class:`~dxserial.testing.peers.DxpClient`).

Each side sends a stream of distinct CHATs (``Cs00042 ...`` from the serial engine,
``Ct00042 ...`` from the TCP client): always legal, in or out of a game, so any message
that arrives can be told apart and counted.  A repeat of the previous message is NULMODEM
behaviour (the echo of the end byte was garbled, the sender sent it again); the serial
engine drops it as a real engine does and it is counted as a *repeat*, not as a second
delivery.  On TCP there is no such excuse: the bridge must hand every message over once.
A sentinel follows each stream; once it has arrived, nothing of the stream can still come.

Columns: *sent*; *delivered once* / *twice+*: distinct messages delivered once / more than
once (on the serial side after the engine's own drop of repeats), in brackets how many of
those the bridge's own trace shows to be NULMODEM repeats its duplicate rule let through
(:func:`missed_repeats`); *lost*: never delivered intact; *lost, reported*: the ones of
those the bridge logged as ``NOT delivered`` (and counted in ``lost``); *garbled*: arrived
but never sent, in brackets how many stand in for a lost message (one character garbled
both on its way and in its echo, which no echo handshake notices: NULMODEM has no
checksum); *repeats dropped*: NULMODEM repeats the serial engine dropped (tcp->serial) or
the bridge dropped as duplicates (serial->tcp); the bridge's VmHWM / VmRSS at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import os
import random
import select
import string
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dxserial.game.trace import read_trace
from dxserial.protocol.messages import escape
from dxserial.testing.fdio import read_until_quiet
from dxserial.testing.peers import DxpClient, NulFramePeer, NulModemPeer, SerialPeer
from dxserial.testing.process import MemorySampler, wait_for
from dxserial.testing.rig import Bridge, Vpair, start_rig

#: Echo timeout of both NULMODEM ends in these runs (a real line uses 5 s; a pty at full
#: speed answers in well under a millisecond, so this only shortens the waits).
ECHO_TIMEOUT = 0.3
#: "The link works at all": neither end gives up on a message.
MANY_ATTEMPTS = 100000
#: Segment size a stalled client announces (Ethernet's), so socket buffers are LAN-sized.
ETHERNET_MSS = 1460
_ALPHABET = string.ascii_lowercase + string.digits  # no byte one bit away from S or E


# ----------------------------------------------------------------------- TCP buffers


def tcp_send_buffer_max() -> int:
    """How far Linux lets a socket's send buffer grow (``net.ipv4.tcp_wmem``, 3rd field)."""
    try:
        return int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, IndexError, ValueError):
        return 4 * 1024 * 1024


def flood_size(length: int) -> int:
    """Messages of ``length`` bytes that overflow a stalled client's socket for sure."""
    return int((1.2 * tcp_send_buffer_max() + 1024 * 1024) / (length + 1))


# ----------------------------------------------------------------------- counting


def make_stream(tag: str, n: int, seed: int, *, longest: int = 24, length: int | None = None
                ) -> list[bytes]:
    """``n`` distinct CHATs ``C<tag><seq> <letters>``; text of lowercase letters and digits.

    No character of the text is one bit away from the start or end byte (0x02/0x03), so a
    single flipped bit cannot cut a message short; only the type byte ``C`` (0x43) can
    become an end byte, which leaves an empty message that the receiver drops.
    """
    rng = random.Random(f"{seed}:{tag}")
    out = []
    for i in range(n):
        head = f"C{tag}{i:05d}"
        size = (length - len(head) - 1) if length is not None else rng.randrange(0, longest + 1)
        pad = "".join(rng.choice(_ALPHABET) for _ in range(max(0, size)))
        out.append(f"{head} {pad}".rstrip().encode("ascii"))
    return out


def sentinel(tag: str) -> bytes:
    return f"C{tag}-end of stream".encode("ascii")


SENTINELS = (sentinel("s"), sentinel("t"))


@dataclass
class Row:
    """One direction of one scenario."""

    scenario: str
    direction: str
    sent: int
    once: int
    twice: int
    missed: int  # of ``twice``: NULMODEM repeats the bridge's rule let through
    lost: int
    reported: int
    garbled: int
    replaced: int
    repeats: int
    peak_mib: float
    final_mib: float
    growth_mib: float
    seconds: float
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.once == self.sent and self.twice == 0 and self.lost == 0


@dataclass(frozen=True)
class Tally:
    once: int
    twice: int
    lost: int
    garbled: int
    replaced: int


def tally(sent: list[bytes], got: list[bytes], ignore: tuple[bytes, ...] = SENTINELS) -> Tally:
    """How ``sent`` shows up in what arrived (``got``).

    ``garbled``: arrivals nobody sent.  ``replaced``: lost messages of which a copy with one
    wrong character arrived instead: the character was garbled on its way and its echo
    garbled back into the right one, which no echo handshake can notice.
    """
    counts = Counter(got)
    known = set(sent)
    strange = [raw for raw in got if raw not in known and raw not in ignore]
    lost = [raw for raw in sent if counts[raw] == 0]
    replaced = sum(
        1 for raw in lost
        if any(len(g) == len(raw) and sum(a != b for a, b in zip(g, raw, strict=True)) == 1
               for g in strange)
    )
    return Tally(
        once=sum(1 for raw in sent if counts[raw] == 1),
        twice=sum(1 for raw in sent if counts[raw] >= 2),
        lost=len(lost),
        garbled=len(strange),
        replaced=replaced,
    )


def missed_repeats(trace: Path, sent: list[bytes]) -> int:
    """Messages of ``sent`` (serial->tcp) that the bridge forwarded more than once, where the
    bridge's own trace shows each copy to be a NULMODEM repeat of the one before.

    A NULMODEM engine repeats a message when the echo of its end byte was garbled or lost,
    after any number of failed attempts (noise), or after the line was away (unplugged);
    it sends nothing else in between (its queue is first in, first out).  So two forwards
    of the same message with no other stream message from the serial side between them
    (garbled or invalid arrivals aside) are a repeat the bridge should have dropped
    (``Bridge._repeated_chat``): counted here.  Any other duplicate is a different fault.
    """
    if not trace.exists():
        return 0
    wanted = {escape(raw) for raw in sent}
    records = [rec for rec in read_trace(trace)
               if rec.get("kind") == "message" and rec.get("direction") == "serial->tcp"
               and rec.get("raw") in wanted]
    forwarded: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        if rec.get("action") == "forwarded":
            forwarded.setdefault(rec["raw"], []).append(i)

    def repeat(raw: str, i: int, j: int) -> bool:
        return all(records[k]["raw"] == raw for k in range(i + 1, j))

    return sum(
        1 for raw, places in forwarded.items()
        if len(places) > 1 and all(repeat(raw, i, j) for i, j in itertools.pairwise(places))
    )


def reported_lost(log: str, direction: str) -> int:
    """``NOT delivered`` lines the bridge logged for ``direction``."""
    return sum(1 for line in log.splitlines()
               if f"{direction}: message" in line and "NOT delivered" in line)


# ----------------------------------------------------------------------- the rig


@dataclass
class Run:
    """A rig (vpair + bridge processes) with a serial engine on end B and the bridge's
    memory sampled, from ``started``."""

    directory: Path
    vpair: Vpair
    bridge: Bridge
    engine: SerialPeer
    memory: MemorySampler
    started: float

    def client(self, **kwargs: Any) -> DxpClient:
        return DxpClient("127.0.0.1", self.bridge.port, timeout=20.0, **kwargs)


@contextlib.contextmanager
def rig(vpair_args: tuple[str, ...] = (), bridge_args: tuple[str, ...] = (), *,
        seed: int = 1, link: str = "nulmodem") -> Iterator[Run]:
    """vpair + bridge processes, and a serial engine on end B; all gone afterwards."""
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dxfaults-")))
        bridge_args = ("--link", link, "--echo-timeout", str(ECHO_TIMEOUT),
                       "--max-attempts", str(MANY_ATTEMPTS), *bridge_args)
        r = start_rig(directory, vpair_args, bridge_args)
        stack.callback(r.close)
        engine: SerialPeer = (
            NulModemPeer(r.peer_path, timeout=ECHO_TIMEOUT, max_attempts=MANY_ATTEMPTS,
                         seed=seed, max_queue=1_000_000)
            if link == "nulmodem" else NulFramePeer(r.peer_path)
        )
        stack.callback(engine.close)
        memory = MemorySampler(r.bridge.pid)
        stack.callback(memory.stop)
        yield Run(directory, r.vpair, r.bridge, engine, memory, time.monotonic())


def finish(r: Run, scenario: str, s2t: tuple[list[bytes], list[bytes]],
           t2s: list[bytes], note: str = "", **extra: Any) -> list[Row]:
    """Stop the bridge and count both directions.

    ``s2t``: (what the serial engine sent, what all TCP clients received); ``t2s``: what the
    TCP clients sent (the serial engine's receipts are in ``r.engine``).
    """
    r.memory.stop()
    seconds = time.monotonic() - r.started
    counts = r.bridge.shutdown()
    log = r.bridge.log()
    mem = (r.memory.peak_mib, r.memory.final_mib, r.memory.growth_mib, seconds)
    rows = []
    sent, got = s2t
    t = tally(sent, got)
    missed = missed_repeats(r.bridge.trace_path, sent)
    rows.append(Row(scenario, "serial->tcp", len(sent), t.once, t.twice, missed, t.lost,
                    reported_lost(log, "serial->tcp"), t.garbled, t.replaced,
                    counts.get("duplicates", 0), *mem, note, dict(extra, counts=counts)))
    t = tally(t2s, r.engine.accepted)
    rows.append(Row(scenario, "tcp->serial", len(t2s), t.once, t.twice, 0, t.lost,
                    reported_lost(log, "tcp->serial"), t.garbled, t.replaced,
                    r.engine.repeats, *mem, note, dict(extra, counts=counts)))
    return rows


def exchange(r: Run, client: DxpClient, s2t: list[bytes], t2s: list[bytes], *,
             stall: float, limit: float, during: Callable[[], None] | None = None) -> bool:
    """Both streams at once, each followed by its sentinel; wait for both sentinels."""
    r.engine.send_many([*s2t, sentinel("s")])
    client.send_many([*t2s, sentinel("t")])
    if during is not None:
        during()
    return wait_for(
        lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
        lambda: (len(client.received), len(r.engine.raw)),
        stall=stall, limit=limit,
    )


# ----------------------------------------------------------------------- scenarios


def line_faults(n: int, *, drop: float = 0.0, corrupt: float = 0.0, seed: int = 7,
                attempts: int | None = None, longest: int = 24, stall: float = 60.0,
                limit: float = 1800.0) -> list[Row]:
    """Both streams at once over a line that drops and/or corrupts bytes (seeded)."""
    name = "clean line" if not (drop or corrupt) else " + ".join(
        f"{what} {rate * 100:g} %" for what, rate in (("drop", drop), ("corrupt", corrupt)) if rate
    )
    vargs: tuple[str, ...] = ()
    if drop or corrupt:
        vargs = ("--drop", str(drop), "--corrupt", str(corrupt), "--seed", str(seed))
    bargs: tuple[str, ...] = ()
    if attempts is not None:
        name += f", bridge --max-attempts {attempts}"
        bargs = ("--max-attempts", str(attempts))
    s2t = make_stream("s", n, seed, longest=longest)
    t2s = make_stream("t", n, seed, longest=longest)
    with rig(vargs, bargs, seed=seed) as r:
        client = r.client()
        try:
            complete = exchange(r, client, s2t, t2s, stall=stall, limit=limit)
            stats = r.vpair.stats()
        finally:
            client.close()
        hit = {k: sum(stats[d][k] for d in stats) for k in ("dropped", "corrupted")}
        note = ", ".join(f"{v} bytes {k}" for k, v in hit.items() if v) or "no faults"
        return finish(r, name, (s2t, client.received), t2s, note=note, complete=complete, **hit)


def unplug_replug(n: int, *, cycles: int = 4, down: float = 0.6, every: float = 1.5,
                  seed: int = 8, stall: float = 30.0, limit: float = 900.0) -> list[Row]:
    """The bridge's serial end pulled out and put back ``cycles`` times while both streams run.

    ``down`` seconds out, then ``every - down`` seconds in.
    """
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    done = 0
    with rig(seed=seed) as r:
        client = r.client()

        def pulls() -> None:
            nonlocal done
            for _ in range(cycles):
                time.sleep(every - down)  # scenario timing: the cable is in
                r.vpair.unplug("a")
                time.sleep(down)  # scenario timing: the cable is out
                r.vpair.replug("a")
                done += 1

        try:
            complete = exchange(r, client, s2t, t2s, stall=stall, limit=limit, during=pulls)
        finally:
            client.close()
        back = r.bridge.log().count("is back;")
        return finish(r, f"serial end unplugged {cycles}x for {down:g} s",
                      (s2t, client.received), t2s,
                      note=f"{back} reopens by the bridge", reopens=back, cycles=done,
                      complete=complete)


def tcp_hangups(n: int, *, clients: int = 4, abrupt: bool = False, seed: int = 9,
                stall: float = 30.0, limit: float = 900.0) -> list[Row]:
    """TCP clients that hang up in the middle of a message, one after another.

    The serial engine streams all along.  Each client sends its share, then the first
    part of a message, then hangs up: ``abrupt=False`` shuts its sending side and reads
    until the bridge closes (everything the bridge wrote is read); ``abrupt=True`` resets
    the connection at once, so whatever the bridge had already written into the socket
    is gone with it.  TCP gives no receipt, so no bridge can know; those are counted as
    lost and not reported.  A last client then takes the rest.
    """
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    share = max(1, n // (clients + 1))
    received: list[bytes] = []
    with rig(seed=seed) as r:
        # The serial end's sentinel goes out once the last client is there: sent now, it could
        # land in the socket of a client that resets unread, and the run could never end.
        r.engine.send_many(s2t)
        for k in range(clients):
            client = r.client()
            try:
                mine = t2s[k * share:(k + 1) * share]
                for raw in mine:
                    client.send(raw)
                # its own messages reach the serial engine, and some of the serial stream
                # reaches it, before it hangs up
                wait_for(functools.partial(_all_in, mine, r.engine.accepted),
                         functools.partial(len, r.engine.raw), stall=stall, limit=limit)
                want = min(len(s2t), (k + 1) * share)
                wait_for(functools.partial(_at_least, want, received, client.received),
                         functools.partial(len, client.received), stall=stall, limit=limit)
                client.send_bytes(f"Ct-cut{k} half a mess".encode())
                if abrupt:
                    client.abort()
                else:
                    client.half_close()
                    client.eof.wait(stall)
                # one client at a time: the next one connects once the bridge let go
                wait_for(functools.partial(_gone_away, r.bridge, k + 1),
                         lambda: 0, stall=stall, limit=limit)
            finally:
                client.close()
                received.extend(client.received)
        last = r.client()
        try:
            wait_for(functools.partial(_joined, r.bridge, clients + 1), lambda: 0,
                     stall=stall, limit=limit)
            r.engine.send_many([sentinel("s")])
            last.send_many([*t2s[clients * share:], sentinel("t")])
            complete = wait_for(lambda: sentinel("s") in received + last.received
                                and sentinel("t") in r.engine.raw,
                     lambda: (len(last.received), len(r.engine.raw)), stall=stall, limit=limit)
        finally:
            last.close()
            received.extend(last.received)
        cut = r.bridge.log().count("tcp->serial: peer hung up mid-message")
        how = "reset" if abrupt else "half-close"
        return finish(r, f"{clients} TCP clients hang up mid-message ({how})",
                      (s2t, received), t2s,
                      note=f"{cut} of {clients} cut-off messages reported", cut_reported=cut,
                      clients=clients, complete=complete)


def _all_in(wanted: list[bytes], got: list[bytes]) -> bool:
    return set(wanted) <= set(got)


def _at_least(count: int, *lists: list[bytes]) -> bool:
    return sum(len(items) for items in lists) >= count


def _joined(bridge: Bridge, clients: int) -> bool:
    """Whether the bridge has logged ``clients`` TCP clients connecting."""
    return bridge.log().count("connected (session") >= clients


def _gone_away(bridge: Bridge, clients: int) -> bool:
    """Whether the bridge has logged ``clients`` TCP clients going away."""
    return bridge.log().count("went away") >= clients


def idle_client(n: int, *, idle: float = 10.0, seed: int = 10, stall: float = 30.0,
                limit: float = 900.0) -> list[Row]:
    """A TCP client that sends nothing for ``idle`` seconds between two halves of its stream.

    Meanwhile the serial engine sends a CHAT now and then (the client reads them), so the
    line is idle most of the time too.  The bridge must neither time the client out nor
    lose or repeat anything.
    """
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    half = n // 2
    trickle = max(1, min(n - half, int(idle // 2)))
    with rig(seed=seed) as r:
        client = r.client()
        try:
            client.send_many(t2s[:half])
            r.engine.send_many(s2t[:half])
            wait_for(lambda: len(client.received) >= half and len(r.engine.accepted) >= half,
                     lambda: (len(client.received), len(r.engine.raw)), stall=stall, limit=limit)
            quiet_from = time.monotonic()
            for raw in s2t[half:half + trickle]:
                time.sleep(idle / (trickle + 1))  # scenario timing: the client stays silent
                r.engine.send(raw)
            time.sleep(max(0.0, quiet_from + idle - time.monotonic()))
            kept = not client.eof.is_set() and "went away" not in r.bridge.log()
            complete = exchange(r, client, s2t[half + trickle:], t2s[half:], stall=stall,
                                limit=limit)
        finally:
            client.close()
        return finish(r, f"TCP client silent for {idle:g} s", (s2t, client.received), t2s,
                      note="connection kept" if kept else "connection LOST", kept=kept,
                      complete=complete)


def slow_reader(n: int, *, length: int = 100, link: str = "nulmodem", rcvbuf: int = 4096,
                mss: int | None = ETHERNET_MSS, seed: int = 11, settle: float = 3.0,
                stall: float = 30.0, limit: float = 1800.0) -> list[Row]:
    """A TCP client that stops reading while the serial engine sends ``n`` long CHATs.

    The bridge must not buffer without bound: once the socket is full it stops taking
    messages off the serial line, and the serial engine waits (NULMODEM: for its echoes;
    NUL frames: in a full line).  ``taken`` is how many the engine got rid of while the
    client did not read (``settle`` seconds without progress ends that phase): socket
    buffers plus the bridge's queue, if it works.  The client announces an Ethernet-sized
    segment (``mss``) so that the bridge's send buffer is sized as on a LAN; with
    ``mss=None`` (loopback) the kernel lets it hold ~4 MB first, which a NULMODEM line at
    pty speed takes minutes to fill.  Then the client reads again and everything must
    arrive once.
    """
    s2t = make_stream("s", n, seed, length=length)
    t2s = make_stream("t", max(1, n // 100), seed)
    with rig(seed=seed, link=link) as r:
        client = r.client(rcvbuf=rcvbuf, mss=mss)
        try:
            client.pause()
            r.engine.send_many([*s2t, sentinel("s")])
            wait_for(lambda: len(r.engine.delivered) > n, lambda: len(r.engine.delivered),
                     stall=settle, limit=limit)
            taken = min(n, len(r.engine.delivered))
            r.memory.sample()
            stalled_growth = r.memory.growth_mib
            client.resume()
            complete = exchange(r, client, [], t2s, stall=stall, limit=limit)
        finally:
            client.close()
        where = "loopback MSS" if mss is None else f"MSS {mss}"
        return finish(r, f"TCP client stops reading, {link} line, {where} ({n} x {length} B)",
                      (s2t, client.received), t2s,
                      note=f"engine got {taken} of {n} out while the client did not read; "
                           f"RSS +{stalled_growth:.1f} MiB",
                      taken=taken, stalled_growth_mib=stalled_growth, complete=complete)


def serial_hangs(n: int, *, length: int = 100, link: str = "nul", sndbuf: int = 4096,
                 mss: int | None = ETHERNET_MSS, seed: int = 12, settle: float = 3.0,
                 stall: float = 30.0, limit: float = 1800.0) -> list[Row]:
    """The serial engine stops reading (hangs) while the TCP client sends ``n`` long CHATs.

    The other direction of backpressure: the bridge's serial queue fills, it stops reading
    TCP, and the client's sends block.  ``taken`` is how many the client got rid of while
    the engine hung (bounded by socket buffers plus the bridge's queue), then the engine
    wakes up and everything must arrive once.
    """
    t2s = make_stream("t", n, seed, length=length)
    s2t = make_stream("s", max(1, n // 100), seed)
    with rig(seed=seed, link=link) as r:
        client = r.client(sndbuf=sndbuf, mss=mss)
        try:
            r.engine.pause()
            client.send_many([*t2s, sentinel("t")])
            wait_for(lambda: client.sent > n, lambda: client.sent, stall=settle, limit=limit)
            taken = min(n, client.sent)
            r.memory.sample()
            stalled_growth = r.memory.growth_mib
            r.engine.resume()
            r.engine.send_many([*s2t, sentinel("s")])
            complete = wait_for(
                lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
                lambda: (len(client.received), len(r.engine.raw)), stall=stall, limit=limit,
            )
        finally:
            client.close()
        return finish(r, f"serial engine hangs, {link} line ({n} x {length} B from TCP)",
                      (s2t, client.received), t2s,
                      note=f"client got {taken} of {n} out while the engine hung; "
                           f"RSS +{stalled_growth:.1f} MiB",
                      taken=taken, stalled_growth_mib=stalled_growth, complete=complete)


def chat_repeat(gap: float = 3.0, *, crossed: bool = False, seed: int = 13) -> list[Row]:
    """A NULMODEM engine repeats a CHAT whose end-byte echo it missed; deterministic.

    The engine's CHAT reaches the bridge; the engine takes the echo of its end byte for
    garbled and starts over.  With ``crossed``, a message from the TCP client reaches the
    engine first (the engine echoes it: the line is free for the bridge, whose message
    arrived complete).  Then noise spoils the engine's attempts for ``gap`` seconds (each a
    start byte and a few characters, then silence), then the whole CHAT gets through again,
    then a sentinel.  The bridge must drop the repeat.  Written byte by byte on the pty,
    so it plays out the same way every time.
    """
    msg, follow, other = b"Cs00000 repeat me", sentinel("s"), b"Ct00000 crossing"
    start, end = b"\x02", b"\x03"
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dxfaults-")))
        r = start_rig(directory, (), ("--echo-timeout", str(ECHO_TIMEOUT),
                                      "--max-attempts", str(MANY_ATTEMPTS)))
        stack.callback(r.close)
        memory = MemorySampler(r.bridge.pid)
        stack.callback(memory.stop)
        fd = os.open(r.peer_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        stack.callback(os.close, fd)
        client = DxpClient("127.0.0.1", r.port, timeout=20.0)
        stack.callback(client.close)
        engine = SerialPeer()  # what the engine received
        began = time.monotonic()
        os.write(fd, start + msg + end)
        wait_for(lambda: msg in client.received, lambda: 0, stall=10, limit=10)
        read_until_quiet(fd, 0.2)  # the bridge's echoes
        if crossed:
            client.send(other)
            engine.record(_echo_one_message(fd, start[0], end[0], timeout=10.0))
        until = time.monotonic() + gap
        while time.monotonic() < until:
            os.write(fd, start + msg[:5])  # an attempt that noise spoils: silence follows
            time.sleep(min(2 * ECHO_TIMEOUT, max(0.0, until - time.monotonic())))
        os.write(fd, start + msg + end)
        os.write(fd, start + follow + end)
        wait_for(lambda: follow in client.received, lambda: 0, stall=10, limit=10)
        what = " and a TCP message crossed" if crossed else ""
        return finish(Run(directory, r.vpair, r.bridge, engine, memory, began),
                      f"CHAT repeated by the engine after {gap:g} s of failed attempts{what}",
                      ([msg], list(client.received)), [other] if crossed else [],
                      note="deterministic reproducer")[: 2 if crossed else 1]


def _echo_one_message(fd: int, start: int, end: int, timeout: float) -> bytes:
    """Receive one NULMODEM message on ``fd``, echoing each byte as the handshake wants."""
    deadline = time.monotonic() + timeout
    body = bytearray()
    begun = False
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], 0.05)[0]:
            continue
        for b in os.read(fd, 1):
            os.write(fd, bytes([b]))
            if b == start:
                begun, body = True, bytearray()
            elif b == end and begun:
                return bytes(body)
            elif begun:
                body.append(b)
    raise RuntimeError(f"no message within {timeout:g} s (got {bytes(body)!r})")


# ----------------------------------------------------------------------- report


def table(rows: list[Row]) -> str:
    lines = [
        "| scenario | direction | sent | delivered once | twice+ (missed repeats) | lost "
        "| lost, reported "
        "| garbled (replacing a lost one) | repeats dropped | bridge RSS peak / final MiB "
        "| s | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.scenario} | {row.direction} | {row.sent} | {row.once} "
            f"| {row.twice} ({row.missed}) | {row.lost} | {row.reported} "
            f"| {row.garbled} ({row.replaced}) | {row.repeats} "
            f"| {row.peak_mib:.1f} / {row.final_mib:.1f} | {row.seconds:.0f} | {row.note} |"
        )
    return "\n".join(lines)


Plan = list[tuple[str, Callable[[], list[Row]]]]


def long_plan(n: int, rates: list[float]) -> Plan:
    """Every scenario at full size; ``n`` messages per direction where a line is fast."""
    plan: Plan = [("clean line", lambda: line_faults(n))]
    for rate in rates:
        # 5 % of the bytes: a 20-byte message needs ~40 byte transfers, so most attempts
        # fail; fewer and shorter messages keep the run in minutes.
        m, longest = (n, 24) if rate < 0.05 else (max(10, n // 10), 6)
        for kind in ("drop", "corrupt"):
            plan.append((f"{kind} {rate:g}",
                         functools.partial(line_faults, m, longest=longest,
                                           drop=rate if kind == "drop" else 0.0,
                                           corrupt=rate if kind == "corrupt" else 0.0)))
    top = max(rates) if rates else 0.05
    plan += [
        (f"drop {top:g} + corrupt, bridge gives up after 5",
         lambda: line_faults(max(10, n // 10), drop=top, corrupt=top, longest=6, attempts=5)),
        ("unplug", lambda: unplug_replug(n, cycles=6, down=1.0, every=2.5)),
        ("hang-up half-close", lambda: tcp_hangups(n, clients=5)),
        ("hang-up reset", lambda: tcp_hangups(n, clients=5, abrupt=True)),
        ("idle", lambda: idle_client(min(n, 100), idle=120.0)),
        ("slow reader nulmodem", lambda: slow_reader(2000)),
        ("slow reader nul", lambda: slow_reader(20000, length=120, link="nul")),
        ("slow reader nul loopback",
         lambda: slow_reader(2 * flood_size(120), length=120, link="nul", mss=None)),
        ("serial hangs nul", lambda: serial_hangs(20000, length=120, link="nul")),
        ("serial hangs nulmodem", lambda: serial_hangs(2000, link="nulmodem")),
        ("repeat after slow retries", lambda: chat_repeat(3.0)),
        ("repeat after a crossing message", lambda: chat_repeat(0.6, crossed=True)),
    ]
    return plan


def run_plan(plan: Plan, only: list[str] | None = None, echo: bool = True) -> list[Row]:
    rows: list[Row] = []
    for name, func in plan:
        if only and not any(o in name for o in only):
            continue
        if echo:
            print(f"faults: {name} ...", file=sys.stderr, flush=True)
        got = func()
        rows += got
        if echo:
            for row in got:
                print(f"faults:   {row.direction}: sent {row.sent} once {row.once} "
                      f"twice {row.twice} lost {row.lost} ({row.seconds:.0f} s) {row.note}",
                      file=sys.stderr, flush=True)
    return rows


NOTES = (
    "Rig: `dxserial vpair` (seeded `--drop`/`--corrupt` per byte and direction; `unplug a` / "
    "`replug a` on its stdin) and `dxserial bridge --echo-timeout {t} --max-attempts {a}` as "
    "processes; in the bench process a NULMODEM engine (echo timeout {t} s, never gives up) "
    "on end B and DXP clients over TCP on 127.0.0.1. Both sides stream distinct CHATs at "
    "once, so the half-duplex line also sees collisions. *delivered once* on the serial "
    "side counts after the engine's own drop of a message identical to the one before it; "
    "*repeats dropped* are those NULMODEM repeats (tcp->serial) or the duplicates the bridge "
    "dropped (serial->tcp). *garbled*: arrived but never sent (in brackets: in place of a "
    "lost message, a character garbled on the way and its echo garbled back the same way: "
    "NULMODEM has no checksum). Memory: the bridge's VmHWM and its VmRSS at the end. A reset "
    "TCP connection takes with it what the bridge had already written into the socket (TCP "
    "gives no receipt), so those losses are not reported by any bridge."
)


def section(args: argparse.Namespace | None = None) -> str:
    """The long form as Markdown, for bench/run.py."""
    n = getattr(args, "fault_messages", None) or 300
    rates = getattr(args, "fault_rates", None) or [0.001, 0.01, 0.05]
    rows = run_plan(long_plan(n, rates), getattr(args, "fault_only", None))
    return table(rows) + "\n\n" + NOTES.format(t=ECHO_TIMEOUT, a=MANY_ATTEMPTS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=300, help="messages per direction")
    ap.add_argument("--rates", type=float, nargs="+", default=[0.001, 0.01, 0.05],
                    help="drop and corrupt probabilities per byte")
    ap.add_argument("--only", action="append", help="scenarios whose name contains this")
    ap.add_argument("--json", help="also write the rows as JSON lines to this file")
    args = ap.parse_args()
    rows = run_plan(long_plan(args.messages, args.rates), args.only)
    print(table(rows) + "\n\n" + NOTES.format(t=ECHO_TIMEOUT, a=MANY_ATTEMPTS))
    if args.json:
        with open(args.json, "w") as out:
            for row in rows:
                out.write(json.dumps(row.__dict__) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
