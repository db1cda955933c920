"""Test helpers for real ptys, sockets and subprocesses: wait on conditions, never sleep."""

from __future__ import annotations

import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
    """Poll ``predicate`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.005)


def open_raw(path: str) -> int:
    """Open a vpair end as a plain program would (the relay already made it raw)."""
    return os.open(path, os.O_RDWR | os.O_NOCTTY)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exactly(fd: int, n: int, timeout: float = 5.0) -> bytes:
    """Read ``n`` bytes from ``fd``, failing (with what arrived) after ``timeout``."""
    got = bytearray()
    deadline = time.monotonic() + timeout
    while len(got) < n:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(0.0, left))
        if not ready:
            raise AssertionError(f"timed out: {len(got)} of {n} bytes arrived")
        chunk = os.read(fd, n - len(got))
        if not chunk:
            raise AssertionError(f"end of file after {len(got)} of {n} bytes")
        got += chunk
    return bytes(got)


def read_available(fd: int) -> bytes:
    """Everything ``fd`` has right now, without waiting."""
    got = bytearray()
    while select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        got += chunk
    return bytes(got)


class LineReader:
    """Collects a stream's lines in a thread so a test can wait for one with a timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def join(self, timeout: float = 5.0) -> None:
        """Wait for the stream to end (the process exited)."""
        self._thread.join(timeout)

    def expect(self, prefix: str, timeout: float = 10.0) -> str:
        """The next line that starts with ``prefix`` (earlier lines are kept in ``lines``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._queue.get(timeout=max(0.001, left))
            except queue.Empty:
                raise AssertionError(
                    f"no line starting {prefix!r} within {timeout:g} s; got {self.lines}"
                ) from None
            if line is None:
                raise AssertionError(f"stream ended before {prefix!r}; got {self.lines}")
            self.lines.append(line)
            if line.startswith(prefix):
                return line


class Cli:
    """``python -m dxserial ARGS`` as a user runs it, with its stdout read line by line.

    Use as a context manager: whatever happens in the test, the process is gone at the
    end and its pipes are closed.
    """

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dxserial", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.out = LineReader(self.proc.stdout)

    def send(self, line: str) -> None:
        """One line on the process's stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        """Signal the process and return its exit code (it is killed if it hangs)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"process ignored signal {sig} for {timeout:g} s") from None
        return self.proc.returncode

    def wait(self, timeout: float = 10.0) -> int:
        return self.proc.wait(timeout)

    def stderr(self) -> str:
        """All of stderr; only once the process has exited."""
        assert self.proc.stderr is not None and self.proc.poll() is not None
        return self.proc.stderr.read()

    def __enter__(self) -> Cli:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.out.join()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
