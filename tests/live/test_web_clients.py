"""The live view serves a bounded number of pages: one more is refused with HTTP 503 and
why, and a page that reads nothing is dropped, its slot freed (issue #36, point 10)."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import pytest

pytest.importorskip("aiohttp", reason="the web view needs aiohttp (pip install dxserial[web])")

from dxserial.live.web import MAX_CLIENTS, WebView, start_web

pytestmark = pytest.mark.e2e


#: Every page a test opened, closed when it ends (the leak check counts sockets).
_OPEN: list[asyncio.StreamWriter] = []


@pytest.fixture(autouse=True)
async def _close_pages() -> object:
    yield
    while _OPEN:
        writer = _OPEN.pop()
        writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await writer.wait_closed()


async def follow(
    view: WebView, keep: bool = False
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """A page asking for the events; what it got first (its headers)."""
    host, port = view.address.removeprefix("http://").rstrip("/").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    _OPEN.append(writer)
    connection = b"keep-alive" if keep else b"close"
    writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\nConnection: " + connection + b"\r\n\r\n")
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    return reader, writer, head


def never_reads(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)


async def test_one_page_past_the_cap_is_refused_in_words() -> None:
    assert MAX_CLIENTS == 32  # the documented default (docs/live-view.md)
    view = await start_web("127.0.0.1:0", [], lambda _l: None, max_clients=2, heartbeat=0.2)
    try:
        pages = [await follow(view) for _ in range(2)]
        assert all(head.startswith(b"HTTP/1.1 200") for _, _, head in pages)
        reader, writer, head = await follow(view, keep=True)
        assert head.startswith(b"HTTP/1.1 503")
        body = await asyncio.wait_for(reader.read(), 10)  # to the end: its connection closed
        assert body == b"too many viewers: this live view serves 2 page(s) at once; try again later\n"
        assert view.refused == 1
        writer.close()
        _, gone, _ = pages.pop()
        gone.close()  # a page leaves: its slot is free again
        await asyncio.wait_for(_until(lambda: len(view._streams) == 1), 10)
        *_, head = await follow(view)
        assert head.startswith(b"HTTP/1.1 200")
    finally:
        await view.close()


async def test_a_page_that_reads_nothing_is_dropped_and_its_slot_freed() -> None:
    view = await start_web("127.0.0.1:0", [], lambda _l: None, max_clients=1, write_timeout=0.5)
    try:
        _, writer, head = await follow(view)
        assert head.startswith(b"HTTP/1.1 200")
        never_reads(writer)
        table = ["x" * 200] * 500  # 100 kB an update: the socket's buffers fill at once
        for n in range(200):
            view.publish({"kind": "standings", "table": [*table, str(n)]})
            await asyncio.sleep(0)
            if view.dropped:
                break
        await asyncio.wait_for(_until(lambda: view.dropped == 1 and not view._streams), 30)
        *_, head = await follow(view)
        assert head.startswith(b"HTTP/1.1 200")  # its slot went to the next page
    finally:
        await view.close()


async def _until(check: object) -> None:
    assert callable(check)
    while not check():
        await asyncio.sleep(0.01)
