"""Reading and writing a pty end (or any file descriptor) as a plain program would, with
timeouts, so that a line that stays silent fails a check instead of hanging it."""

from __future__ import annotations

import os
import select
import time


def open_raw(path: str) -> int:
    """Open a vpair end as a plain program would (the relay already made it raw)."""
    return os.open(path, os.O_RDWR | os.O_NOCTTY)


def write_all(fd: int, data: bytes) -> None:
    """All of ``data``, waiting while the line is full (``fd`` may be non-blocking)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [], 0.05)


def read_exactly(fd: int, n: int, timeout: float = 20.0) -> bytes:
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


def read_until_quiet(fd: int, quiet: float) -> bytes:
    """What ``fd`` delivers until it has been silent for ``quiet`` seconds."""
    got = bytearray()
    while select.select([fd], [], [], quiet)[0]:
        try:
            got += os.read(fd, 4096)
        except BlockingIOError:
            continue
    return bytes(got)
