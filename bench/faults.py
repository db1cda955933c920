#!/usr/bin/env python3
"""Fault suite: the real bridge on a bad line and with awkward TCP peers, message by message.

``python3 bench/faults.py`` runs the long form and prints a Markdown table; bench/run.py
gets the same text from :func:`section`.  tests/test_faults.py runs a short form of each
scenario through the same functions and asserts on the figures.

The rig is what a user runs: ``dxserial vpair`` (the cable, with seeded drop/corrupt faults
and unplug/replug on its stdin) and ``dxserial bridge`` as processes; the bridge's memory
is read from ``/proc/PID/status`` (VmRSS sampled during the run, VmHWM at the end).  In
this process a NULMODEM engine speaks the echo handshake on the other end of the cable
(:class:`NulModemEngine`) and a DXP client talks to the bridge over TCP (:class:`TcpPeer`).

Each side sends a stream of distinct CHATs (``Cs00042 ...`` from the serial engine,
``Ct00042 ...`` from the TCP client): always legal, in or out of a game, so any message
that arrives can be told apart and counted.  A repeat of the previous message is NULMODEM
behaviour (the echo of the end byte was garbled, the sender sent it again); the serial
engine drops it as a real engine does and it is counted as a *repeat*, not as a second
delivery.  On TCP there is no such excuse: the bridge must hand every message over once.
A sentinel follows each stream; once it has arrived, nothing of the stream can still come.

Columns: *sent*; *delivered once* / *twice+*: distinct messages delivered once / more than
once (on the serial side after the engine's own drop of repeats), in brackets how many of
those the bridge's own trace shows to be NULMODEM repeats its duplicate rule let through
(:func:`missed_repeats`); *lost*: never delivered intact; *lost, reported*: the ones of
those the bridge logged as ``NOT delivered`` (and counted in ``lost``); *garbled*: arrived
but never sent, in brackets how many stand in for a lost message (one character garbled
both on its way and in its echo, which no echo handshake notices: NULMODEM has no
checksum); *repeats dropped*: NULMODEM repeats the serial engine dropped (tcp->serial) or
the bridge dropped as duplicates (serial->tcp); the bridge's VmHWM / VmRSS at the end.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import itertools
import json
import os
import queue
import random
import re
import select
import signal
import socket
import string
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from dxserial.game.trace import read_trace
from dxserial.protocol.framing import FrameDropped, FrameReceived, NulFramer, nul_frame
from dxserial.protocol.messages import escape
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)

PY = sys.executable
#: Echo timeout of both NULMODEM ends in these runs (a real line uses 5 s; a pty at full
#: speed answers in well under a millisecond, so this only shortens the waits).
ECHO_TIMEOUT = 0.3
#: "The link works at all": neither end gives up on a message.
MANY_ATTEMPTS = 100000
#: Segment size a stalled client announces (Ethernet's), so socket buffers are LAN-sized.
ETHERNET_MSS = 1460
_ALPHABET = string.ascii_lowercase + string.digits  # no byte one bit away from S or E
_MIB = 1024.0


# ----------------------------------------------------------------------- processes


class Lines:
    """A process's stdout read line by line in a thread, to wait for a line with a timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        with contextlib.suppress(ValueError, OSError):
            for line in stream:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, prefix: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.001, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"no line starting {prefix!r} within {timeout:g} s; "
                                   f"got {self.seen[-5:]}") from None
            if line is None:
                raise RuntimeError(f"output ended before {prefix!r}; got {self.seen[-5:]}")
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def join(self, timeout: float = 5.0) -> None:
        self._thread.join(timeout)


def stop_process(proc: subprocess.Popen[str], timeout: float = 15.0) -> int:
    """SIGTERM, wait, SIGKILL if it hangs; returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return proc.returncode


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM / VmSize of ``pid`` in KiB (empty once it has exited)."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "VmSize"):
            out[key] = int(value.split()[0])
    return out


def tcp_send_buffer_max() -> int:
    """How far Linux lets a socket's send buffer grow (``net.ipv4.tcp_wmem``, 3rd field)."""
    try:
        return int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, IndexError, ValueError):
        return 4 * 1024 * 1024


def flood_size(length: int) -> int:
    """Messages of ``length`` bytes that overflow a stalled client's socket for sure."""
    return int((1.2 * tcp_send_buffer_max() + 1024 * 1024) / (length + 1))


def open_fds(pid: int) -> int:
    """How many file descriptors ``pid`` holds (``/proc/PID/fd``)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


class Vpair:
    """``dxserial vpair`` as a process; commands go to its stdin."""

    def __init__(self, directory: Path, *args: str, name: str = "tty") -> None:
        self.path_a = str(directory / f"{name}A")
        self.path_b = str(directory / f"{name}B")
        self._err = (directory / "vpair.log").open("a")
        self.proc = subprocess.Popen(
            [PY, "-m", "dxserial", "vpair", self.path_a, self.path_b, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
        )
        assert self.proc.stdout is not None
        self.out = Lines(self.proc.stdout)
        self.out.expect("vpair ready")

    def command(self, line: str, answer: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.out.expect(answer)

    def unplug(self, end: str = "a") -> None:
        self.command(f"unplug {end}", f"unplugged {end}")

    def replug(self, end: str = "a") -> None:
        self.command(f"replug {end}", f"replugged {end}")

    def stats(self) -> dict[str, dict[str, int]]:
        data: dict[str, dict[str, int]] = json.loads(
            self.command("stats", "stats ").removeprefix("stats ")
        )
        return data

    def close(self) -> None:
        stop_process(self.proc)
        self.out.join()
        self._err.close()


class BridgeProc:
    """``dxserial bridge`` as a process, listening on a free port of 127.0.0.1, tracing."""

    def __init__(self, directory: Path, serial: str, *args: str, trace: bool = True) -> None:
        self.log_path = directory / "bridge.log"
        self.trace_path = directory / "trace.jsonl"
        self._err = self.log_path.open("a")
        tracing = ("--trace", str(self.trace_path)) if trace else ()
        self.proc = subprocess.Popen(
            [PY, "-m", "dxserial", "bridge", serial, "--listen", "127.0.0.1:0", *tracing,
             *args],
            stdout=subprocess.PIPE, stderr=self._err, text=True,
        )
        assert self.proc.stdout is not None
        self.out = Lines(self.proc.stdout)
        try:
            ready = self.out.expect("bridge ready")
        except RuntimeError as exc:
            stop_process(self.proc)
            self._err.close()
            raise RuntimeError(f"{exc}; bridge log: {self.log()[-2000:]}") from None
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
        if match is None:
            raise RuntimeError(f"unexpected ready line: {ready}")
        self.port = int(match.group(1))
        self.pid = self.proc.pid
        self.counts: dict[str, int] = {}

    def status(self) -> dict[str, int]:
        return proc_status(self.pid)

    def fds(self) -> int:
        return open_fds(self.pid)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> dict[str, int]:
        """Stop it (SIGTERM) and return its final counters."""
        stop_process(self.proc)
        self.out.join()
        self._err.close()
        found = re.findall(r"bridge stopped; counts: (\{.*\})", self.log())
        self.counts = ast.literal_eval(found[-1]) if found else {}
        return self.counts


class MemorySampler:
    """Samples a process's VmRSS every ``interval`` s in a thread; keeps the largest."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        self.pid = pid
        self.interval = interval
        self.baseline_kib = proc_status(pid).get("VmRSS", 0)
        self.max_kib = self.baseline_kib
        self.last: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> dict[str, int]:
        status = proc_status(self.pid)
        if status:
            self.last = status
            self.max_kib = max(self.max_kib, status.get("VmRSS", 0))
        return status

    def stop(self) -> None:
        """Stop sampling, with a last sample (call while the process still runs)."""
        self.sample()
        self._stop.set()
        self._thread.join(5)

    @property
    def peak_mib(self) -> float:
        """VmHWM at the last sample: the largest RSS the process ever had."""
        return self.last.get("VmHWM", self.max_kib) / _MIB

    @property
    def final_mib(self) -> float:
        return self.last.get("VmRSS", 0) / _MIB

    @property
    def growth_mib(self) -> float:
        """Largest sampled RSS above the RSS when the bridge was ready."""
        return (self.max_kib - self.baseline_kib) / _MIB


# ----------------------------------------------------------------------- the two engines


class SerialEngine:
    """What both serial engines keep: every message received, and what the engine accepts.

    ``raw`` is every message layer 1 handed over (NULMODEM repeats included); ``accepted``
    is what the engine keeps after dropping a message identical to the one right before
    it, as a real engine's dialogue state would (all stream messages are distinct).
    ``delivered`` counts our own messages that left: echo of E seen (NULMODEM) or written
    to the line (NUL frames).
    """

    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.accepted: list[bytes] = []
        self.repeats = 0
        self.delivered = 0
        self.problems = 0
        self.down: list[str] = []
        self._last: bytes | None = None

    def _received(self, raw: bytes) -> None:
        self.raw.append(raw)
        if raw == self._last:
            self.repeats += 1
            return
        self._last = raw
        self.accepted.append(raw)

    def send(self, raw: bytes) -> None:
        raise NotImplementedError

    def send_many(self, messages: list[bytes]) -> None:
        for raw in messages:
            self.send(raw)

    def pause(self) -> None:
        raise NotImplementedError

    def resume(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class NulFrameEngine(SerialEngine):
    """An engine that speaks NUL frames on the serial line (the bridge's ``--link nul``).

    A writer thread writes one frame at a time as fast as the line takes them (so a full
    line holds it back, as a UART would); a reader thread splits what comes in.
    """

    def __init__(self, path: str) -> None:
        super().__init__()
        self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self._out: queue.Queue[bytes] = queue.Queue()
        self._stop = False
        self._paused = threading.Event()
        self._framer = NulFramer()
        self._threads = [
            threading.Thread(target=self._write_loop, name="nul-writer", daemon=True),
            threading.Thread(target=self._read_loop, name="nul-reader", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def send(self, raw: bytes) -> None:
        self._out.put(nul_frame(raw))

    def pause(self) -> None:
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def _write_loop(self) -> None:
        while not self._stop:
            try:
                frame = self._out.get(timeout=0.05)
            except queue.Empty:
                continue
            view = memoryview(frame)
            while view and not self._stop:
                try:
                    view = view[os.write(self._fd, view):]
                except BlockingIOError:
                    select.select([], [self._fd], [], 0.05)
                except OSError:
                    return
            self.delivered += 1

    def _read_loop(self) -> None:
        while not self._stop:
            if self._paused.is_set():
                time.sleep(0.01)
                continue
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
                    self._received(event.raw)
                else:
                    self.problems += 1

    def close(self) -> None:
        self._stop = True
        for thread in self._threads:
            thread.join(5)
        with contextlib.suppress(OSError):
            os.close(self._fd)


class NulModemEngine(SerialEngine):
    """A NULMODEM engine on a pty: the project's echo handshake, a thread, a real clock."""

    def __init__(
        self, path: str, *, timeout: float = ECHO_TIMEOUT, seed: int = 1,
        max_attempts: int = MANY_ATTEMPTS,
    ) -> None:
        super().__init__()
        self.link = NulModemLink(
            timeout=timeout, max_attempts=max_attempts, rng=random.Random(seed),
            max_queue=1_000_000,
        )
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stop = False
        self._paused = threading.Event()
        self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._run, name="nulmodem-engine", daemon=True)
        self._thread.start()

    def pause(self) -> None:
        """Stop reading and answering the line (a hung engine): no echoes, no messages."""
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_w, b"x")

    def send(self, raw: bytes) -> None:
        with self._lock:
            self.link.send(raw, time.monotonic())
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_w, b"x")

    @property
    def queued(self) -> int:
        with self._lock:
            return self.link.queued

    def _run(self) -> None:
        while not self._stop:
            if self._paused.is_set():
                time.sleep(0.01)  # a hung engine: what the bridge sends waits in the pty
                continue
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
            view = memoryview(out)
            while view:
                try:
                    view = view[os.write(self._fd, view):]
                except BlockingIOError:
                    select.select([], [self._fd], [], 0.05)
                except OSError:
                    return
            for event in events:
                if isinstance(event, MessageReceived):
                    self._received(event.raw)
                elif isinstance(event, MessageDelivered):
                    self.delivered += 1
                elif isinstance(event, LinkDown):
                    self.down.append(str(event.error))
                elif isinstance(event, LinkProblem):
                    self.problems += 1

    def close(self) -> None:
        self._stop = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        self._thread.join(5)
        for fd in (self._fd, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)


class TcpPeer:
    """A DXP engine on TCP: NUL frames, one message per send; a thread reads and keeps all.

    ``pause()`` stops reading (a client that no longer reads); ``rcvbuf`` / ``sndbuf``
    shrink its buffers and ``mss`` clamps the segment size it announces.  On loopback the
    segment size is 64 KiB, and Linux then sizes the bridge's send buffer at up to
    ``net.ipv4.tcp_wmem`` (4 MB) at once; with the 1460 bytes of Ethernet it is ~100 KB.
    """

    def __init__(self, port: int, *, rcvbuf: int | None = None, sndbuf: int | None = None,
                 mss: int | None = None, timeout: float = 20.0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if mss is not None:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if sndbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        self.sent = 0
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(None)
        self.received: list[bytes] = []
        self.dropped: list[str] = []
        self.eof = threading.Event()
        self.reading = threading.Event()
        self.reading.set()
        self._framer = NulFramer()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="tcp-peer", daemon=True)
        self._thread.start()
        self._sender: threading.Thread | None = None

    def _run(self) -> None:
        while not self._closed:
            if not self.reading.wait(0.05):
                continue
            try:
                ready, _, _ = select.select([self.sock], [], [], 0.05)
                if not ready:
                    continue
                data = self.sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            for event in self._framer.feed(data):
                if isinstance(event, FrameReceived):
                    self.received.append(event.raw)
                elif isinstance(event, FrameDropped):
                    self.dropped.append(str(event.error))
        self.eof.set()

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

        self._sender = threading.Thread(target=run, name="tcp-sender", daemon=True)
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


# ----------------------------------------------------------------------- counting


def make_stream(tag: str, n: int, seed: int, *, longest: int = 24, length: int | None = None
                ) -> list[bytes]:
    """``n`` distinct CHATs ``C<tag><seq> <letters>``; text of lowercase letters and digits.

    No character of the text is one bit away from the start or end byte (0x02/0x03), so a
    single flipped bit cannot cut a message short; only the type byte ``C`` (0x43) can
    become an end byte, which leaves an empty message that the receiver drops.
    """
    rng = random.Random(f"{seed}:{tag}")
    out = []
    for i in range(n):
        head = f"C{tag}{i:05d}"
        size = (length - len(head) - 1) if length is not None else rng.randrange(0, longest + 1)
        pad = "".join(rng.choice(_ALPHABET) for _ in range(max(0, size)))
        out.append(f"{head} {pad}".rstrip().encode("ascii"))
    return out


def sentinel(tag: str) -> bytes:
    return f"C{tag}-end of stream".encode("ascii")


SENTINELS = (sentinel("s"), sentinel("t"))


@dataclass
class Row:
    """One direction of one scenario."""

    scenario: str
    direction: str
    sent: int
    once: int
    twice: int
    missed: int  # of ``twice``: NULMODEM repeats the bridge's rule let through
    lost: int
    reported: int
    garbled: int
    replaced: int
    repeats: int
    peak_mib: float
    final_mib: float
    growth_mib: float
    seconds: float
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.once == self.sent and self.twice == 0 and self.lost == 0


@dataclass(frozen=True)
class Tally:
    once: int
    twice: int
    lost: int
    garbled: int
    replaced: int


def tally(sent: list[bytes], got: list[bytes], ignore: tuple[bytes, ...] = SENTINELS) -> Tally:
    """How ``sent`` shows up in what arrived (``got``).

    ``garbled``: arrivals nobody sent.  ``replaced``: lost messages of which a copy with one
    wrong character arrived instead: the character was garbled on its way and its echo
    garbled back into the right one, which no echo handshake can notice.
    """
    counts = Counter(got)
    known = set(sent)
    strange = [raw for raw in got if raw not in known and raw not in ignore]
    lost = [raw for raw in sent if counts[raw] == 0]
    replaced = sum(
        1 for raw in lost
        if any(len(g) == len(raw) and sum(a != b for a, b in zip(g, raw, strict=True)) == 1
               for g in strange)
    )
    return Tally(
        once=sum(1 for raw in sent if counts[raw] == 1),
        twice=sum(1 for raw in sent if counts[raw] >= 2),
        lost=len(lost),
        garbled=len(strange),
        replaced=replaced,
    )


def missed_repeats(trace: Path, sent: list[bytes]) -> int:
    """Messages of ``sent`` (serial->tcp) that the bridge forwarded more than once, where the
    bridge's own trace shows each copy to be a NULMODEM repeat of the one before.

    A NULMODEM engine repeats a message when the echo of its end byte was garbled or lost,
    after any number of failed attempts (noise), or after the line was away (unplugged);
    it sends nothing else in between (its queue is first in, first out).  So two forwards
    of the same message with no other stream message from the serial side between them
    (garbled or invalid arrivals aside) are a repeat the bridge should have dropped
    (``Bridge._repeated_chat``): counted here.  Any other duplicate is a different fault.
    """
    if not trace.exists():
        return 0
    wanted = {escape(raw) for raw in sent}
    records = [rec for rec in read_trace(trace)
               if rec.get("kind") == "message" and rec.get("direction") == "serial->tcp"
               and rec.get("raw") in wanted]
    forwarded: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        if rec.get("action") == "forwarded":
            forwarded.setdefault(rec["raw"], []).append(i)

    def repeat(raw: str, i: int, j: int) -> bool:
        return all(records[k]["raw"] == raw for k in range(i + 1, j))

    return sum(
        1 for raw, places in forwarded.items()
        if len(places) > 1 and all(repeat(raw, i, j) for i, j in itertools.pairwise(places))
    )


def reported_lost(log: str, direction: str) -> int:
    """``NOT delivered`` lines the bridge logged for ``direction``."""
    return sum(1 for line in log.splitlines()
               if f"{direction}: message" in line and "NOT delivered" in line)


def wait_for(done: Callable[[], bool], progress: Callable[[], object], *, stall: float,
             limit: float) -> bool:
    """Wait until ``done()``; give up when ``progress()`` has not changed for ``stall``
    seconds or after ``limit`` seconds.  Returns ``done()``."""
    start = last_change = time.monotonic()
    last = progress()
    while not done():
        now = time.monotonic()
        current = progress()
        if current != last:
            last, last_change = current, now
        if now - last_change > stall or now - start > limit:
            return done()
        time.sleep(0.01)
    return True


# ----------------------------------------------------------------------- the rig


@dataclass
class Rig:
    directory: Path
    vpair: Vpair
    bridge: BridgeProc
    engine: SerialEngine
    memory: MemorySampler
    started: float

    def client(self, **kwargs: Any) -> TcpPeer:
        return TcpPeer(self.bridge.port, **kwargs)


@contextlib.contextmanager
def rig(vpair_args: tuple[str, ...] = (), bridge_args: tuple[str, ...] = (), *,
        seed: int = 1, link: str = "nulmodem") -> Iterator[Rig]:
    """vpair + bridge processes, and a serial engine on end B; all gone afterwards."""
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dxfaults-")))
        vpair = Vpair(directory, *vpair_args)
        stack.callback(vpair.close)
        bridge = BridgeProc(
            directory, vpair.path_a, "--link", link, "--echo-timeout", str(ECHO_TIMEOUT),
            "--max-attempts", str(MANY_ATTEMPTS), *bridge_args,
        )
        stack.callback(bridge.stop)
        engine: SerialEngine = (
            NulModemEngine(vpair.path_b, seed=seed) if link == "nulmodem"
            else NulFrameEngine(vpair.path_b)
        )
        stack.callback(engine.close)
        memory = MemorySampler(bridge.pid)
        stack.callback(memory.stop)
        yield Rig(directory, vpair, bridge, engine, memory, time.monotonic())


def finish(r: Rig, scenario: str, s2t: tuple[list[bytes], list[bytes]],
           t2s: list[bytes], note: str = "", **extra: Any) -> list[Row]:
    """Stop the bridge and count both directions.

    ``s2t``: (what the serial engine sent, what all TCP clients received); ``t2s``: what the
    TCP clients sent (the serial engine's receipts are in ``r.engine``).
    """
    r.memory.stop()
    seconds = time.monotonic() - r.started
    counts = r.bridge.stop()
    log = r.bridge.log()
    mem = (r.memory.peak_mib, r.memory.final_mib, r.memory.growth_mib, seconds)
    rows = []
    sent, got = s2t
    t = tally(sent, got)
    missed = missed_repeats(r.bridge.trace_path, sent)
    rows.append(Row(scenario, "serial->tcp", len(sent), t.once, t.twice, missed, t.lost,
                    reported_lost(log, "serial->tcp"), t.garbled, t.replaced,
                    counts.get("duplicates", 0), *mem, note, dict(extra, counts=counts)))
    t = tally(t2s, r.engine.accepted)
    rows.append(Row(scenario, "tcp->serial", len(t2s), t.once, t.twice, 0, t.lost,
                    reported_lost(log, "tcp->serial"), t.garbled, t.replaced,
                    r.engine.repeats, *mem, note, dict(extra, counts=counts)))
    return rows


def exchange(r: Rig, client: TcpPeer, s2t: list[bytes], t2s: list[bytes], *,
             stall: float, limit: float, during: Callable[[], None] | None = None) -> bool:
    """Both streams at once, each followed by its sentinel; wait for both sentinels."""
    r.engine.send_many([*s2t, sentinel("s")])
    client.send_many([*t2s, sentinel("t")])
    if during is not None:
        during()
    return wait_for(
        lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
        lambda: (len(client.received), len(r.engine.raw)),
        stall=stall, limit=limit,
    )


# ----------------------------------------------------------------------- scenarios


def line_faults(n: int, *, drop: float = 0.0, corrupt: float = 0.0, seed: int = 7,
                attempts: int | None = None, longest: int = 24, stall: float = 60.0,
                limit: float = 1800.0) -> list[Row]:
    """Both streams at once over a line that drops and/or corrupts bytes (seeded)."""
    name = "clean line" if not (drop or corrupt) else " + ".join(
        f"{what} {rate * 100:g} %" for what, rate in (("drop", drop), ("corrupt", corrupt)) if rate
    )
    vargs: tuple[str, ...] = ()
    if drop or corrupt:
        vargs = ("--drop", str(drop), "--corrupt", str(corrupt), "--seed", str(seed))
    bargs: tuple[str, ...] = ()
    if attempts is not None:
        name += f", bridge --max-attempts {attempts}"
        bargs = ("--max-attempts", str(attempts))
    s2t = make_stream("s", n, seed, longest=longest)
    t2s = make_stream("t", n, seed, longest=longest)
    with rig(vargs, bargs, seed=seed) as r:
        client = r.client()
        try:
            complete = exchange(r, client, s2t, t2s, stall=stall, limit=limit)
            stats = r.vpair.stats()
        finally:
            client.close()
        hit = {k: sum(stats[d][k] for d in stats) for k in ("dropped", "corrupted")}
        note = ", ".join(f"{v} bytes {k}" for k, v in hit.items() if v) or "no faults"
        return finish(r, name, (s2t, client.received), t2s, note=note, complete=complete, **hit)


def unplug_replug(n: int, *, cycles: int = 4, down: float = 0.6, every: float = 1.5,
                  seed: int = 8, stall: float = 30.0, limit: float = 900.0) -> list[Row]:
    """The bridge's serial end pulled out and put back ``cycles`` times while both streams run.

    ``down`` seconds out, then ``every - down`` seconds in.
    """
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    done = 0
    with rig(seed=seed) as r:
        client = r.client()

        def pulls() -> None:
            nonlocal done
            for _ in range(cycles):
                time.sleep(every - down)  # scenario timing: the cable is in
                r.vpair.unplug("a")
                time.sleep(down)  # scenario timing: the cable is out
                r.vpair.replug("a")
                done += 1

        try:
            complete = exchange(r, client, s2t, t2s, stall=stall, limit=limit, during=pulls)
        finally:
            client.close()
        back = r.bridge.log().count("is back;")
        return finish(r, f"serial end unplugged {cycles}x for {down:g} s",
                      (s2t, client.received), t2s,
                      note=f"{back} reopens by the bridge", reopens=back, cycles=done,
                      complete=complete)


def tcp_hangups(n: int, *, clients: int = 4, abrupt: bool = False, seed: int = 9,
                stall: float = 30.0, limit: float = 900.0) -> list[Row]:
    """TCP clients that hang up in the middle of a message, one after another.

    The serial engine streams all along.  Each client sends its share, then the first
    part of a message, then hangs up: ``abrupt=False`` shuts its sending side and reads
    until the bridge closes (everything the bridge wrote is read); ``abrupt=True`` resets
    the connection at once, so whatever the bridge had already written into the socket
    is gone with it.  TCP gives no receipt, so no bridge can know; those are counted as
    lost and not reported.  A last client then takes the rest.
    """
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    share = max(1, n // (clients + 1))
    received: list[bytes] = []
    with rig(seed=seed) as r:
        r.engine.send_many([*s2t, sentinel("s")])
        for k in range(clients):
            client = r.client()
            try:
                mine = t2s[k * share:(k + 1) * share]
                for raw in mine:
                    client.send(raw)
                # its own messages reach the serial engine, and some of the serial stream
                # reaches it, before it hangs up
                wait_for(lambda m=mine: set(m) <= set(r.engine.accepted),  # type: ignore[misc]
                         lambda: len(r.engine.raw), stall=stall, limit=limit)
                want = min(len(s2t), (k + 1) * share)
                wait_for(lambda c=client, w=want: len(received) + len(c.received) >= w,  # type: ignore[misc]
                         lambda c=client: len(c.received), stall=stall, limit=limit)
                client.send_bytes(f"Ct-cut{k} half a mess".encode())
                if abrupt:
                    client.abort()
                else:
                    client.half_close()
                    client.eof.wait(stall)
                # one client at a time: the next one connects once the bridge let go
                wait_for(lambda k=k: r.bridge.log().count("went away") > k,  # type: ignore[misc]
                         lambda: 0, stall=stall, limit=limit)
            finally:
                client.close()
                received.extend(client.received)
        last = r.client()
        try:
            last.send_many([*t2s[clients * share:], sentinel("t")])
            complete = wait_for(lambda: sentinel("s") in received + last.received
                                and sentinel("t") in r.engine.raw,
                     lambda: (len(last.received), len(r.engine.raw)), stall=stall, limit=limit)
        finally:
            last.close()
            received.extend(last.received)
        cut = r.bridge.log().count("tcp->serial: peer hung up mid-message")
        how = "reset" if abrupt else "half-close"
        return finish(r, f"{clients} TCP clients hang up mid-message ({how})",
                      (s2t, received), t2s,
                      note=f"{cut} of {clients} cut-off messages reported", cut_reported=cut,
                      clients=clients, complete=complete)


def idle_client(n: int, *, idle: float = 10.0, seed: int = 10, stall: float = 30.0,
                limit: float = 900.0) -> list[Row]:
    """A TCP client that sends nothing for ``idle`` seconds between two halves of its stream.

    Meanwhile the serial engine sends a CHAT now and then (the client reads them), so the
    line is idle most of the time too.  The bridge must neither time the client out nor
    lose or repeat anything.
    """
    s2t, t2s = make_stream("s", n, seed), make_stream("t", n, seed)
    half = n // 2
    trickle = max(1, min(n - half, int(idle // 2)))
    with rig(seed=seed) as r:
        client = r.client()
        try:
            client.send_many(t2s[:half])
            r.engine.send_many(s2t[:half])
            wait_for(lambda: len(client.received) >= half and len(r.engine.accepted) >= half,
                     lambda: (len(client.received), len(r.engine.raw)), stall=stall, limit=limit)
            quiet_from = time.monotonic()
            for raw in s2t[half:half + trickle]:
                time.sleep(idle / (trickle + 1))  # scenario timing: the client stays silent
                r.engine.send(raw)
            time.sleep(max(0.0, quiet_from + idle - time.monotonic()))
            kept = not client.eof.is_set() and "went away" not in r.bridge.log()
            complete = exchange(r, client, s2t[half + trickle:], t2s[half:], stall=stall,
                                limit=limit)
        finally:
            client.close()
        return finish(r, f"TCP client silent for {idle:g} s", (s2t, client.received), t2s,
                      note="connection kept" if kept else "connection LOST", kept=kept,
                      complete=complete)


def slow_reader(n: int, *, length: int = 100, link: str = "nulmodem", rcvbuf: int = 4096,
                mss: int | None = ETHERNET_MSS, seed: int = 11, settle: float = 3.0,
                stall: float = 30.0, limit: float = 1800.0) -> list[Row]:
    """A TCP client that stops reading while the serial engine sends ``n`` long CHATs.

    The bridge must not buffer without bound: once the socket is full it stops taking
    messages off the serial line, and the serial engine waits (NULMODEM: for its echoes;
    NUL frames: in a full line).  ``taken`` is how many the engine got rid of while the
    client did not read (``settle`` seconds without progress ends that phase): socket
    buffers plus the bridge's queue, if it works.  The client announces an Ethernet-sized
    segment (``mss``) so that the bridge's send buffer is sized as on a LAN; with
    ``mss=None`` (loopback) the kernel lets it hold ~4 MB first, which a NULMODEM line at
    pty speed takes minutes to fill.  Then the client reads again and everything must
    arrive once.
    """
    s2t = make_stream("s", n, seed, length=length)
    t2s = make_stream("t", max(1, n // 100), seed)
    with rig(seed=seed, link=link) as r:
        client = r.client(rcvbuf=rcvbuf, mss=mss)
        try:
            client.pause()
            r.engine.send_many([*s2t, sentinel("s")])
            wait_for(lambda: r.engine.delivered > n, lambda: r.engine.delivered,
                     stall=settle, limit=limit)
            taken = min(n, r.engine.delivered)
            r.memory.sample()
            stalled_growth = r.memory.growth_mib
            client.resume()
            complete = exchange(r, client, [], t2s, stall=stall, limit=limit)
        finally:
            client.close()
        where = "loopback MSS" if mss is None else f"MSS {mss}"
        return finish(r, f"TCP client stops reading, {link} line, {where} ({n} x {length} B)",
                      (s2t, client.received), t2s,
                      note=f"engine got {taken} of {n} out while the client did not read; "
                           f"RSS +{stalled_growth:.1f} MiB",
                      taken=taken, stalled_growth_mib=stalled_growth, complete=complete)


def serial_hangs(n: int, *, length: int = 100, link: str = "nul", sndbuf: int = 4096,
                 mss: int | None = ETHERNET_MSS, seed: int = 12, settle: float = 3.0,
                 stall: float = 30.0, limit: float = 1800.0) -> list[Row]:
    """The serial engine stops reading (hangs) while the TCP client sends ``n`` long CHATs.

    The other direction of backpressure: the bridge's serial queue fills, it stops reading
    TCP, and the client's sends block.  ``taken`` is how many the client got rid of while
    the engine hung (bounded by socket buffers plus the bridge's queue), then the engine
    wakes up and everything must arrive once.
    """
    t2s = make_stream("t", n, seed, length=length)
    s2t = make_stream("s", max(1, n // 100), seed)
    with rig(seed=seed, link=link) as r:
        client = r.client(sndbuf=sndbuf, mss=mss)
        try:
            r.engine.pause()
            client.send_many([*t2s, sentinel("t")])
            wait_for(lambda: client.sent > n, lambda: client.sent, stall=settle, limit=limit)
            taken = min(n, client.sent)
            r.memory.sample()
            stalled_growth = r.memory.growth_mib
            r.engine.resume()
            r.engine.send_many([*s2t, sentinel("s")])
            complete = wait_for(
                lambda: sentinel("s") in client.received and sentinel("t") in r.engine.raw,
                lambda: (len(client.received), len(r.engine.raw)), stall=stall, limit=limit,
            )
        finally:
            client.close()
        return finish(r, f"serial engine hangs, {link} line ({n} x {length} B from TCP)",
                      (s2t, client.received), t2s,
                      note=f"client got {taken} of {n} out while the engine hung; "
                           f"RSS +{stalled_growth:.1f} MiB",
                      taken=taken, stalled_growth_mib=stalled_growth, complete=complete)


def chat_repeat(gap: float = 3.0, *, crossed: bool = False, seed: int = 13) -> list[Row]:
    """A NULMODEM engine repeats a CHAT whose end-byte echo it missed; deterministic.

    The engine's CHAT reaches the bridge; the engine takes the echo of its end byte for
    garbled and starts over.  With ``crossed``, a message from the TCP client reaches the
    engine first (the engine echoes it: the line is free for the bridge, whose message
    arrived complete).  Then noise spoils the engine's attempts for ``gap`` seconds (each a
    start byte and a few characters, then silence), then the whole CHAT gets through again,
    then a sentinel.  The bridge must drop the repeat.  Written byte by byte on the pty,
    so it plays out the same way every time.
    """
    msg, follow, other = b"Cs00000 repeat me", sentinel("s"), b"Ct00000 crossing"
    start, end = b"\x02", b"\x03"
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dxfaults-")))
        vpair = Vpair(directory)
        stack.callback(vpair.close)
        bridge = BridgeProc(directory, vpair.path_a, "--echo-timeout", str(ECHO_TIMEOUT),
                            "--max-attempts", str(MANY_ATTEMPTS))
        stack.callback(bridge.stop)
        memory = MemorySampler(bridge.pid)
        stack.callback(memory.stop)
        fd = os.open(vpair.path_b, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        stack.callback(os.close, fd)
        client = TcpPeer(bridge.port)
        stack.callback(client.close)
        engine = SerialEngine()  # what the engine received
        began = time.monotonic()
        os.write(fd, start + msg + end)
        wait_for(lambda: msg in client.received, lambda: 0, stall=10, limit=10)
        _read_all(fd, 0.2)  # the bridge's echoes
        if crossed:
            client.send(other)
            engine._received(_echo_one_message(fd, start[0], end[0], timeout=10.0))
        until = time.monotonic() + gap
        while time.monotonic() < until:
            os.write(fd, start + msg[:5])  # an attempt that noise spoils: silence follows
            time.sleep(min(2 * ECHO_TIMEOUT, max(0.0, until - time.monotonic())))
        os.write(fd, start + msg + end)
        os.write(fd, start + follow + end)
        wait_for(lambda: follow in client.received, lambda: 0, stall=10, limit=10)
        what = " and a TCP message crossed" if crossed else ""
        return finish(Rig(directory, vpair, bridge, engine, memory, began),
                      f"CHAT repeated by the engine after {gap:g} s of failed attempts{what}",
                      ([msg], list(client.received)), [other] if crossed else [],
                      note="deterministic reproducer")[: 2 if crossed else 1]


def _read_all(fd: int, quiet: float) -> bytes:
    """What ``fd`` delivers until it has been silent for ``quiet`` seconds."""
    got = bytearray()
    while select.select([fd], [], [], quiet)[0]:
        try:
            got += os.read(fd, 4096)
        except BlockingIOError:
            continue
    return bytes(got)


def _echo_one_message(fd: int, start: int, end: int, timeout: float) -> bytes:
    """Receive one NULMODEM message on ``fd``, echoing each byte as the handshake wants."""
    deadline = time.monotonic() + timeout
    body = bytearray()
    begun = False
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], 0.05)[0]:
            continue
        for b in os.read(fd, 1):
            os.write(fd, bytes([b]))
            if b == start:
                begun, body = True, bytearray()
            elif b == end and begun:
                return bytes(body)
            elif begun:
                body.append(b)
    raise RuntimeError(f"no message within {timeout:g} s (got {bytes(body)!r})")


# ----------------------------------------------------------------------- report


def table(rows: list[Row]) -> str:
    lines = [
        "| scenario | direction | sent | delivered once | twice+ (missed repeats) | lost "
        "| lost, reported "
        "| garbled (replacing a lost one) | repeats dropped | bridge RSS peak / final MiB "
        "| s | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.scenario} | {row.direction} | {row.sent} | {row.once} "
            f"| {row.twice} ({row.missed}) | {row.lost} | {row.reported} "
            f"| {row.garbled} ({row.replaced}) | {row.repeats} "
            f"| {row.peak_mib:.1f} / {row.final_mib:.1f} | {row.seconds:.0f} | {row.note} |"
        )
    return "\n".join(lines)


Plan = list[tuple[str, Callable[[], list[Row]]]]


def long_plan(n: int, rates: list[float]) -> Plan:
    """Every scenario at full size; ``n`` messages per direction where a line is fast."""
    plan: Plan = [("clean line", lambda: line_faults(n))]
    for rate in rates:
        # 5 % of the bytes: a 20-byte message needs ~40 byte transfers, so most attempts
        # fail; fewer and shorter messages keep the run in minutes.
        m, longest = (n, 24) if rate < 0.05 else (max(10, n // 10), 6)
        for kind in ("drop", "corrupt"):
            plan.append((f"{kind} {rate:g}", lambda r=rate, m=m, k=kind, lo=longest:
                         line_faults(m, longest=lo, **{k: r})))
    top = max(rates) if rates else 0.05
    plan += [
        (f"drop {top:g} + corrupt, bridge gives up after 5",
         lambda: line_faults(max(10, n // 10), drop=top, corrupt=top, longest=6, attempts=5)),
        ("unplug", lambda: unplug_replug(n, cycles=6, down=1.0, every=2.5)),
        ("hang-up half-close", lambda: tcp_hangups(n, clients=5)),
        ("hang-up reset", lambda: tcp_hangups(n, clients=5, abrupt=True)),
        ("idle", lambda: idle_client(min(n, 100), idle=120.0)),
        ("slow reader nulmodem", lambda: slow_reader(2000)),
        ("slow reader nul", lambda: slow_reader(20000, length=120, link="nul")),
        ("slow reader nul loopback",
         lambda: slow_reader(2 * flood_size(120), length=120, link="nul", mss=None)),
        ("serial hangs nul", lambda: serial_hangs(20000, length=120, link="nul")),
        ("serial hangs nulmodem", lambda: serial_hangs(2000, link="nulmodem")),
        ("repeat after slow retries", lambda: chat_repeat(3.0)),
        ("repeat after a crossing message", lambda: chat_repeat(0.6, crossed=True)),
    ]
    return plan


def run_plan(plan: Plan, only: list[str] | None = None, echo: bool = True) -> list[Row]:
    rows: list[Row] = []
    for name, func in plan:
        if only and not any(o in name for o in only):
            continue
        if echo:
            print(f"faults: {name} ...", file=sys.stderr, flush=True)
        got = func()
        rows += got
        if echo:
            for row in got:
                print(f"faults:   {row.direction}: sent {row.sent} once {row.once} "
                      f"twice {row.twice} lost {row.lost} ({row.seconds:.0f} s) {row.note}",
                      file=sys.stderr, flush=True)
    return rows


NOTES = (
    "Rig: `dxserial vpair` (seeded `--drop`/`--corrupt` per byte and direction; `unplug a` / "
    "`replug a` on its stdin) and `dxserial bridge --echo-timeout {t} --max-attempts {a}` as "
    "processes; in the bench process a NULMODEM engine (echo timeout {t} s, never gives up) "
    "on end B and DXP clients over TCP on 127.0.0.1. Both sides stream distinct CHATs at "
    "once, so the half-duplex line also sees collisions. *delivered once* on the serial "
    "side counts after the engine's own drop of a message identical to the one before it; "
    "*repeats dropped* are those NULMODEM repeats (tcp->serial) or the duplicates the bridge "
    "dropped (serial->tcp). *garbled*: arrived but never sent (in brackets: in place of a "
    "lost message, a character garbled on the way and its echo garbled back the same way: "
    "NULMODEM has no checksum). Memory: the bridge's VmHWM and its VmRSS at the end. A reset "
    "TCP connection takes with it what the bridge had already written into the socket (TCP "
    "gives no receipt), so those losses are not reported by any bridge."
)


def section(args: argparse.Namespace | None = None) -> str:
    """The long form as Markdown, for bench/run.py."""
    n = getattr(args, "fault_messages", None) or 300
    rates = getattr(args, "fault_rates", None) or [0.001, 0.01, 0.05]
    rows = run_plan(long_plan(n, rates), getattr(args, "fault_only", None))
    return table(rows) + "\n\n" + NOTES.format(t=ECHO_TIMEOUT, a=MANY_ATTEMPTS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=300, help="messages per direction")
    ap.add_argument("--rates", type=float, nargs="+", default=[0.001, 0.01, 0.05],
                    help="drop and corrupt probabilities per byte")
    ap.add_argument("--only", action="append", help="scenarios whose name contains this")
    ap.add_argument("--json", help="also write the rows as JSON lines to this file")
    args = ap.parse_args()
    rows = run_plan(long_plan(args.messages, args.rates), args.only)
    print(table(rows) + "\n\n" + NOTES.format(t=ECHO_TIMEOUT, a=MANY_ATTEMPTS))
    if args.json:
        with open(args.json, "w") as out:
            for row in rows:
                out.write(json.dumps(row.__dict__) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
