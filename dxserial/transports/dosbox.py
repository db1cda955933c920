"""DOSBox's serial ``nullmodem`` over TCP, as a serial port for the bridge.

A DOS engine inside DOSBox talks to COM1 as to a UART; DOSBox carries the bytes over one TCP
connection, and :class:`DosboxPort` is the other end of it: ``dosbox://HOST:PORT`` connects
to a DOSBox that listens, ``dosbox-listen://HOST:PORT`` waits for DOSBox to connect, and
``?transparent=1`` passes raw bytes.  The wire format (``FF`` escapes carrying RTS, DTR and
break), why RTS and DTR go on at once, the DOSBox settings to use and what is not supported:
docs/dosbox.md.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple, TypeAlias

from dxserial.errors import ConfigError, PortError
from dxserial.transports.base import (
    Connection,
    PortProtocol,
    open_connection,
    os_reason,
    start_server,
)
from dxserial.transports.schemes import SCHEMES as ALL_SCHEMES
from dxserial.transports.serial import SerialPort, SerialSettings
from dxserial.transports.tcp import Endpoint, format_address, parse_endpoint, tune_socket

log = logging.getLogger("dxserial.transports.dosbox")

#: DOSBox's default nullmodem TCP port (``port:`` not given).
DOSBOX_DEFAULT_PORT = 23
#: The byte that starts an escape: ``FF FF`` is a data 0xFF, ``FF n`` a line state.
ESCAPE = 0xFF
#: Bits of the byte after ESCAPE.
RTS_BIT, DTR_BIT, BREAK_BIT = 0x01, 0x02, 0x04
#: How long ``dosbox://`` waits for DOSBox to accept the connection.
CONNECT_TIMEOUT = 10.0

SCHEMES = tuple(s.name for s in ALL_SCHEMES if s.kind == "dosbox")
# A bare ``?transparent`` counts as true.
_TRUE, _FALSE = ("", "1", "true", "yes", "on"), ("0", "false", "no", "off")


# ---------------------------------------------------------------------- sans-I/O codec


@dataclass(frozen=True)
class LineState:
    """One side's modem-control outputs, as DOSBox sends them after 0xFF.

    What one side sends as RTS/DTR, the other sees as CTS/DSR (a null-modem cable).
    ``raw`` keeps the byte as received (bits above 0x04 are unused; DOSBox ignores them).
    """

    rts: bool = True
    dtr: bool = True
    brk: bool = False
    raw: int | None = field(default=None, compare=False)

    @classmethod
    def from_byte(cls, value: int) -> LineState:
        """Read the byte that followed an escape (never 0xFF: that is a data byte)."""
        if not 0 <= value < ESCAPE:
            raise ValueError(f"line-state byte must be 0..254, not {value!r}")
        return cls(bool(value & RTS_BIT), bool(value & DTR_BIT), bool(value & BREAK_BIT), value)

    def to_byte(self) -> int:
        value = RTS_BIT if self.rts else 0
        value |= DTR_BIT if self.dtr else 0
        return value | (BREAK_BIT if self.brk else 0)

    def to_wire(self) -> bytes:
        """The two bytes that tell DOSBox this state."""
        return bytes((ESCAPE, self.to_byte()))

    def __str__(self) -> str:
        text = f"RTS {_on(self.rts)}, DTR {_on(self.dtr)}"
        return text + ", break" if self.brk else text


def _on(value: bool) -> str:
    return "on" if value else "off"


def encode(data: bytes) -> bytes:
    """Data bytes for the wire: every 0xFF doubled."""
    return data.replace(b"\xff", b"\xff\xff")


#: What :meth:`Decoder.feed` returns, in stream order.
Event: TypeAlias = bytes | LineState


class Decoder:
    """Splits the TCP stream from DOSBox into data and line states, chunk by chunk.

    ``feed()`` takes any chunk (an escape may be split across chunks) and returns the
    events in stream order: ``bytes`` (never empty) and :class:`LineState`.  The only state
    kept between chunks is whether the last byte was an unfinished escape.
    """

    def __init__(self) -> None:
        self._escape = False

    @property
    def pending(self) -> bool:
        """True when the last chunk ended in the first half of an escape."""
        return self._escape

    def feed(self, chunk: bytes) -> list[Event]:
        events: list[Event] = []
        data = bytearray()
        pos, end = 0, len(chunk)
        if self._escape and end:
            self._escape = False
            self._second(chunk[0], data, events)
            pos = 1
        while pos < end:
            hit = chunk.find(ESCAPE, pos)
            if hit < 0:
                data += chunk[pos:]
                break
            data += chunk[pos:hit]
            if hit + 1 == end:
                self._escape = True
                break
            self._second(chunk[hit + 1], data, events)
            pos = hit + 2
        if data:
            events.append(bytes(data))
        return events

    @staticmethod
    def _second(value: int, data: bytearray, events: list[Event]) -> None:
        """The byte after an escape: a data 0xFF, or a line state (which ends the data run)."""
        if value == ESCAPE:
            data.append(ESCAPE)
        else:
            if data:
                events.append(bytes(data))
                data.clear()
            events.append(LineState.from_byte(value))


def decode(chunks: list[bytes] | tuple[bytes, ...]) -> tuple[bytes, list[LineState]]:
    """Decode a whole stream given as chunks: its data and its line states, in order."""
    decoder = Decoder()
    data = bytearray()
    states: list[LineState] = []
    for chunk in chunks:
        for event in decoder.feed(chunk):
            if isinstance(event, LineState):
                states.append(event)
            else:
                data += event
    return bytes(data), states


# ---------------------------------------------------------------------- URLs


class DosboxTarget(NamedTuple):
    """A parsed ``dosbox://`` or ``dosbox-listen://`` URL."""

    listen: bool
    endpoint: Endpoint
    transparent: bool


def parse_dosbox_url(url: str) -> DosboxTarget:
    """Read ``dosbox[-listen]://HOST:PORT[?transparent=1]``; ConfigError says what is wrong."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    example = "e.g. dosbox://127.0.0.1:5555 or dosbox-listen://127.0.0.1:5555?transparent=1"
    if not sep or scheme not in SCHEMES:
        raise ConfigError(f"{url}: not a DOSBox URL; {example}")
    where, _, query = rest.partition("?")
    where = where.removesuffix("/")
    if not where:
        raise ConfigError(f"{url}: HOST:PORT missing; {example}")
    try:
        endpoint = parse_endpoint(where, default_port=DOSBOX_DEFAULT_PORT)
    except ConfigError as exc:
        raise ConfigError(f"{url}: {exc}") from None
    if endpoint.port == 0 and scheme == "dosbox":
        raise ConfigError(f"{url}: port 0 cannot be connected to; {example}")
    transparent = False
    for key, values in urllib.parse.parse_qs(query, keep_blank_values=True).items():
        if key != "transparent":
            raise ConfigError(f"{url}: unknown option {key!r}; the only one is transparent=0|1")
        value = values[-1].lower()
        if value not in _TRUE + _FALSE:
            raise ConfigError(f"{url}: transparent={values[-1]!r}: expected 0 or 1")
        transparent = value in _TRUE
    return DosboxTarget(scheme == "dosbox-listen", endpoint, transparent)


# ---------------------------------------------------------------------- the link


class DosboxPort(SerialPort):
    """A connection to DOSBox's nullmodem, read and written like a serial port.

    ``read()`` returns data bytes only; line states from DOSBox update :attr:`peer_lines`
    (DOSBox's RTS/DTR, i.e. our CTS/DSR).  ``write()`` escapes 0xFF.  When DOSBox hangs up,
    ``read()`` and ``write()`` raise :class:`~dxserial.errors.PortError`, as a serial port
    that vanished.  In transparent mode bytes pass unchanged and there are no line states.
    """

    def __init__(
        self,
        url: str,
        settings: SerialSettings,
        transport: asyncio.Transport,
        protocol: PortProtocol,
        *,
        transparent: bool,
        peer: str,
    ) -> None:
        super().__init__(url, settings, transport, protocol, None)
        self.transparent = transparent
        #: DOSBox's address, ``host:port``.
        self.peer = peer
        #: What we send as our RTS/DTR (DOSBox's CTS/DSR).
        self.local_lines = LineState(rts=settings.rts is not False, dtr=settings.dtr is not False)
        #: DOSBox's RTS/DTR as it last told us; ``None`` until it has (or in transparent mode).
        self.peer_lines: LineState | None = None
        #: Breaks DOSBox signalled (the DOS program set the UART's break bit).
        self.breaks = 0
        self._decoder = Decoder()

    @property
    def cts(self) -> bool | None:
        """Our CTS: DOSBox's RTS; ``None`` while unknown."""
        return None if self.peer_lines is None else self.peer_lines.rts

    @property
    def dsr(self) -> bool | None:
        """Our DSR: DOSBox's DTR; ``None`` while unknown."""
        return None if self.peer_lines is None else self.peer_lines.dtr

    async def start(self) -> None:
        """Tell DOSBox our line state, so a DOS program waiting on CTS/DSR proceeds."""
        if not self.transparent:
            await super().write(self.local_lines.to_wire())

    def _lost(self, exc: BaseException) -> PortError:
        return _with_errno(PortError(f"DOSBox link {self.port} lost: {os_reason(exc)}"), exc)

    def _at_eof(self) -> bytes:
        raise PortError(
            f"DOSBox link {self.port} lost: DOSBox at {self.peer} hung up "
            "(DOSBox closed, or its serial port was reset)"
        )

    async def read(self) -> bytes:
        """Next chunk of data bytes; line-state escapes are absorbed on the way."""
        while True:
            chunk = await super().read()
            if not chunk:
                return chunk
            data = self._decode(chunk)
            if data:
                return data

    def _decode(self, chunk: bytes) -> bytes:
        if self.transparent:
            return chunk
        data = bytearray()
        for event in self._decoder.feed(chunk):
            if isinstance(event, LineState):
                self._peer_state(event)
            else:
                data += event
        return bytes(data)

    def _peer_state(self, state: LineState) -> None:
        if state.brk:
            self.breaks += 1
        if state != self.peer_lines:
            log.debug("%s: DOSBox lines now %s", self.port, state)
        self.peer_lines = state

    async def write(self, data: bytes) -> None:
        """Write ``data`` (0xFF doubled unless transparent) in one send."""
        await super().write(data if self.transparent else encode(data))

    def set_dtr(self, value: bool) -> None:
        """Set our DTR (DOSBox's DSR) and tell DOSBox at once."""
        self._send_lines(replace(self.local_lines, dtr=value))

    def set_rts(self, value: bool) -> None:
        """Set our RTS (DOSBox's CTS) and tell DOSBox at once."""
        self._send_lines(replace(self.local_lines, rts=value))

    async def send_break(self, duration: float = 0.25) -> None:
        """Signal a break to the DOS program (it sees a NUL with the break flag)."""
        self._send_lines(replace(self.local_lines, brk=True))
        await asyncio.sleep(duration)
        self._send_lines(replace(self.local_lines, brk=False))

    def _send_lines(self, state: LineState) -> None:
        self.local_lines = state
        if self.transparent:
            log.debug("%s: transparent mode carries no line states; skipped", self.port)
            return
        if self.closed or self.transport.is_closing():
            log.debug("%s: link closed; line state %s not sent", self.port, state)
            return
        # Two bytes, written now: the transport sends them at once (or right after what
        # it still holds), which keeps an escape pair in one segment.
        self.transport.write(state.to_wire())


async def open_dosbox(
    url: str,
    settings: SerialSettings | None = None,
    *,
    on_listening: Callable[[Endpoint], None] | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> DosboxPort:
    """Open a ``dosbox://`` or ``dosbox-listen://`` URL (see docs/dosbox.md).

    ``settings`` matter only for ``dtr``/``rts`` (DOSBox ignores line speeds on its TCP
    side).  ``dosbox-listen://`` returns once DOSBox has connected; ``on_listening`` is
    called with the bound address first (useful with port 0).  Cancel the call to stop
    waiting.  Failures are :class:`~dxserial.errors.PortError` with one readable line.
    """
    settings = settings or SerialSettings()
    target = parse_dosbox_url(url)
    if target.listen:
        transport, protocol = await _accept_one(url, target.endpoint, on_listening)
    else:
        transport, protocol = await _connect(url, target.endpoint, connect_timeout)
    tune_socket(transport.get_extra_info("socket"))
    peername = transport.get_extra_info("peername")
    if isinstance(peername, tuple) and len(peername) >= 2:
        peer = format_address(str(peername[0]), int(peername[1]))
    else:
        peer = str(peername)
    link = DosboxPort(
        url, settings, transport, protocol, transparent=target.transparent, peer=peer
    )
    try:
        await link.start()
    except BaseException:
        await link.close()
        raise
    mode = "transparent" if target.transparent else f"sent {link.local_lines}"
    log.info("%s: connected to DOSBox at %s (%s)", url, peer, mode)
    return link


async def _connect(url: str, endpoint: Endpoint, timeout: float) -> Connection:
    try:
        async with asyncio.timeout(timeout):  # not wait_for: see tcp.tcp_connect
            return await open_connection(endpoint.host, endpoint.port)
    except TimeoutError:
        raise PortError(f"cannot open {url}: DOSBox did not answer within {timeout:g} s") from None
    except ConnectionRefusedError:
        raise PortError(
            f"cannot open {url}: connection refused — is DOSBox running with "
            f"'serial1=nullmodem port:{endpoint.port}'?  (DOSBox as client instead: "
            f"use dosbox-listen://{endpoint})"
        ) from None
    except socket.gaierror as exc:
        raise PortError(f"cannot open {url}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        raise PortError(f"cannot open {url}: {os_reason(exc)}") from None


async def _accept_one(
    url: str, endpoint: Endpoint, on_listening: Callable[[Endpoint], None] | None
) -> Connection:
    """Listen until DOSBox connects, then stop listening (later callers are refused)."""
    loop = asyncio.get_running_loop()
    accepted: asyncio.Future[Connection] = loop.create_future()

    def on_connection(transport: asyncio.Transport, protocol: PortProtocol) -> None:
        if accepted.done():
            log.warning("%s: a second connection refused (DOSBox is already here)", url)
            transport.close()
            return
        accepted.set_result((transport, protocol))

    try:
        server = await start_server(on_connection, endpoint.host, endpoint.port)
    except socket.gaierror as exc:
        raise PortError(f"cannot listen on {url}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortError(
                f"cannot listen on {url}: address already in use — another program "
                "(another dxserial?) is listening there; choose another port"
            ) from None
        raise PortError(f"cannot listen on {url}: {os_reason(exc)}") from None
    try:
        bound = server.sockets[0].getsockname()
        address = Endpoint(str(bound[0]), int(bound[1]))
        log.info("%s: waiting for DOSBox to connect to %s", url, address)
        if on_listening is not None:
            on_listening(address)
        return await accepted
    except BaseException:
        if accepted.done() and not accepted.cancelled():
            accepted.result()[0].close()
        raise
    finally:
        server.close()  # one cable, one peer: stop listening once DOSBox is here


def _with_errno(error: PortError, cause: BaseException) -> PortError:
    code = getattr(cause, "errno", None)
    if isinstance(code, int):
        error.errno = code
    return error


__all__ = [
    "BREAK_BIT",
    "DOSBOX_DEFAULT_PORT",
    "DTR_BIT",
    "ESCAPE",
    "RTS_BIT",
    "Decoder",
    "DosboxPort",
    "DosboxTarget",
    "LineState",
    "decode",
    "encode",
    "open_dosbox",
    "parse_dosbox_url",
]
