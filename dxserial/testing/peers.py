"""Stand-in engines: a NULMODEM or NUL-frame speaker on a pty end, a DXP client over TCP.

Each runs the project's own sans-I/O code (:class:`NulModemLink`, :class:`NulFramer`) on
real file descriptors, in a thread, so a check reads like a dialogue: ``peer.send(raw)``,
``client.expect()``.  Each also keeps everything it received, so a long run can count it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import select
import socket
import struct
import threading
import time

from dxserial.protocol.framing import FrameDropped, FrameReceived, NulFramer, nul_frame
from dxserial.protocol.nulmodem import (
    DEFAULT_MAX_QUEUE,
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)
from dxserial.testing.fdio import write_all


class SerialPeer:
    """What a serial engine keeps of what it received, and what it accepts.

    ``raw`` is every message layer 1 handed over (NULMODEM repeats included); ``accepted``
    is what the engine keeps after dropping a message identical to the one right before
    it, as a real engine's dialogue state would; ``received`` is the same as ``raw``, to
    wait for one at a time (:meth:`expect`).  ``delivered``: our own messages that left
    (echo of the end byte seen, or written to the line).
    """

    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.accepted: list[bytes] = []
        self.received: queue.Queue[bytes] = queue.Queue()
        self.repeats = 0
        self.delivered: list[bytes] = []
        self.problems: list[str] = []
        self.down: list[str] = []
        self._last: bytes | None = None

    def record(self, raw: bytes) -> None:
        """A message arrived."""
        self.raw.append(raw)
        self.received.put(raw)
        if raw == self._last:
            self.repeats += 1
            return
        self._last = raw
        self.accepted.append(raw)

    def expect(self, timeout: float = 30.0) -> bytes:
        """The next message received, in order."""
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"the serial peer received nothing within {timeout:g} s "
                f"(problems: {self.problems[-5:]})"
            ) from None

    def note(self, events: list[LinkEvent]) -> None:
        """Keep what a layer-1 link reported: messages in, messages out, trouble."""
        for event in events:
            if isinstance(event, MessageReceived):
                self.record(event.raw)
            elif isinstance(event, MessageDelivered):
                self.delivered.append(event.raw)
            elif isinstance(event, LinkDown):
                self.down.append(str(event.error))
            elif isinstance(event, LinkProblem):
                self.problems.append(str(event.error))

    def wait_delivered(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.delivered) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.delivered)} of {count} messages delivered")
            time.sleep(0.005)

    def send(self, raw: bytes) -> None:
        raise NotImplementedError

    def send_many(self, messages: list[bytes]) -> None:
        for raw in messages:
            self.send(raw)

    def pause(self) -> None:
        """Stop reading and answering the line (a hung engine)."""
        raise NotImplementedError

    def resume(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> SerialPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NulModemPeer(SerialPeer):
    """A NULMODEM engine on a pty end: the project's echo handshake and a real clock.

    Driven by its own thread, or, with ``thread=False``, by a caller that waits on
    :attr:`fd` itself and calls :meth:`service` (to time deliveries without a thread
    switch in between).
    """

    def __init__(
        self,
        path: str,
        *,
        timeout: float = 0.5,
        max_attempts: int = 1000,
        seed: int | None = None,
        max_queue: int = DEFAULT_MAX_QUEUE,
        thread: bool = True,
    ) -> None:
        super().__init__()
        self.path = path
        self.link = NulModemLink(
            timeout=timeout, max_attempts=max_attempts, rng=random.Random(seed),
            max_queue=max_queue,
        )
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stop = False
        self._running = threading.Event()
        self._running.set()
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self._thread: threading.Thread | None = None
        if thread:
            self._thread = threading.Thread(target=self._run, name="nulmodem-peer", daemon=True)
            self._thread.start()

    def send(self, raw: bytes) -> None:
        with self._lock:
            self.link.send(raw, time.monotonic())
        if self._thread is None:
            self.service(False)
        else:
            self._wake()

    @property
    def queued(self) -> int:
        with self._lock:
            return self.link.queued

    def pause(self) -> None:
        """Stop reading and answering the line (a hung engine): no echoes, no messages."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")

    def service(self, readable: bool) -> bool:
        """Feed what the line has (if ``readable``), run the timers, write what is due and
        record the events; False once the line is gone."""
        with self._lock:
            now = time.monotonic()
            if readable:
                try:
                    data = os.read(self.fd, 4096)
                except (BlockingIOError, InterruptedError):
                    data = b""
                except OSError:
                    return False
                if data:
                    self.link.receive_data(data, now)
            self.link.poll(now)
            out = self.link.data_to_send()
            events = self.link.events()
        try:
            write_all(self.fd, out)
        except OSError:
            return False
        self.note(events)
        return True

    def _run(self) -> None:
        while not self._stop:
            if not self._running.wait(0.05):
                continue  # a hung engine: what the bridge sends waits in the pty
            with self._lock:
                deadline = self.link.next_deadline()
            wait = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            ready, _, _ = select.select([self.fd, self._wake_r], [], [], wait)
            if self._wake_r in ready:
                os.read(self._wake_r, 4096)
            if self._stop or not self._running.is_set():
                continue
            if not self.service(self.fd in ready):
                return

    def close(self) -> None:
        self._stop = True
        self._running.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(5)
        for fd in (self.fd, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> NulModemPeer:
        return self


class NulFramePeer(SerialPeer):
    """An engine that speaks NUL frames on the serial line (the bridge's ``--link nul``).

    A writer thread writes one frame at a time as fast as the line takes them (so a full
    line holds it back, as a UART would); a reader thread splits what comes in.
    """

    def __init__(self, path: str) -> None:
        super().__init__()
        self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self._out: queue.Queue[bytes] = queue.Queue()
        self._stop = False
        self._running = threading.Event()
        self._running.set()
        self._framer = NulFramer()
        self._threads = [
            threading.Thread(target=self._write_loop, name="nul-writer", daemon=True),
            threading.Thread(target=self._read_loop, name="nul-reader", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def send(self, raw: bytes) -> None:
        self._out.put(raw)

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def _write_loop(self) -> None:
        while not self._stop:
            try:
                raw = self._out.get(timeout=0.05)
            except queue.Empty:
                continue
            view = memoryview(nul_frame(raw))
            while view and not self._stop:
                try:
                    view = view[os.write(self._fd, view) :]
                except BlockingIOError:
                    select.select([], [self._fd], [], 0.05)
                except OSError:
                    return
            self.delivered.append(raw)

    def _read_loop(self) -> None:
        while not self._stop:
            if not self._running.wait(0.05):
                continue  # a hung engine: what the bridge sends waits in the pty
            ready, _, _ = select.select([self._fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self._fd, 65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return
            for event in self._framer.feed(data):
                if isinstance(event, FrameReceived):
                    self.record(event.raw)
                else:
                    self.problems.append(str(event.error))

    def close(self) -> None:
        self._stop = True
        self._running.set()
        for thread in self._threads:
            thread.join(5)
        with contextlib.suppress(OSError):
            os.close(self._fd)


class DxpClient:
    """A DXP engine over TCP: NUL frames, one message per send; a thread reads and keeps all.

    :meth:`expect` hands the messages over one by one; ``received`` keeps them all.
    :meth:`pause` stops reading (a client that no longer reads); ``rcvbuf`` / ``sndbuf``
    shrink its buffers and ``mss`` clamps the segment size it announces.  On loopback the
    segment size is 64 KiB, and Linux then sizes the bridge's send buffer at up to
    ``net.ipv4.tcp_wmem`` (4 MB) at once; with the 1460 bytes of Ethernet it is ~100 KB.
    """

    def __init__(self, host: str, port: int, *, timeout: float = 30.0,
                 rcvbuf: int | None = None, sndbuf: int | None = None,
                 mss: int | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if mss is not None:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if sndbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect((host, port))
        except BaseException:
            self.sock.close()
            raise
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(None)  # sends block while the bridge applies backpressure
        self.timeout = timeout
        self.sent = 0
        self.received: list[bytes] = []
        self.dropped: list[str] = []
        self.eof = threading.Event()
        self.reading = threading.Event()
        self.reading.set()
        self._arrived = threading.Condition()
        self._next = 0
        self._framer = NulFramer()
        self._closed = False
        self._sender: threading.Thread | None = None
        self._thread = threading.Thread(target=self._run, name="dxp-client", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed:
            if not self.reading.wait(0.05):
                continue
            try:
                ready, _, _ = select.select([self.sock], [], [], 0.05)
                if not ready:
                    continue
                data = self.sock.recv(65536)
            except (OSError, ValueError):
                break
            if not data:
                break
            events = self._framer.feed(data)
            with self._arrived:
                for event in events:
                    if isinstance(event, FrameReceived):
                        self.received.append(event.raw)
                    elif isinstance(event, FrameDropped):
                        self.dropped.append(str(event.error))
                self._arrived.notify_all()
        with self._arrived:
            self.eof.set()
            self._arrived.notify_all()

    def expect(self, timeout: float | None = None) -> bytes:
        """The next message from the bridge, in order."""
        with self._arrived:
            self._arrived.wait_for(
                lambda: len(self.received) > self._next or self.eof.is_set(),
                timeout or self.timeout,
            )
            if len(self.received) > self._next:
                self._next += 1
                return self.received[self._next - 1]
        if self.eof.is_set():
            raise AssertionError("the bridge closed the TCP connection")
        raise AssertionError("the TCP client received nothing in time")

    def closed_by_peer(self, timeout: float = 10.0) -> bool:
        """Whether the bridge closes the connection within ``timeout`` seconds."""
        return self.eof.wait(timeout)

    def pause(self) -> None:
        self.reading.clear()

    def resume(self) -> None:
        self.reading.set()

    def send(self, raw: bytes) -> None:
        self.sock.sendall(nul_frame(raw))
        self.sent += 1

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_many(self, messages: list[bytes]) -> None:
        """Send in a thread (a bridge applying backpressure may make sendall block)."""
        def run() -> None:
            with contextlib.suppress(OSError):
                for raw in messages:
                    self.send(raw)

        self._sender = threading.Thread(target=run, name="dxp-sender", daemon=True)
        self._sender.start()

    def half_close(self) -> None:
        """No more sending; keep reading until the bridge closes."""
        self.sock.shutdown(socket.SHUT_WR)

    def abort(self) -> None:
        """Hang up at once with a reset (what a crashed engine's socket does)."""
        linger = struct.pack("ii", 1, 0)  # on, 0 s: close() sends RST
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self.sock.close()
        self._thread.join(5)
        if self._sender is not None:
            self._sender.join(5)

    def __enter__(self) -> DxpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
