#!/usr/bin/env python3
"""The transport floor: dxserial's own transports, and nothing of the bridge on top.

dxserial's serial link (pyserial-asyncio-fast's transport with dxserial's repairs) on one
end, its TCP listener on the other, uvloop, each chunk handed over in the transport's
callback; split on NUL, one write per message, nothing parsed, judged, queued or counted.
Set beside ``shared/bench/floor_bridge.py`` (raw file descriptors) and ``dxserial bridge``,
it shows how much of the bridge's time is its transports' and how much its own work.

    python3 bench/transport_floor.py SERIAL_PATH TCP_PORT
"""

from __future__ import annotations

import asyncio
import sys

from dxserial.runtime import run
from dxserial.transports.base import StreamPort
from dxserial.transports.openers import open_serial
from dxserial.transports.serial import SerialSettings
from dxserial.transports.tcp import TcpPort, tcp_listen


class _Forward:
    """Splits one end's bytes on NUL and writes each message to the other end."""

    def __init__(self) -> None:
        self.to: StreamPort | None = None
        self._pending = b""
        self._backlog = bytearray()
        self._flushing: asyncio.Task[None] | None = None

    def data(self, chunk: bytes) -> None:
        *messages, self._pending = (self._pending + chunk).split(b"\0")
        for message in messages:
            frame = message + b"\0"
            if self._backlog or self.to is None or not self.to.try_write(frame):
                self._backlog += frame  # the kernel is full: one write when it drains
        if self._backlog and self.to is not None and self._flushing is None:
            self._flushing = asyncio.create_task(self._flush(self.to))

    async def _flush(self, link: StreamPort) -> None:
        while self._backlog:
            data = bytes(self._backlog)
            self._backlog.clear()
            await link.write(data)
        self._flushing = None


async def _serve(path: str, port: int) -> None:
    serial = await open_serial(path, SerialSettings(baudrate=115200))
    from_serial, from_tcp = _Forward(), _Forward()
    from_tcp.to = serial
    serial.start_push(from_serial.data, lambda why: None)

    async def client(link: TcpPort) -> None:
        ended = asyncio.Event()
        from_serial.to = link
        link.start_push(from_tcp.data, lambda why: ended.set())
        await ended.wait()
        from_serial.to = None

    await tcp_listen("127.0.0.1", port, client)
    await asyncio.Event().wait()


def main() -> None:
    run(_serve(sys.argv[1], int(sys.argv[2])))


if __name__ == "__main__":
    main()
