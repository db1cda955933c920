"""ENDPOINT strings and what opening them gives: a serial port, a TCP connection, a listener."""

from __future__ import annotations

import asyncio

import pytest

from dxserial.errors import ConfigError, PortError
from dxserial.protocol.links import NulLink, NulModemSettings
from dxserial.protocol.nulmodem import NulModemLink
from dxserial.transports.endpoints import (
    EndpointKind,
    EngineEndpoint,
    LinkOptions,
    parse_engine_endpoint,
)
from dxserial.transports.tcp import Endpoint

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


@pytest.mark.parametrize(
    ("text", "kind", "port", "address"),
    [
        ("/dev/ttyUSB0", EndpointKind.SERIAL, "/dev/ttyUSB0", None),
        ("socket://127.0.0.1:5555", EndpointKind.SERIAL, "socket://127.0.0.1:5555", None),
        ("tcp://127.0.0.1:27000", EndpointKind.TCP, "", Endpoint("127.0.0.1", 27000)),
        ("tcp://example.org", EndpointKind.TCP, "", Endpoint("example.org", 27531)),
        ("TCP://[::1]:1234", EndpointKind.TCP, "", Endpoint("::1", 1234)),
        ("listen://127.0.0.1:0", EndpointKind.LISTEN, "", Endpoint("127.0.0.1", 0)),
        ("listen://:4000", EndpointKind.LISTEN, "", Endpoint("127.0.0.1", 4000)),
    ],
)
def test_forms(text: str, kind: EndpointKind, port: str, address: Endpoint | None) -> None:
    spec = parse_engine_endpoint(text)
    assert (spec.kind, spec.port, spec.address) == (kind, port, address)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty endpoint"),
        ("tcp://", "HOST:PORT missing"),
        ("tcp://127.0.0.1:0", "port 0"),
        ("listen://127.0.0.1:99999", "bad port"),
        ("tcp://::1:5", "IPv6 address in brackets"),
    ],
)
def test_bad_forms(text: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        parse_engine_endpoint(text)


def test_layer1_follows_the_endpoint() -> None:
    nul = LinkOptions(link="nul")
    nulmodem = LinkOptions(link="nulmodem", nulmodem=NulModemSettings(timeout=0.5))
    assert isinstance(EngineEndpoint(parse_engine_endpoint("/dev/x"), nul).make_link(), NulLink)
    serial = EngineEndpoint(parse_engine_endpoint("/dev/x"), nulmodem)
    assert isinstance(serial.make_link(), NulModemLink)
    assert serial.describe() == "serial port /dev/x (nulmodem link)"
    tcp = EngineEndpoint(parse_engine_endpoint("tcp://127.0.0.1:9"), nulmodem)
    assert isinstance(tcp.make_link(), NulLink)  # TCP: always NUL frames


async def test_listen_serves_one_peer_at_a_time() -> None:
    endpoint = EngineEndpoint(parse_engine_endpoint("listen://127.0.0.1:0"))
    where = await endpoint.prepare()
    assert endpoint.listen_address is not None
    port = endpoint.listen_address.port
    assert where == f"listening on 127.0.0.1:{port}"
    r1, w1 = await asyncio.open_connection("127.0.0.1", port)
    first = await endpoint.open(5)
    r2, w2 = await asyncio.open_connection("127.0.0.1", port)
    assert await asyncio.wait_for(r2.read(), 5) == b""  # turned away while one is served
    w1.write(b"hello\x00")
    assert await first.read() == b"hello\x00"
    await endpoint.release(first)
    assert await asyncio.wait_for(r1.read(), 5) == b""
    r3, w3 = await asyncio.open_connection("127.0.0.1", port)
    second = await endpoint.open(5)  # the next peer is taken once the first has left
    await second.write(b"x\x00")
    assert await asyncio.wait_for(r3.readexactly(2), 5) == b"x\x00"
    await endpoint.release(second)
    await endpoint.close()
    for writer in (w1, w2, w3):
        writer.close()


async def test_listen_open_times_out() -> None:
    endpoint = EngineEndpoint(parse_engine_endpoint("listen://127.0.0.1:0"))
    with pytest.raises(PortError, match="no engine connected"):
        await endpoint.open(0.05)
    await endpoint.close()


async def test_tcp_connect_retries_until_the_timeout() -> None:
    endpoint = EngineEndpoint(
        parse_engine_endpoint("tcp://127.0.0.1:1"), LinkOptions(connect_timeout=0.3)
    )
    with pytest.raises(PortError, match="connection refused"):
        await endpoint.open()
