"""What the bridge needs from any byte pipe, and one implementation on asyncio streams.

The bridge does not care whether bytes come from a serial port, a DOSBox socket or a TCP
peer: it reads chunks, writes whole framed messages and closes.  Serial and TCP links share
:class:`StreamLink`; they differ only in their names and in how a lost link is reported.

Two rules every link keeps:

* ``write()`` returns only when the transport holds nothing more of ``data``: everything was
  handed to the kernel.  So two calls never merge into one ``send()`` (DXP peers such as
  pydraughts lose the second of two messages that arrive in one TCP segment).
* Errors come out as :class:`~dxserial.errors.PortError` with one readable line.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol, runtime_checkable

from dxserial.errors import PortError

log = logging.getLogger("dxserial.transports")

#: Largest chunk one ``read()`` returns.
READ_CHUNK = 65536
#: How long ``close()`` waits for the transport to finish before giving up on it.
CLOSE_TIMEOUT = 5.0


@runtime_checkable
class ByteLink(Protocol):
    """A bidirectional byte pipe as the bridge sees it.

    ``read()`` returns the next chunk as soon as any bytes are there.  End of the link:
    a clean TCP close returns ``b""``; a serial port that vanishes (unplugged adapter,
    DOSBox gone) raises :class:`~dxserial.errors.PortError`, since a serial line has no
    end-of-file.  Callers should treat both as "link gone".
    """

    name: str

    async def read(self) -> bytes:
        """Next chunk of bytes; ``b""`` at a clean end."""
        ...

    async def write(self, data: bytes) -> None:
        """Write all of ``data`` and wait until the OS has taken it."""
        ...

    def try_write(self, data: bytes) -> bool:
        """Hand ``data`` to the kernel now if nothing of ours is waiting; else ``False``.

        Saves a task switch per message on the hot path.  If the kernel takes only part,
        the rest waits in the transport and the next ``try_write`` says ``False``.
        """
        ...

    async def close(self) -> None:
        """Release the port or socket; safe to call twice."""
        ...


class StreamLink:
    """A :class:`ByteLink` over an asyncio ``StreamReader``/``StreamWriter`` pair.

    The writer's transport gets a high-water mark of 0, so ``drain()`` waits until its
    buffer is empty: that is what makes ``write()`` mean "handed to the kernel" and keeps
    consecutive writes from being merged in the transport's buffer.
    """

    name: str

    def __init__(self, name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.name = name
        self._reader = reader
        self._writer = writer
        self._closed = False
        writer.transport.set_write_buffer_limits(high=0)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def _lost(self, exc: BaseException) -> PortError:
        """Turn a transport error into the one-line error callers see."""
        return PortError(f"{self.name}: {os_reason(exc)}")

    def _at_eof(self) -> bytes:
        """What ``read()`` returns (or raises) when the other end closed cleanly."""
        return b""

    async def read(self) -> bytes:
        """Next chunk, as soon as any bytes arrived."""
        if self._closed:
            return b""
        try:
            data = await self._reader.read(READ_CHUNK)
        except PortError:
            raise
        except OSError as exc:
            raise self._lost(exc) from exc
        if not data and not self._closed:
            return self._at_eof()
        return data

    async def write(self, data: bytes) -> None:
        """Hand all of ``data`` to the kernel; one call, one message, never merged."""
        if self._closed:
            raise PortError(f"{self.name}: link is closed")
        if not data:
            return
        try:
            if self._writer.transport.is_closing():
                # A lost transport silently drops writes; say why instead.
                raise self._reader.exception() or ConnectionResetError("connection lost")
            self._writer.write(data)
            await self._writer.drain()
        except PortError:
            raise
        except OSError as exc:
            raise self._lost(exc) from exc

    def try_write(self, data: bytes) -> bool:
        """Write at once when the transport holds nothing: one message, one ``send()``."""
        transport = self._writer.transport
        if self._closed or transport.is_closing() or transport.get_write_buffer_size():
            return False
        try:
            self._writer.write(data)
        except OSError:
            return False
        # A send that failed closes the transport without raising: report "not written",
        # so the caller keeps the message for the next port instead of counting it sent.
        return not transport.is_closing()

    async def close(self) -> None:
        """Close the transport and wait (bounded) until it has let go of the fd."""
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), CLOSE_TIMEOUT)
        except TimeoutError:
            log.debug("%s: transport still closing after %g s", self.name, CLOSE_TIMEOUT)
        except Exception as exc:  # the error that ended the link; already reported
            log.debug("%s: closed after error: %s", self.name, exc)


def os_reason(exc: BaseException) -> str:
    """A short human reason for an OS-level error (no "[Errno N]" noise)."""
    if isinstance(exc, ConnectionResetError):
        return "connection reset by peer"
    if isinstance(exc, BrokenPipeError):
        return "connection closed by peer (broken pipe)"
    strerror = getattr(exc, "strerror", None)
    if isinstance(strerror, str) and strerror:
        return strerror[0].lower() + strerror[1:]
    text = str(exc)
    return text or type(exc).__name__
