"""Lines on this process's stdin and stdout, for the Hub commands (a GUI is our parent).

stdin is read by the event loop when it is a pipe or a terminal; a regular file (which
epoll cannot watch) is read by a thread, which ends at the file's end.  ``None`` is end
of input.  stdout is written and flushed line by line: a Hub client waits for each answer.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from typing import BinaryIO, TextIO

from dxserial.protocol.hub import MAX_LINE

__all__ = ["StdioLinePort", "StdioLines"]


class StdioLines:
    """``await open()``, then the next line from stdin (``await next()``) and ``write``."""

    def __init__(self, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> None:
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._stdout = stdout if stdout is not None else sys.stdout
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._reader: asyncio.StreamReader | None = None
        self._transport: asyncio.BaseTransport | None = None

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        fd = self._stdin.fileno()
        mode = os.fstat(fd).st_mode
        # The event loop watches pipes, sockets and terminals; a file or /dev/null (a
        # character device that is not a terminal: uvloop aborts on it) is read in a thread.
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
            threading.Thread(target=self._read_file, args=(loop,), daemon=True).start()
            return
        self._reader = asyncio.StreamReader(limit=MAX_LINE + 2)
        protocol = asyncio.StreamReaderProtocol(self._reader)
        self._transport, _ = await loop.connect_read_pipe(lambda: protocol, self._stdin)

    def _read_file(self, loop: asyncio.AbstractEventLoop) -> None:
        for raw in iter(self._stdin.readline, b""):
            loop.call_soon_threadsafe(self._queue.put_nowait, _text(raw))
        loop.call_soon_threadsafe(self._queue.put_nowait, None)

    async def next(self) -> str | None:
        if self._reader is None:
            return await self._queue.get()
        try:
            raw = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return _text(exc.partial) if exc.partial else None
        except asyncio.LimitOverrunError as exc:
            await _skip_line(self._reader, exc.consumed)  # the whole line: parse_line says why
            return "x" * (MAX_LINE + 1)
        return _text(raw)

    def write(self, text: str) -> bool:
        """Write one line; ``False`` if the reader has gone (a closed pipe)."""
        try:
            self._stdout.write(text + "\n")
            self._stdout.flush()
        except (BrokenPipeError, ValueError, OSError):
            return False
        return True

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def _skip_line(reader: asyncio.StreamReader, consumed: int) -> None:
    """Drop an overlong line up to and with its newline (or the end of input), chunk by chunk."""
    while True:
        await reader.readexactly(consumed)
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.IncompleteReadError:
            return
        except asyncio.LimitOverrunError as exc:
            consumed = exc.consumed


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").rstrip("\r\n")


class StdioLinePort:
    """This process's stdin and stdout as a port of lines: each read is one line with its
    ``\\n`` (``b""`` at the end of input), each write one line."""

    name = "stdio"

    def __init__(self, io: StdioLines) -> None:
        self._io = io

    async def read(self) -> bytes:
        text = await self._io.next()
        return b"" if text is None else f"{text}\n".encode()

    async def write(self, data: bytes) -> None:
        self.try_write(data)

    def try_write(self, data: bytes) -> bool:
        return self._io.write(data.decode("utf-8", "replace").removesuffix("\n"))

    async def close(self) -> None:
        self._io.close()
