"""TCP links on 127.0.0.1: endpoints, socket options, one message per send, errors."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dxserial.errors import ConfigError, PortError
from dxserial.transports.base import Port, PortProtocol
from dxserial.transports.tcp import (
    DXP_PORT,
    Endpoint,
    TcpPort,
    parse_endpoint,
    tcp_connect,
    tcp_listen,
)

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

MESSAGES = [b"R01Scan" + b" " * 28 + b"Z010000A\x00", b"A" + b"Moby Dam".ljust(32) + b"0\x00"]


# ---------------------------------------------------------------- endpoints


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:27531", ("127.0.0.1", 27531)),
        ("localhost:5000", ("localhost", 5000)),
        ("0.0.0.0", ("0.0.0.0", DXP_PORT)),
        ("5000", ("127.0.0.1", 5000)),
        (":5000", ("127.0.0.1", 5000)),
        ("[::1]:27531", ("::1", 27531)),
        ("[::1]", ("::1", DXP_PORT)),
        ("[::]:0", ("::", 0)),
        (" engine.local:27532 ", ("engine.local", 27532)),
    ],
)
def test_parse_endpoint(text: str, expected: tuple[str, int]) -> None:
    assert parse_endpoint(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty address"),
        ("host:", "port missing"),
        ("host:http", "bad port 'http'"),
        ("host:70000", "from 0 to 65535"),
        ("::1:27531", "IPv6 address in brackets"),
        ("[::1:27531", "missing ']'"),
        ("[nonsense]:1", "not an IPv6 address"),
        ("[::1]27531", "expected HOST:PORT"),
        ("my host:1", "expected HOST:PORT"),
    ],
)
def test_parse_endpoint_errors_are_one_line(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as info:
        parse_endpoint(text)
    assert "\n" not in str(info.value)


def test_endpoint_prints_ipv6_in_brackets() -> None:
    assert str(Endpoint("::1", 27531)) == "[::1]:27531"
    assert str(parse_endpoint("10.0.0.2:1")) == "10.0.0.2:1"


# ---------------------------------------------------------------- connections


class Server:
    """tcp_listen on a free port; each accepted link is handed to the test."""

    def __init__(self) -> None:
        self.links: asyncio.Queue[TcpPort] = asyncio.Queue()
        self.done = asyncio.Event()
        self.server: asyncio.Server | None = None
        self.port = 0

    async def on_client(self, link: TcpPort) -> None:
        await self.links.put(link)
        await self.done.wait()  # the link stays open while the test uses it

    async def accepted(self) -> TcpPort:
        return await asyncio.wait_for(self.links.get(), 5)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    srv = Server()
    srv.server = await tcp_listen("127.0.0.1", 0, srv.on_client)
    srv.port = srv.server.sockets[0].getsockname()[1]
    yield srv
    srv.done.set()
    srv.server.close()
    await srv.server.wait_closed()


def options(sock: Any) -> tuple[int, int]:
    return (
        sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
    )


async def test_connect_and_listen_set_nodelay_and_keepalive(server: Server) -> None:
    client = await tcp_connect("127.0.0.1", server.port)
    accepted = await server.accepted()
    try:
        assert isinstance(client, Port) and isinstance(accepted, Port)
        assert all(options(client.socket)) and all(options(accepted.socket))
        assert client.peer == f"127.0.0.1:{server.port}"
        assert accepted.peer.startswith("127.0.0.1:")
        await client.write(MESSAGES[0])
        assert await asyncio.wait_for(accepted.read(), 5) == MESSAGES[0]
    finally:
        await client.close()
        await accepted.close()


async def test_a_raw_client_receives_exactly_what_was_written(server: Server) -> None:
    loop = asyncio.get_running_loop()
    raw = socket.create_connection(("127.0.0.1", server.port))
    raw.setblocking(False)
    try:
        link = await server.accepted()
        for message in MESSAGES:
            await link.write(message)
            assert link.transport.get_write_buffer_size() == 0
        got = b""
        while len(got) < sum(map(len, MESSAGES)):
            got += await asyncio.wait_for(loop.sock_recv(raw, 65536), 5)
        assert got == b"".join(MESSAGES)
        raw.close()
        assert await asyncio.wait_for(link.read(), 5) == b""  # clean close: end of file
    finally:
        raw.close()


async def read_total(link: TcpPort, n: int) -> bytes:
    got = bytearray()
    while len(got) < n:
        chunk = await link.read()
        assert chunk, f"end of file after {len(got)} of {n} bytes"
        got += chunk
    return bytes(got)


class RecordingSocket(socket.socket):
    """A real socket that remembers what each send() call carried."""

    sends: list[bytes]

    def send(self, data: Any, flags: int = 0) -> int:
        sent = super().send(data, flags)
        self.sends.append(bytes(data[:sent]))
        return sent


async def test_each_write_is_its_own_send_even_when_the_kernel_is_full(server: Server) -> None:
    sock = RecordingSocket(socket.AF_INET, socket.SOCK_STREAM)
    sock.sends = []
    sock.connect(("127.0.0.1", server.port))
    sock.setblocking(False)
    transport, protocol = await asyncio.get_running_loop().create_connection(
        PortProtocol, sock=sock
    )
    link = TcpPort.connected(transport, protocol)
    peer = await server.accepted()
    try:
        assert all(options(link.socket))
        for message in MESSAGES:
            await link.write(message)
        assert sock.sends == MESSAGES  # one send per message
        assert await read_total(peer, sum(map(len, MESSAGES))) == b"".join(MESSAGES)

        # Fill the kernel's buffers behind the transport's back, so the next message
        # has to wait in the transport.
        filler = 0
        with contextlib.suppress(BlockingIOError):
            while True:
                filler += socket.socket.send(sock, b"\x01" * 65536)
        sock.sends.clear()
        first = asyncio.create_task(link.write(MESSAGES[0]))
        await asyncio.sleep(0)  # one step of the task: write, then wait in drain
        assert not first.done()  # write() waits until the kernel took the message...
        assert link.transport.get_write_buffer_size() == len(MESSAGES[0])
        assert await read_total(peer, filler + len(MESSAGES[0])) == b"\x01" * filler + MESSAGES[0]
        await asyncio.wait_for(first, 5)
        await link.write(MESSAGES[1])  # ...so this one cannot be merged with it
        assert await read_total(peer, len(MESSAGES[1])) == MESSAGES[1]
        assert b"".join(sock.sends) == MESSAGES[0] + MESSAGES[1]
        assert sock.sends[-1] == MESSAGES[1]
    finally:
        await link.close()
        await peer.close()


async def test_connection_refused_is_a_port_error() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(PortError, match="connection refused") as info:
        await tcp_connect("127.0.0.1", port)
    assert "\n" not in str(info.value)


async def test_address_in_use_is_a_port_error(server: Server) -> None:
    async def ignore(link: TcpPort) -> None:
        await link.close()

    with pytest.raises(PortError, match="address already in use") as info:
        await tcp_listen("127.0.0.1", server.port, ignore)
    assert str(info.value).startswith(f"cannot listen on 127.0.0.1:{server.port}:")


async def test_reset_by_peer_is_a_port_error(server: Server) -> None:
    client = await tcp_connect("127.0.0.1", server.port)
    accepted = await server.accepted()
    try:
        sock = client.socket
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        await client.close()  # linger 0: the peer gets a RST
        with pytest.raises(PortError, match="reset"):
            await asyncio.wait_for(accepted.read(), 5)
    finally:
        await accepted.close()


async def test_a_failing_handler_is_logged_and_its_link_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(link: TcpPort) -> None:
        raise RuntimeError("handler bug")

    srv = await tcp_listen("127.0.0.1", 0, broken)
    port = srv.sockets[0].getsockname()[1]
    try:
        client = await tcp_connect("127.0.0.1", port)
        assert await asyncio.wait_for(client.read(), 5) == b""
        await client.close()
        assert any("handler failed" in r.getMessage() for r in caplog.records)
        assert any(r.levelno == logging.ERROR for r in caplog.records)
    finally:
        srv.close()
        await srv.wait_closed()


async def test_a_cancelled_handler_closes_its_link_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = asyncio.Event()

    async def forever(link: TcpPort) -> None:
        started.set()
        await asyncio.Event().wait()

    srv = await tcp_listen("127.0.0.1", 0, forever)
    port = srv.sockets[0].getsockname()[1]
    client = await tcp_connect("127.0.0.1", port)
    try:
        await asyncio.wait_for(started.wait(), 5)
        handlers = [t for t in asyncio.all_tasks() if "serve" in repr(t.get_coro())]
        assert len(handlers) == 1
        handlers[0].cancel()  # what asyncio.run does to it at shutdown
        await asyncio.wait(handlers, timeout=5)
        assert await asyncio.wait_for(client.read(), 5) == b""
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    finally:
        await client.close()
        srv.close()
        await srv.wait_closed()
