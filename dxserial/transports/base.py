"""What the bridge needs from any port (a byte pipe), and one implementation on asyncio.

The bridge does not care whether bytes come from a serial port, a DOSBox socket or a TCP
peer: it reads chunks, writes whole framed messages and closes.  Serial and TCP ports share
:class:`StreamPort`, an asyncio transport whose :class:`PortProtocol` hands each chunk
straight to the link driver (no stream reader or writer in between); they differ only in
their names and in how a lost port is reported.

Two rules every port keeps:

* ``write()`` returns only when the transport holds nothing more of ``data``: everything was
  handed to the kernel.  So two calls never merge into one ``send()`` (DXP peers such as
  pydraughts lose the second of two messages that arrive in one TCP segment).
* Errors come out as :class:`~dxserial.errors.PortError` with one readable line.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import struct
import termios
from collections.abc import Awaitable, Callable
from typing import Protocol, cast, runtime_checkable

from dxserial.errors import PortError

log = logging.getLogger("dxserial.transports")

#: Largest chunk one ``read()`` returns.
READ_CHUNK = 65536
#: How long ``close()`` waits for the transport to finish before giving up on it.
CLOSE_TIMEOUT = 5.0


@runtime_checkable
class Port(Protocol):
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


#: Called with each chunk read, in the transport's own callback.
DataCallback = Callable[[bytes], None]
#: Called once when the link ends: ``None`` for a clean end, else why.
EndCallback = Callable[[PortError | None], None]


@runtime_checkable
class PushPort(Protocol):
    """A :class:`Port` that can also hand each chunk to a callback as it arrives."""

    def start_push(self, on_data: DataCallback, on_end: EndCallback) -> bool: ...
    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...


class PortProtocol(asyncio.Protocol):
    """What a port's transport calls: each chunk straight to a callback, or buffered.

    In push mode (:meth:`push_to`) each chunk is handed on inside the transport's own
    callback: no stream reader, no task woken per read, on the bridge's hot path.  Until
    then, and for callers that use :meth:`read`, it buffers (bounded: the transport is
    paused past ``2 * limit``).  Writes wait in :meth:`drain` until the transport's buffer
    is empty again (its high-water mark is 0, see :class:`StreamPort`).
    """

    def __init__(
        self,
        limit: int = READ_CHUNK,
        on_connect: Callable[[asyncio.Transport, PortProtocol], object] | None = None,
    ) -> None:
        self.transport: asyncio.Transport | None = None
        self._limit_bytes = limit
        self._on_connect = on_connect  # a server's: called with each new connection
        self._data = bytearray()
        self._ended = False
        self._error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._on_data: DataCallback | None = None
        self._on_end: Callable[[BaseException | None], None] | None = None
        self._write_paused = False
        self._drained: asyncio.Future[None] | None = None
        self._lost = False
        self._closed: asyncio.Future[None] | None = None
        self._task: asyncio.Task[object] | None = None

    # ------------------------------------------------------------------ asyncio's calls

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport; they have its methods.
        transport = cast(asyncio.Transport, transport)
        self.transport = transport
        if self._on_connect is not None:
            result = self._on_connect(transport, self)
            if asyncio.iscoroutine(result):
                self._task = asyncio.get_running_loop().create_task(result)

    def data_received(self, data: bytes) -> None:
        if not data:
            return
        if self._on_data is not None:
            self._on_data(bytes(data))
            return
        self._data += data
        self._wake()
        transport = self.transport
        if len(self._data) > 2 * self._limit_bytes and transport is not None and not self._paused:
            with contextlib.suppress(NotImplementedError, AttributeError, RuntimeError):
                transport.pause_reading()
                self._paused = True

    def eof_received(self) -> bool:
        self._ended = True
        self._wake()
        if self._on_end is not None:
            self._finish()
        return True  # keep the transport open: a half-closed peer still reads

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if exc is None:
            self._ended = True
        elif self._error is None:
            self._error = exc
        self._wake()
        if self._on_end is not None:
            self._finish()
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_exception(exc or ConnectionResetError("connection lost"))
            drained.exception()  # retrieved: nobody may be waiting any more
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # ------------------------------------------------------------------ ours

    def push_to(
        self,
        on_data: DataCallback,
        on_end: Callable[[BaseException | None], None],
    ) -> None:
        """From now on, hand every chunk to ``on_data`` and the end to ``on_end``."""
        self._on_data, self._on_end = on_data, on_end
        if self._data:
            data = bytes(self._data)
            self._data.clear()
            self._resume()
            on_data(data)
        if self._ended or self._error is not None:
            self._finish()

    def exception(self) -> Exception | None:
        return self._error

    def at_eof(self) -> bool:
        return self._ended and not self._data

    async def read(self, n: int = -1) -> bytes:
        while not self._data and not self._ended and self._error is None:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._data:
            size = len(self._data) if n < 0 else min(n, len(self._data))
            out = bytes(self._data[:size])
            del self._data[:size]
            self._resume()
            return out
        if self._error is not None:
            raise self._error
        return b""

    async def drain(self) -> None:
        """Until the transport's buffer is empty (its high-water mark is 0)."""
        if self._error is not None:
            raise self._error
        if self._lost:
            raise ConnectionResetError("connection lost")
        if not self._write_paused:
            return
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._drained)

    async def wait_closed(self) -> None:
        if self._lost:
            return
        if self._closed is None:
            self._closed = asyncio.get_running_loop().create_future()
        await self._closed

    def _finish(self) -> None:
        on_end, self._on_end = self._on_end, None
        self._on_data = None
        if on_end is not None:
            on_end(self._error)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _resume(self) -> None:
        transport = self.transport
        if self._paused and transport is not None and len(self._data) <= self._limit_bytes:
            with contextlib.suppress(NotImplementedError, AttributeError, RuntimeError):
                transport.resume_reading()
            self._paused = False


#: A connected transport and the protocol it calls.
Connection = tuple[asyncio.Transport, PortProtocol]


async def open_connection(host: str, port: int) -> Connection:
    """A TCP connection with a :class:`PortProtocol`."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_connection(PortProtocol, host, port)
    return transport, protocol


ClientCallback = Callable[[asyncio.Transport, PortProtocol], Awaitable[None] | None]


async def start_server(on_client: ClientCallback, host: str, port: int) -> asyncio.Server:
    """A TCP server with a :class:`PortProtocol` per connection, handed to ``on_client``."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: PortProtocol(on_connect=on_client), host, port)


class StreamPort:
    """A :class:`Port` over an asyncio transport and its :class:`PortProtocol`.

    The transport gets a high-water mark of 0, so a write waits until its buffer is empty:
    that is what makes ``write()`` mean "handed to the kernel" and keeps consecutive writes
    from being merged in the transport's buffer.
    """

    name: str

    def __init__(self, name: str, transport: asyncio.Transport, protocol: PortProtocol):
        self.name = name
        self.transport = transport
        self._protocol = protocol
        self._closed = False
        #: What :meth:`_unsent_bytes` said when the link ended (``None``: unknown).
        self.unsent_at_end: int | None = None
        transport.set_write_buffer_limits(high=0)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def ending(self) -> bool:
        """The other end hung up or the link failed, even if nobody has read that yet."""
        protocol = self._protocol
        return (
            self._closed
            or self.transport.is_closing()
            or protocol.at_eof()
            or protocol.exception() is not None
        )

    def _lost(self, exc: BaseException) -> PortError:
        """Turn a transport error into the one-line error callers see."""
        return PortError(f"{self.name}: {os_reason(exc)}")

    def _at_eof(self) -> bytes:
        """What ``read()`` returns (or raises) when the other end closed cleanly."""
        return b""

    def start_push(self, on_data: DataCallback, on_end: EndCallback) -> bool:
        """Hand every chunk to ``on_data`` as it arrives, and the end to ``on_end``.

        ``False`` (and nothing changes) when this link cannot: then use :meth:`read`.  An
        error raised by ``on_data`` ends the link (it is logged, with its traceback, as a
        bug) rather than escaping into the event loop.
        """
        ended = False

        def end(exc: BaseException | None) -> None:
            nonlocal ended
            if ended:
                return
            ended = True
            self.unsent_at_end = self._unsent_bytes()
            if exc is None:
                try:
                    self._at_eof()
                except PortError as lost:
                    on_end(lost)
                    return
                on_end(None)
            elif isinstance(exc, PortError):
                on_end(exc)
            else:
                on_end(self._lost(exc))

        def data(chunk: bytes) -> None:
            if ended:
                return
            try:
                decoded = self._decode(chunk)
                if decoded:
                    on_data(decoded)
            except Exception as exc:
                log.exception("%s: handling what was read failed", self.name)
                end(PortError(f"{self.name}: internal error: {exc}"))
                self.transport.abort()

        self._protocol.push_to(data, end)
        return True

    async def wait_taken(self, timeout: float = 0.2) -> None:
        """After a clean end: let what is still unacknowledged be taken (a peer that only
        shut its sending side reads on) for up to ``timeout`` seconds, then keep in
        :attr:`unsent_at_end` what was not.  The kernel has no event for an
        acknowledgement, so its count is looked at every few milliseconds.  After a reset
        the count stays as it was: nothing more will be taken."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.unsent_at_end and loop.time() < deadline:
            await asyncio.sleep(0.005)
            left = self._unsent_bytes()
            if left is None:
                return
            self.unsent_at_end = left

    def _unsent_bytes(self) -> int | None:
        """Bytes written but not yet taken by the other end (TIOCOUTQ: for a socket, not
        yet acknowledged by the peer's machine; for a tty, not yet sent down the line)."""
        sock = self.transport.get_extra_info("socket")
        fd = sock.fileno() if sock is not None else self.transport.get_extra_info("pipe_fd")
        if not isinstance(fd, int) or fd < 0:
            return None
        try:
            raw = fcntl.ioctl(fd, termios.TIOCOUTQ, b"\0\0\0\0")
        except (OSError, ValueError):
            return None
        return int(struct.unpack("i", raw)[0])

    def pause_reading(self) -> None:
        """Stop reading from the OS (flow control: the other side cannot keep up)."""
        with contextlib.suppress(RuntimeError, AttributeError, NotImplementedError):
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        with contextlib.suppress(RuntimeError, AttributeError, NotImplementedError):
            self.transport.resume_reading()

    def _decode(self, chunk: bytes) -> bytes:
        """What a chunk read carries (a subclass may absorb escapes); identity here."""
        return chunk

    async def read(self) -> bytes:
        """Next chunk, as soon as any bytes arrived."""
        if self._closed:
            return b""
        try:
            data = await self._protocol.read(READ_CHUNK)
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
            if self.transport.is_closing():
                # A lost transport silently drops writes; say why instead.
                raise self._protocol.exception() or ConnectionResetError("connection lost")
            self.transport.write(data)
            await self._protocol.drain()
        except PortError:
            raise
        except OSError as exc:
            raise self._lost(exc) from exc

    def try_write(self, data: bytes) -> bool:
        """Write at once when the transport holds nothing: one message, one ``send()``."""
        transport = self.transport
        if self._closed or transport.is_closing() or transport.get_write_buffer_size():
            return False
        try:
            transport.write(data)
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
        self.transport.close()
        try:
            await asyncio.wait_for(self._protocol.wait_closed(), CLOSE_TIMEOUT)
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
