"""DOSBox nullmodem link: the codec alone, then real sockets with the test playing DOSBox."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dxserial.errors import ConfigError, PortError
from dxserial.testing.process import Cli, wait_until
from dxserial.transports.base import Port
from dxserial.transports.dosbox import (
    DOSBOX_DEFAULT_PORT,
    Decoder,
    DosboxPort,
    LineState,
    decode,
    encode,
    open_dosbox,
    parse_dosbox_url,
)
from dxserial.transports.openers import open_serial
from dxserial.transports.serial import SerialSettings
from dxserial.transports.tcp import Endpoint

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

FF = b"\xff"
BOTH_ON = b"\xff\x03"  # RTS and DTR asserted: what a link sends first


# ---------------------------------------------------------------- codec


def test_encode_doubles_only_0xff() -> None:
    assert encode(b"") == b""
    assert encode(b"\x02M\x03") == b"\x02M\x03"
    assert encode(b"\xff") == b"\xff\xff"
    assert encode(b"a\xff\xffb") == b"a\xff\xff\xff\xffb"


def test_line_state_bits_follow_dosbox() -> None:
    # nullmodem.cpp setRTSDTR: bit 0 RTS, bit 1 DTR, bit 2 break
    assert LineState(rts=True, dtr=True).to_wire() == b"\xff\x03"
    assert LineState(rts=True, dtr=False).to_wire() == b"\xff\x01"
    assert LineState(rts=False, dtr=True).to_wire() == b"\xff\x02"
    assert LineState(rts=False, dtr=False, brk=True).to_wire() == b"\xff\x04"
    assert LineState.from_byte(0x07) == LineState(rts=True, dtr=True, brk=True)
    assert LineState.from_byte(0x00) == LineState(rts=False, dtr=False)
    assert LineState.from_byte(0x0B).raw == 0x0B  # unused bits kept, ignored
    assert str(LineState(rts=True, dtr=False)) == "RTS on, DTR off"
    with pytest.raises(ValueError):
        LineState.from_byte(0xFF)  # that is a data byte


def test_decoder_splits_data_from_line_states_in_order() -> None:
    events = Decoder().feed(b"ab\xff\x03cd\xff\xffe\xff\x00")
    assert events == [b"ab", LineState(True, True), b"cd\xffe", LineState(False, False)]


def test_decoder_escape_split_across_chunks() -> None:
    decoder = Decoder()
    assert decoder.feed(b"M0\xff") == [b"M0"]
    assert decoder.pending
    assert decoder.feed(b"\xff") == [b"\xff"]  # second half: a data 0xFF
    assert not decoder.pending
    assert decoder.feed(b"\xff") == []
    assert decoder.feed(b"\x02") == [LineState(rts=False, dtr=True)]
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\xff") == [] and decoder.pending
    assert decoder.feed(b"") == [] and decoder.pending  # an empty read changes nothing
    assert decoder.feed(b"\x01xy") == [LineState(rts=True, dtr=False), b"xy"]


def test_decoder_byte_at_a_time() -> None:
    wire = b"\xff\x03R01\xff\xff\xff\xff\xff\x07\x00\xff\x03\x03"
    data, states = decode([bytes([b]) for b in wire])
    assert data == b"R01\xff\xff\x00\x03"
    assert states == [
        LineState(True, True),
        LineState(True, True, brk=True),
        LineState(True, True),
    ]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


@given(st.binary(max_size=600), st.lists(st.integers(min_value=0), max_size=40))
def test_decode_inverts_encode_for_any_chunking(data: bytes, cuts: list[int]) -> None:
    decoded, states = decode(_split(encode(data), cuts))
    assert decoded == data
    assert states == []


@given(
    st.lists(st.one_of(st.binary(min_size=1, max_size=40), st.integers(0, 254)), max_size=30),
    st.lists(st.integers(min_value=0), max_size=30),
)
def test_line_states_survive_any_chunking(items: list[bytes | int], cuts: list[int]) -> None:
    wire = b"".join(encode(i) if isinstance(i, bytes) else bytes((0xFF, i)) for i in items)
    decoder = Decoder()
    events = [e for chunk in _split(wire, cuts) for e in decoder.feed(chunk)]
    assert not decoder.pending
    # merge adjacent data runs; the chunking may cut one run into several events
    merged: list[bytes | LineState] = []
    for event in events:
        if isinstance(event, bytes) and merged and isinstance(merged[-1], bytes):
            merged[-1] += event
        else:
            merged.append(event)
    expected: list[bytes | LineState] = []
    for item in items:
        if isinstance(item, bytes) and expected and isinstance(expected[-1], bytes):
            expected[-1] += item
        else:
            expected.append(item if isinstance(item, bytes) else LineState.from_byte(item))
    assert merged == expected
    assert all(e for e in events if isinstance(e, bytes))  # never an empty data event


# ---------------------------------------------------------------- URLs


def test_url_forms() -> None:
    t = parse_dosbox_url("dosbox://127.0.0.1:5555")
    assert (t.listen, t.endpoint, t.transparent) == (False, Endpoint("127.0.0.1", 5555), False)
    t = parse_dosbox_url("DOSBOX-LISTEN://[::1]:5555/?transparent=1")
    assert (t.listen, t.endpoint, t.transparent) == (True, Endpoint("::1", 5555), True)
    assert parse_dosbox_url("dosbox://localhost").endpoint.port == DOSBOX_DEFAULT_PORT == 23
    assert parse_dosbox_url("dosbox://:5555").endpoint.host == "127.0.0.1"
    assert parse_dosbox_url("dosbox://h:1?transparent=no").transparent is False
    assert parse_dosbox_url("dosbox://h:1?transparent").transparent is True


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("dosbox://", "HOST:PORT missing"),
        ("dosbox://host:99999", "bad port"),
        ("dosbox://host:0", "port 0"),
        ("dosbox://host:1?telnet=1", "unknown option 'telnet'"),
        ("dosbox://host:1?transparent=maybe", "expected 0 or 1"),
    ],
)
def test_bad_urls_say_what_is_wrong(url: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        parse_dosbox_url(url)


# ---------------------------------------------------------------- a fake DOSBox


@dataclass
class FakeDosbox:
    """The test's side of the TCP connection, speaking DOSBox's wire format by hand."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    got: bytearray = field(default_factory=bytearray)

    async def send(self, *chunks: bytes) -> None:
        """Each chunk in its own segment (NODELAY + drain), to exercise split escapes."""
        for chunk in chunks:
            self.writer.write(chunk)
            await self.writer.drain()
            # A chance for the link to read each chunk alone; nothing relies on it (the
            # codec tests cover every split), it only makes split reads likely here.
            await asyncio.sleep(0.005)

    async def expect(self, n: int, timeout: float = 5.0) -> bytes:
        """The next ``n`` bytes the link sent, raw as on the wire."""
        async with asyncio.timeout(timeout):
            while len(self.got) < n:
                chunk = await self.reader.read(4096)
                assert chunk, f"link closed after {bytes(self.got)!r}"
                self.got += chunk
        out = bytes(self.got[:n])
        del self.got[:n]
        return out

    def hang_up(self) -> None:
        self.writer.close()


@pytest.fixture
async def dosbox_server() -> AsyncIterator[tuple[int, asyncio.Queue[FakeDosbox]]]:
    """DOSBox as server (``serial1=nullmodem port:N``): yields the port and its connections."""
    connections: asyncio.Queue[FakeDosbox] = asyncio.Queue()
    made: list[FakeDosbox] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.get_extra_info("socket").setsockopt(
            socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
        )
        made.append(FakeDosbox(reader, writer))
        await connections.put(made[-1])

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield port, connections
    for fake in made:
        fake.writer.close()
        with contextlib.suppress(OSError):
            await fake.writer.wait_closed()
    server.close()
    await server.wait_closed()


async def read_n(link: Port, n: int, timeout: float = 5.0) -> bytes:
    got = b""
    async with asyncio.timeout(timeout):
        while len(got) < n:
            chunk = await link.read()
            assert chunk, f"end of link after {got!r}"
            got += chunk
    return got


async def test_connect_sends_line_state_and_unescapes_split_chunks(
    dosbox_server: tuple[int, asyncio.Queue[FakeDosbox]],
) -> None:
    port, connections = dosbox_server
    link = await open_serial(f"dosbox://127.0.0.1:{port}")
    try:
        assert isinstance(link, DosboxPort) and isinstance(link, Port)
        dosbox = await asyncio.wait_for(connections.get(), 5)
        assert await dosbox.expect(2) == BOTH_ON  # first thing on the wire
        assert link.peer_lines is None and link.dsr is None
        # DOSBox's own state, then data with escapes and doubled 0xFF cut at every place
        await dosbox.send(b"\xff", b"\x01", b"\x02M0", b"0\xff", b"\xff1", b"\xff", b"\xff\xff")
        await dosbox.send(b"\x032", b"\xff\x02\xff", b"\xff\x03")
        # FF 01 | 02 M 0 | 0 | FF FF | 1 | FF FF | FF 03 | 2 | FF 02 | FF FF | 03
        assert await read_n(link, 10) == b"\x02M00\xff1\xff2\xff\x03"
        assert link.peer_lines == LineState(rts=False, dtr=True)  # the last escape: FF 02
        assert link.cts is False
        # our writes arrive escaped, one write per send
        await link.write(b"\x02R\xff\x03")
        assert await dosbox.expect(5) == b"\x02R\xff\xff\x03"
        await link.write(FF * 3)
        assert await dosbox.expect(6) == FF * 6
    finally:
        await link.close()


async def test_line_state_only_chunks_do_not_end_the_read(
    dosbox_server: tuple[int, asyncio.Queue[FakeDosbox]],
) -> None:
    port, connections = dosbox_server
    link = await open_dosbox(f"dosbox://127.0.0.1:{port}")
    try:
        dosbox = await asyncio.wait_for(connections.get(), 5)
        reading = asyncio.create_task(link.read())
        await dosbox.send(b"\xff\x03", b"\xff\x07", b"\xff\x03")  # a break, no data
        await dosbox.send(b"A")
        assert await asyncio.wait_for(reading, 5) == b"A"
        assert link.breaks == 1
        assert link.peer_lines == LineState(rts=True, dtr=True)
    finally:
        await link.close()


async def test_our_line_changes_and_break_reach_dosbox(
    dosbox_server: tuple[int, asyncio.Queue[FakeDosbox]],
) -> None:
    port, connections = dosbox_server
    link = await open_dosbox(f"dosbox://127.0.0.1:{port}", SerialSettings(dtr=False))
    try:
        dosbox = await asyncio.wait_for(connections.get(), 5)
        assert await dosbox.expect(2) == b"\xff\x01"  # RTS only: DTR was asked off
        link.set_dtr(True)
        assert await dosbox.expect(2) == b"\xff\x03"
        link.set_rts(False)
        assert await dosbox.expect(2) == b"\xff\x02"
        await link.send_break(0.01)
        assert await dosbox.expect(4) == b"\xff\x06\xff\x02"
        assert link.local_lines == LineState(rts=False, dtr=True)
    finally:
        await link.close()


async def test_dosbox_hanging_up_is_a_port_error(
    dosbox_server: tuple[int, asyncio.Queue[FakeDosbox]],
) -> None:
    port, connections = dosbox_server
    link = await open_serial(f"dosbox://127.0.0.1:{port}")
    try:
        dosbox = await asyncio.wait_for(connections.get(), 5)
        await dosbox.send(b"x\xff")  # hang up in the middle of an escape
        assert await read_n(link, 1) == b"x"
        dosbox.hang_up()
        with pytest.raises(PortError, match=r"DOSBox link .* lost: DOSBox at .* hung up"):
            await asyncio.wait_for(link.read(), 5)
    finally:
        await link.close()
    assert await link.read() == b""  # closed: a clean end, as for a serial link


async def test_transparent_mode_passes_0xff_raw(
    dosbox_server: tuple[int, asyncio.Queue[FakeDosbox]],
) -> None:
    port, connections = dosbox_server
    for url in (f"dosbox://127.0.0.1:{port}?transparent=1", f"socket://127.0.0.1:{port}"):
        link = await open_serial(url)
        try:
            dosbox = await asyncio.wait_for(connections.get(), 5)
            await dosbox.send(b"a\xff", b"\x03b\xff\xff")
            assert await read_n(link, 6) == b"a\xff\x03b\xff\xff"  # nothing absorbed
            await link.write(b"\xff\x02")
            assert await dosbox.expect(2) == b"\xff\x02"  # nothing sent first, no doubling
            link.set_dtr(False)  # no line states in this mode: skipped
            dosbox.hang_up()
            with pytest.raises(PortError, match="lost"):
                await asyncio.wait_for(read_n(link, 1), 5)
            assert dosbox.got == b""
        finally:
            await link.close()


async def test_connection_refused_names_both_dosbox_modes() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(PortError, match=r"connection refused.*nullmodem port:\d+.*dosbox-listen"):
        await open_serial(f"dosbox://127.0.0.1:{port}")


# ---------------------------------------------------------------- DOSBox as client


async def test_listen_waits_for_dosbox_then_stops_listening() -> None:
    bound: asyncio.Future[Endpoint] = asyncio.get_running_loop().create_future()
    opening = asyncio.create_task(
        open_dosbox("dosbox-listen://127.0.0.1:0", on_listening=bound.set_result)
    )
    where = await asyncio.wait_for(bound, 5)
    assert where.host == "127.0.0.1" and where.port > 0
    # DOSBox (serial1=nullmodem server:127.0.0.1 port:N) connects and sends its state
    reader, writer = await asyncio.open_connection(where.host, where.port)
    dosbox = FakeDosbox(reader, writer)
    link = await asyncio.wait_for(opening, 5)
    try:
        assert await dosbox.expect(2) == BOTH_ON
        await dosbox.send(b"\xff\x03\x02A", b"\xff", b"\xff\x03")
        assert await read_n(link, 4) == b"\x02A\xff\x03"
        assert link.peer_lines == LineState(rts=True, dtr=True)
        with pytest.raises(ConnectionRefusedError):  # one cable, one peer
            await asyncio.open_connection(where.host, where.port)
        await link.write(b"\x02")
        assert await dosbox.expect(1) == b"\x02"
    finally:
        await link.close()
        writer.close()


async def test_listen_can_be_cancelled_and_reports_a_busy_address() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        with pytest.raises(PortError, match="address already in use"):
            await open_serial(f"dosbox-listen://127.0.0.1:{port}")
    finally:
        holder.close()
    bound: asyncio.Future[Endpoint] = asyncio.get_running_loop().create_future()
    opening = asyncio.create_task(
        open_dosbox("dosbox-listen://127.0.0.1:0", on_listening=bound.set_result)
    )
    where = await asyncio.wait_for(bound, 5)
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening
    with pytest.raises(ConnectionRefusedError):  # no longer listening
        await asyncio.open_connection(where.host, where.port)


# ---------------------------------------------------------------- the bridge on dosbox://


class ThreadedDosbox:
    """DOSBox as server in a thread (the bridge runs in another process), echoing every
    data byte back as a DOS NULMODEM receiver does, escaped as DOSBox would."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.wire = bytearray()  # everything the bridge sent, raw
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.sendall(b"\xff\x03")  # DOSBox sends its RTS/DTR on connect
            decoder = Decoder()
            while chunk := conn.recv(4096):
                with self.lock:
                    self.wire += chunk
                for event in decoder.feed(chunk):
                    if isinstance(event, bytes):
                        conn.sendall(encode(event))

    def seen(self, check: Callable[[bytes], bool]) -> bool:
        with self.lock:
            return check(bytes(self.wire))

    def close(self) -> None:
        self.listener.close()


def test_bridge_runs_on_a_dosbox_url(vectors: list[dict[str, str]]) -> None:
    message = next(v["message"] for v in vectors if v["type"] == "R").encode()
    dosbox = ThreadedDosbox()
    try:
        with Cli("bridge", f"dosbox://127.0.0.1:{dosbox.port}", "--listen", "127.0.0.1:0") as cli:
            ready = cli.out.expect("bridge ready:", timeout=15)
            wait_until(lambda: dosbox.seen(lambda w: w.startswith(b"\xff\x03")), what="FF 03")
            host, port = ready.rsplit(" ", 1)[1].rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=5) as engine:
                engine.sendall(message + b"\x00")
                wait_until(
                    lambda: dosbox.seen(lambda w: b"\x02" + message + b"\x03" in w),
                    timeout=10,
                    what="the message framed by S/E at DOSBox",
                )
            assert cli.stop() == 0
    finally:
        dosbox.close()
