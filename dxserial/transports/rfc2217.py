"""``rfc2217://HOST:PORT``: a serial port on another machine, exported by ser2net (or any
RFC 2217 server), as a :class:`~dxserial.transports.serial.SerialPort`.

pyserial's RFC 2217 client does the telnet and COM-PORT-OPTION work (line speed, modem
lines) but has no file descriptor the event loop could watch: it reads the socket in a
thread of its own and hands bytes out through a queue.  So this module wraps it in an
asyncio transport with two threads of its own: one takes what pyserial read and hands it
to the loop, one writes (a slow network never blocks the loop).  Everything above the
transport (framing, the bridge's sessions, reopening a lost port) is the same code as for
a local port: when the server goes away, the link ends with a
:class:`~dxserial.errors.PortError` and the caller opens the port again.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import urllib.parse
from typing import Any

import serial
import serial.rfc2217

from dxserial.errors import ConfigError, PortError
from dxserial.transports.base import PortProtocol
from dxserial.transports.serial import SerialPort, SerialSettings

__all__ = ["open_rfc2217"]

log = logging.getLogger("dxserial.transports.rfc2217")

#: How long a blocked read waits before it looks again whether the link is closing.
_POLL = 0.2


class _ThreadTransport(asyncio.Transport):
    """An asyncio transport over a blocking pyserial port, read and written by two threads."""

    def __init__(self, loop: asyncio.AbstractEventLoop, protocol: Any, ser: Any) -> None:
        super().__init__()
        self._loop = loop
        self._protocol = protocol
        self._ser = ser
        self._closing = False
        self._reading = threading.Event()
        self._reading.set()
        self._out: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._buffered = 0
        self._high = 64 * 1024
        self._low = 16 * 1024
        self._writing_paused = False
        self._done = 0  # threads finished; the port is closed after both
        self._reader = threading.Thread(target=self._read_loop, name="rfc2217-read", daemon=True)
        self._writer = threading.Thread(target=self._write_loop, name="rfc2217-write", daemon=True)
        protocol.connection_made(self)
        self._reader.start()
        self._writer.start()

    # ------------------------------------------------------------------ threads

    def _read_loop(self) -> None:
        error: BaseException | None = None
        try:
            while not self._closing:
                if not self._reading.wait(_POLL):
                    continue
                data = self._ser.read(max(1, self._ser.in_waiting))
                if data and not self._closing:
                    self._loop.call_soon_threadsafe(self._protocol.data_received, bytes(data))
        except Exception as exc:
            error = exc
        self._loop.call_soon_threadsafe(self._thread_done, error)

    def _write_loop(self) -> None:
        error: BaseException | None = None
        try:
            while True:
                data = self._out.get()
                if data is None:
                    break
                self._ser.write(data)
                self._loop.call_soon_threadsafe(self._written, len(data))
        except Exception as exc:
            error = exc
        self._loop.call_soon_threadsafe(self._thread_done, error)

    def _written(self, n: int) -> None:
        self._buffered -= n
        if self._writing_paused and self._buffered <= self._low:
            self._writing_paused = False
            self._protocol.resume_writing()

    def _thread_done(self, error: BaseException | None) -> None:
        if error is not None and not self._closing:
            log.debug("%s: %s", self._ser.port, error)
            self._shut(error)
        self._done += 1
        if self._done == 2:
            ser = self._ser

            def close_port() -> None:
                try:
                    ser.close()
                except Exception as exc:
                    log.debug("closing %s: %s", ser.port, exc)

            closing = self._loop.run_in_executor(None, close_port)
            closing.add_done_callback(lambda _: self._protocol.connection_lost(self._lost_with))

    _lost_with: BaseException | None = None

    def _shut(self, error: BaseException | None) -> None:
        if self._closing:
            return
        self._closing = True
        self._lost_with = error
        self._reading.set()
        self._out.put(None)

    # ------------------------------------------------------------------ transport API

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing or not data:
            return
        chunk = bytes(data)
        self._buffered += len(chunk)
        self._out.put(chunk)
        if not self._writing_paused and self._buffered > self._high:
            self._writing_paused = True
            self._protocol.pause_writing()

    def get_write_buffer_size(self) -> int:
        return self._buffered

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._high = 64 * 1024 if high is None else high
        self._low = self._high // 4 if low is None else low

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._shut(None)

    def abort(self) -> None:
        self._shut(None)

    def pause_reading(self) -> None:
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def is_reading(self) -> bool:
        return self._reading.is_set()

    def can_write_eof(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"serial": self._ser}.get(name, default)

    @property
    def serial(self) -> Any:
        """The pyserial port (DTR, RTS and break go through it, over the network)."""
        return self._ser


class _Rfc2217Serial(serial.rfc2217.Serial):  # type: ignore[misc]
    """pyserial's client, minus the DTR and RTS it sends while opening.

    The server raises both when it opens its port (termios does), and a server whose
    port has no modem lines (ser2net on a pty) never acknowledges them, which would fail
    the open after a time-out.  dxserial sets them only when asked (``--dtr``/``--rts``).
    """

    _opening = False

    def open(self) -> None:
        self._opening = True
        try:
            super().open()
        finally:
            self._opening = False

    def _update_dtr_state(self) -> None:
        if not self._opening:
            super()._update_dtr_state()

    def _update_rts_state(self) -> None:
        if not self._opening:
            super()._update_rts_state()


def _check_url(url: str) -> None:
    parsed = urllib.parse.urlsplit(url)
    try:
        port = parsed.port
    except ValueError:
        port = None
    if not parsed.hostname or port is None:
        raise ConfigError(f"{url}: expected rfc2217://HOST:PORT, e.g. rfc2217://10.0.0.2:7000")


def _open_blocking(url: str, baudrate: int, bytesize: int, parity: str, stopbits: float) -> Any:
    try:
        ser = _Rfc2217Serial(
            None,
            baudrate=baudrate,
            bytesize=bytesize,
            parity=parity,
            stopbits=stopbits,
            timeout=_POLL,
        )
        ser.port = url
        ser.open()
    except (serial.SerialException, OSError, ValueError) as exc:
        text = str(exc).replace(f"Could not open port {url}: ", "")
        if "Connection refused" in text:
            text = "connection refused — is ser2net (or another RFC 2217 server) running there?"
        raise PortError(f"cannot open {url}: {text}") from None
    return ser


async def open_rfc2217(url: str, settings: SerialSettings) -> SerialPort:
    """Open ``url`` with ``settings`` (speed and framing are sent to the server)."""
    _check_url(url)
    loop = asyncio.get_running_loop()
    ser = await asyncio.to_thread(
        _open_blocking,
        url,
        settings.baudrate,
        settings.bytesize,
        settings.parity,
        settings.stopbits,
    )
    protocol = PortProtocol()
    transport = _ThreadTransport(loop, protocol, ser)
    link = SerialPort(url, settings, transport, protocol, ser)
    log.debug("opened %s (RFC 2217) %s", url, settings)
    return link
