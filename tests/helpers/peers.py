"""Stand-in engines for end-to-end tests: a NULMODEM speaker on a pty, a DXP TCP client.

Both run the project's own sans-I/O links on real file descriptors in a thread (the
NULMODEM one) or with blocking sockets (the TCP one), so a test reads like a dialogue:
``peer.send(raw)``, ``client.expect()``.
"""

from __future__ import annotations

import os
import queue
import random
import select
import socket
import threading
import time

from dxserial.protocol.framing import FrameDropped, FrameReceived, NulFramer, nul_frame
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)


class NulModemPeer:
    """A NULMODEM engine on one end of a virtual pair, driven by a thread and a real clock."""

    def __init__(
        self,
        path: str,
        *,
        timeout: float = 0.5,
        max_attempts: int = 1000,
        seed: int | None = None,
    ) -> None:
        self.path = path
        self.link = NulModemLink(
            timeout=timeout, max_attempts=max_attempts, rng=random.Random(seed)
        )
        self.received: queue.Queue[bytes] = queue.Queue()
        self.delivered: list[bytes] = []
        self.problems: list[str] = []
        self.down: list[str] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self._stop = False
        self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def send(self, raw: bytes) -> None:
        with self._lock:
            self.link.send(raw, time.monotonic())
        os.write(self._wake_w, b"x")

    def expect(self, timeout: float = 30.0) -> bytes:
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"the NULMODEM peer received nothing within {timeout:g} s "
                f"(problems: {self.problems[-5:]})"
            ) from None

    def wait_delivered(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.delivered) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.delivered)} of {count} messages delivered")
            time.sleep(0.005)

    def _run(self) -> None:
        while not self._stop:
            with self._lock:
                deadline = self.link.next_deadline()
            wait = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            ready, _, _ = select.select([self._fd, self._wake_r], [], [], wait)
            with self._lock:
                now = time.monotonic()
                if self._wake_r in ready:
                    os.read(self._wake_r, 4096)
                if self._fd in ready:
                    try:
                        data = os.read(self._fd, 4096)
                    except (BlockingIOError, InterruptedError):
                        data = b""
                    except OSError:
                        return
                    if data:
                        self.link.receive_data(data, now)
                self.link.poll(now)
                out = self.link.data_to_send()
                events = self.link.events()
            if out:
                view = memoryview(out)
                while view:
                    try:
                        view = view[os.write(self._fd, view) :]
                    except BlockingIOError:
                        select.select([], [self._fd], [], 0.05)
                    except OSError:
                        return
            for event in events:
                if isinstance(event, MessageReceived):
                    self.received.put(event.raw)
                elif isinstance(event, MessageDelivered):
                    self.delivered.append(event.raw)
                elif isinstance(event, LinkDown):
                    self.down.append(str(event.error))
                elif isinstance(event, LinkProblem):
                    self.problems.append(str(event.error))

    def close(self) -> None:
        self._stop = True
        os.write(self._wake_w, b"x")
        self._thread.join(5)
        for fd in (self._fd, self._wake_r, self._wake_w):
            os.close(fd)

    def __enter__(self) -> NulModemPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DxpClient:
    """A DXP engine over TCP: NUL-framed messages on a blocking socket."""

    def __init__(self, host: str, port: int, *, timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.framer = NulFramer()
        self.pending: list[bytes] = []
        self.dropped: list[str] = []
        self.timeout = timeout

    def send(self, raw: bytes) -> None:
        self.sock.sendall(nul_frame(raw))

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def expect(self, timeout: float | None = None) -> bytes:
        deadline = time.monotonic() + (timeout or self.timeout)
        while not self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("the TCP client received nothing in time")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            if not data:
                raise AssertionError("the bridge closed the TCP connection")
            for event in self.framer.feed(data):
                if isinstance(event, FrameReceived):
                    self.pending.append(event.raw)
                elif isinstance(event, FrameDropped):
                    self.dropped.append(str(event.error))
        return self.pending.pop(0)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> DxpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
