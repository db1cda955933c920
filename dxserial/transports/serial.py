"""Serial ports under asyncio (pyserial + serial_asyncio_fast), with errors a user can act on.

Ports this module opens itself, through the scheme table's openers
(:func:`~dxserial.transports.openers.open_serial`): a device path (``/dev/ttyUSB0``,
``/dev/serial/by-id/...``, a ``dxserial vpair`` link), ``hwgrep://REGEX`` (resolved to a
device path) and ``socket://HOST:PORT`` (DOSBox ``serial1=nullmodem ... transparent:1``).
``dosbox://`` and ``rfc2217://`` are in :mod:`dxserial.transports.dosbox` and
:mod:`dxserial.transports.rfc2217`.  Other pyserial URLs (``loop://``, ``spy://`` ...) have
no file descriptor for the event loop to watch and would fail
silently, so they are refused.

Two things pyserial does not do well under asyncio are handled here:

* with ``write_timeout=0`` (what serial_asyncio_fast sets), pyserial's ``write()`` spins on
  the CPU while the kernel buffer is full instead of raising ``BlockingIOError``, which
  freezes the event loop.  :class:`_NonBlockingSerial` writes once and lets the transport
  wait for the fd to become writable.
* serial_asyncio_fast 0.16 never unregisters its fd writer after a partial write, and
  reports a write error on a vanished port as an unhandled loop error with a traceback;
  :class:`_SerialTransport` repairs both.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import stat
import urllib.parse
from dataclasses import dataclass
from typing import Any

import serial
from serial_asyncio_fast import SerialTransport

from dxserial.errors import ConfigError, PortError
from dxserial.transports.base import PortProtocol, StreamPort, os_reason
from dxserial.transports.permissions import permission_denied
from dxserial.transports.schemes import split_scheme
from dxserial.transports.tcp import tune_socket

log = logging.getLogger("dxserial.transports.serial")

_PARITIES = ("N", "E", "O", "M", "S")
_BYTESIZES = (5, 6, 7, 8)
_STOPBITS = (1, 1.5, 2)


@dataclass(frozen=True)
class SerialSettings:
    """Line settings, named as in pyserial's miniterm.  DXP's default is 9600 8N1.

    ``dtr``/``rts``: ``None`` leaves pyserial's default (both asserted on open).
    ``exclusive``: take an advisory lock so a second dxserial (or any pyserial program
    that asks for exclusivity) cannot open the same port by mistake.  ``xonxoff`` makes
    the driver swallow bytes 0x11 and 0x13; leave it off unless the other side needs it.
    """

    baudrate: int = 9600
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1
    rtscts: bool = False
    xonxoff: bool = False
    dtr: bool | None = None
    rts: bool | None = None
    exclusive: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.baudrate, bool) or not isinstance(self.baudrate, int):
            raise ConfigError(f"baud rate must be a whole number, not {self.baudrate!r}")
        if self.baudrate <= 0:
            raise ConfigError(f"baud rate must be positive, not {self.baudrate}")
        if self.bytesize not in _BYTESIZES or isinstance(self.bytesize, bool):
            raise ConfigError(f"data bits must be 5, 6, 7 or 8, not {self.bytesize!r}")
        parity = self.parity.upper() if isinstance(self.parity, str) else self.parity
        if parity not in _PARITIES:
            raise ConfigError(
                f"parity must be N, E, O, M or S (none, even, odd, mark, space), "
                f"not {self.parity!r}"
            )
        object.__setattr__(self, "parity", parity)
        if self.stopbits not in _STOPBITS or isinstance(self.stopbits, bool):
            raise ConfigError(f"stop bits must be 1, 1.5 or 2, not {self.stopbits!r}")
        for name in ("rtscts", "xonxoff", "exclusive"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, not {getattr(self, name)!r}")
        for name in ("dtr", "rts"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise ConfigError(f"{name} must be true, false or unset, not {value!r}")

    def __str__(self) -> str:
        stop = f"{self.stopbits:g}"
        flow = " rtscts" if self.rtscts else ""
        flow += " xonxoff" if self.xonxoff else ""
        return f"{self.baudrate} {self.bytesize}{self.parity}{stop}{flow}"


class SerialPort(StreamPort):
    """An open serial port (or DOSBox socket) as a :class:`~dxserial.transports.base.Port`.

    A serial line has no end-of-file: when the port vanishes, ``read()`` raises
    :class:`~dxserial.errors.PortError` (after :meth:`close` it returns ``b""``).
    """

    def __init__(
        self,
        port: str,
        settings: SerialSettings,
        transport: asyncio.Transport,
        protocol: PortProtocol,
        serial_instance: Any = None,
    ) -> None:
        super().__init__(port, transport, protocol)
        self.port = port
        self.settings = settings
        self._serial = serial_instance  # None for socket://

    def _lost(self, exc: BaseException) -> PortError:
        text = str(exc)
        if "returned no data" in text:  # pyserial's words for a hung-up tty
            text = "device disconnected (hang-up)"
        elif isinstance(exc, serial.SerialException) and not getattr(exc, "errno", None):
            # pyserial's "read failed: [Errno 5] Input/output error" -> "input/output error"
            text = re.sub(r"^(read|write) failed: (\[Errno \d+\] )?", "", text)
            text = text[:1].lower() + text[1:]
        else:
            text = os_reason(exc)
        return _with_errno(
            PortError(f"serial port {self.port} lost: {text} — was it unplugged?"), exc
        )

    def _at_eof(self) -> bytes:
        raise PortError(f"serial port {self.port} lost: the other end closed the connection")

    def set_dtr(self, value: bool) -> None:
        """Set DTR; skipped (debug log) where the port has no modem lines (pty, socket)."""
        self._modem_call("DTR", lambda s: setattr(s, "dtr", value))

    def set_rts(self, value: bool) -> None:
        """Set RTS; skipped (debug log) where the port has no modem lines (pty, socket)."""
        self._modem_call("RTS", lambda s: setattr(s, "rts", value))

    async def send_break(self, duration: float = 0.25) -> None:
        """Hold the line in break state; skipped (debug log) where unsupported."""
        if self._serial is None:
            log.debug("%s: no break on a socket port; skipped", self.port)
            return
        await asyncio.to_thread(self._modem_call, "break", lambda s: s.send_break(duration))

    def _modem_call(self, what: str, call: Any) -> None:
        if self._serial is None:
            log.debug("%s: %s skipped: a socket port has no modem lines", self.port, what)
            return
        _modem_call(self._serial, self.port, what, call)


class _NonBlockingSerial(serial.Serial):  # type: ignore[misc]
    """pyserial's POSIX port with a ``write()`` that never spins and a plain ``read()``.

    One ``os.write``; a full buffer raises ``BlockingIOError``, which
    serial_asyncio_fast's transport answers by waiting for the fd to become writable.
    """

    def read(self, size: int = 1) -> bytes:
        """One ``os.read`` (pyserial's adds a ``select`` per call); the transport calls this
        only when the fd is readable, so no data means the device is gone."""
        if not self.is_open:
            raise serial.PortNotOpenError()
        try:
            data = os.read(self.fd, size)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            raise serial.SerialException(f"read failed: {exc.strerror or exc}") from exc
        if not data:
            raise serial.SerialException(
                "device reports readiness to read but returned no data "
                "(device disconnected or multiple access on port?)"
            )
        return data

    def write(self, data: bytes) -> int:
        if not self.is_open:
            raise serial.PortNotOpenError()
        try:
            return os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            raise
        except OSError as exc:
            raise serial.SerialException(f"write failed: {exc.strerror or exc}") from exc


class _SerialTransport(SerialTransport):
    """serial_asyncio_fast's transport with two repairs.

    * Its ``_write_data`` never removes the fd writer once the buffer is empty, so after
      one ``BlockingIOError`` the loop calls ``_write_ready`` on an empty buffer forever
      (an assertion error each time).  Here the writer is removed when nothing is left.
    * A write error is reported as an unhandled loop error with a traceback; here it just
      ends the link (``connection_lost(exc)``), which the link reports as a
      :class:`~dxserial.errors.PortError` to whoever reads or writes next.
    """

    def _write_ready(self) -> None:
        if self._write_buffer:
            super()._write_ready()
        if not self._write_buffer:
            self._remove_writer()

    def _fatal_error(
        self, exc: BaseException, message: str = "Fatal error on serial transport"
    ) -> None:
        log.debug("%s: %s", message, exc)
        self._abort(exc)


def port_error(port: str, exc: BaseException) -> PortError:
    """One line that says why ``port`` could not be opened and what to do about it.

    ``exc`` is the ``OSError`` (or pyserial's ``SerialException``, which carries the
    errno for open failures) from the attempt.
    """
    code = getattr(exc, "errno", None)
    if code in (errno.EACCES, errno.EPERM):
        text = permission_denied(port)
    elif code == errno.ENOENT:
        text = (
            f"cannot open {port}: no such device — check the name and that the adapter is "
            "plugged in (ls /dev/serial/by-id/ lists USB-serial adapters)"
        )
    elif code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK):
        text = (
            f"cannot open {port}: port is busy — another program has it open "
            f"(fuser {port} names it); close that program first"
        )
    elif code in (errno.ENXIO, errno.ENODEV):
        text = f"cannot open {port}: device not present — was the adapter unplugged?"
    elif code == errno.EIO:
        text = f"cannot open {port}: input/output error — the adapter may have been unplugged"
    elif code == errno.ENOTTY:
        text = f"cannot open {port}: not a serial port (it takes no line settings)"
    else:
        text = f"cannot open {port}: {os_reason(exc)}"
    return _with_errno(PortError(text), exc)


async def open_device(port: str, settings: SerialSettings) -> SerialPort:
    """Open the device path ``port`` (a tty, a pty, ``/dev/serial/by-id/...``)."""
    return await _open_device(port, port, settings)


async def open_hwgrep(port: str, settings: SerialSettings) -> SerialPort:
    """Open the first serial port ``hwgrep://REGEX`` matches."""
    device = await asyncio.to_thread(_resolve_hwgrep, port)
    return await _open_device(port, device, settings)


async def open_socket(port: str, settings: SerialSettings) -> SerialPort:
    """Open ``socket://HOST:PORT`` (DOSBox's nullmodem with ``transparent:1``)."""
    return await _open_socket(port, split_scheme(port)[1], settings)


#: Linux character-device majors of pseudo-terminal ends (/dev/pts/N).
_PTY_MAJORS = range(136, 144)


def is_pseudo_terminal(port: str) -> bool:
    """True for a pty (a ``dxserial vpair`` end, socat's ``pty``): it has no line speed."""
    if split_scheme(port)[0]:
        return False
    try:
        info = os.stat(port)
    except OSError:
        return False
    if not stat.S_ISCHR(info.st_mode):
        return False
    return os.major(info.st_rdev) in _PTY_MAJORS or os.path.realpath(port).startswith("/dev/pts/")


def _resolve_hwgrep(url: str) -> str:
    try:
        found = serial.serial_for_url(url, do_not_open=True)
    except (serial.SerialException, ValueError) as exc:
        raise PortError(f"cannot open {url}: {exc}") from None
    return str(found.port)


def _check_device(port: str, device: str) -> None:
    """Refuse early what pyserial would report obscurely (a file, a directory)."""
    try:
        info = os.stat(device)
    except OSError as exc:
        raise port_error(port, exc) from None
    if not stat.S_ISCHR(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a character device"
        raise PortError(f"cannot open {port}: not a serial device ({kind})")


def _open_blocking(port: str, device: str, settings: SerialSettings) -> Any:
    _check_device(port, device)
    ser = _NonBlockingSerial(
        None,
        baudrate=settings.baudrate,
        bytesize=settings.bytesize,
        parity=settings.parity,
        stopbits=settings.stopbits,
        rtscts=settings.rtscts,
        xonxoff=settings.xonxoff,
        exclusive=settings.exclusive,
        timeout=0,
        write_timeout=0,
    )
    ser.port = device
    # Set before open so the lines come up in the wanted state (no DTR pulse); pyserial
    # silently ignores a pty's refusal then, so they are set again below, with a log.
    if settings.dtr is not None:
        ser.dtr = settings.dtr
    if settings.rts is not None:
        ser.rts = settings.rts
    try:
        ser.open()
    except serial.SerialException as exc:
        if getattr(exc, "errno", None) is None and "configure port" in str(exc):
            raise port_error(port, OSError(errno.ENOTTY, "not a tty")) from None
        raise port_error(port, exc) from None
    except OSError as exc:
        raise port_error(port, exc) from None
    if settings.dtr is not None:
        _modem_call(ser, port, "DTR", lambda s: setattr(s, "dtr", settings.dtr))
    if settings.rts is not None:
        _modem_call(ser, port, "RTS", lambda s: setattr(s, "rts", settings.rts))
    return ser


def _modem_call(ser: Any, port: str, what: str, call: Any) -> None:
    """Run one modem-line ioctl; a pty or a driver without modem lines just skips it."""
    try:
        call(ser)
    except (OSError, serial.SerialException) as exc:
        code = getattr(exc, "errno", None)
        if code in (errno.ENOTTY, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, None):
            log.debug("%s: %s not supported here (%s); skipped", port, what, exc)
        else:
            raise PortError(f"serial port {port}: cannot set {what}: {os_reason(exc)}") from None


async def _open_device(port: str, device: str, settings: SerialSettings) -> SerialPort:
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(None, _open_blocking, port, device, settings)
    try:
        ser = await asyncio.shield(future)
    except asyncio.CancelledError:
        # The open goes on in its thread; do not leak the port it may still return.
        future.add_done_callback(_close_if_opened)
        raise
    protocol = PortProtocol()
    transport = _SerialTransport(loop, protocol, ser)
    link = SerialPort(port, settings, transport, protocol, ser)
    await asyncio.sleep(0)  # let connection_made and the fd reader be installed
    log.debug("opened %s (%s) %s", port, device, settings)
    return link


def _close_if_opened(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().close()


async def _open_socket(url: str, rest: str, settings: SerialSettings) -> SerialPort:
    parsed = urllib.parse.urlsplit(f"socket://{rest}")
    try:
        host, tcp_port = parsed.hostname, parsed.port
    except ValueError:
        host, tcp_port = None, None
    if not host or tcp_port is None or parsed.path not in ("", "/") or parsed.query:
        raise ConfigError(f"{url}: expected socket://HOST:PORT, e.g. socket://127.0.0.1:7000")
    loop = asyncio.get_running_loop()
    protocol = PortProtocol()
    try:
        transport, _ = await loop.create_connection(lambda: protocol, host, tcp_port)
    except ConnectionRefusedError:
        raise PortError(
            f"cannot open {url}: connection refused — is DOSBox running with "
            "nullmodem on that port?"
        ) from None
    except OSError as exc:
        raise PortError(f"cannot open {url}: {os_reason(exc)}") from None
    tune_socket(transport.get_extra_info("socket"))
    return SerialPort(url, settings, transport, protocol, None)


def _with_errno(error: PortError, cause: BaseException) -> PortError:
    """Keep the original errno on the PortError so callers can still test it."""
    code = getattr(cause, "errno", None)
    if isinstance(code, int):
        error.errno = code
    return error
