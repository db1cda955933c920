"""Processes as a user runs them: waits on conditions (never fixed sleeps), ``python -m
dxserial`` with its stdout read line by line, and what /proc says about a process."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

PY = sys.executable
_MIB = 1024.0


def wait_until(
    predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition"
) -> None:
    """Poll ``predicate`` until it holds; fail (AssertionError) after ``timeout`` seconds.

    The bound only ends a wait that would never end: it costs nothing when the condition
    comes, so it is long enough for a loaded machine (5 s was not, with both CPUs busy)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.005)


def wait_for(done: Callable[[], bool], progress: Callable[[], object], *, stall: float,
             limit: float) -> bool:
    """Wait until ``done()``; give up when ``progress()`` has not changed for ``stall``
    seconds or after ``limit`` seconds.  Returns ``done()``: a long run that stops making
    progress is a figure to report, not a reason to wait for ever."""
    watch = Progress(progress, stall, limit, time.monotonic())
    while not done():
        if watch.gave_up(time.monotonic()):
            return done()
        time.sleep(0.01)
    return True


class Progress:
    """Whether a wait should give up: ``progress()`` still for ``stall`` s, or ``limit``
    s gone since ``start`` (clock values passed in, so a coroutine's wait can use it)."""

    def __init__(self, progress: Callable[[], object], stall: float, limit: float,
                 start: float) -> None:
        self._progress, self._stall, self._limit = progress, stall, limit
        self._start = self._changed = start
        self._last = progress()

    def gave_up(self, now: float) -> bool:
        current = self._progress()
        if current != self._last:
            self._last, self._changed = current, now
        return now - self._changed > self._stall or now - self._start > self._limit


class LineReader:
    """Collects a stream's lines in a thread so a caller can wait for one with a timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._ended = False
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        with contextlib.suppress(ValueError, OSError):  # the stream was closed under us
            for line in stream:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def join(self, timeout: float = 5.0) -> None:
        """Wait for the stream to end (the process exited)."""
        self._thread.join(timeout)

    def expect(self, prefix: str, timeout: float = 30.0) -> str:
        """The next line that starts with ``prefix`` (earlier lines are kept in ``lines``)."""
        deadline = time.monotonic() + timeout
        while True:
            if self._ended:
                raise AssertionError(f"stream ended before {prefix!r}; got {self.lines[-20:]}")
            left = deadline - time.monotonic()
            try:
                line = self._queue.get(timeout=max(0.001, left))
            except queue.Empty:
                raise AssertionError(
                    f"no line starting {prefix!r} within {timeout:g} s; got {self.lines[-20:]}"
                ) from None
            if line is None:
                self._ended = True
                continue
            self.lines.append(line)
            if line.startswith(prefix):
                return line

    def drain(self, timeout: float = 5.0) -> list[str]:
        """Wait for the stream to end and keep every line left in ``lines``; returns them all."""
        self.join(timeout)
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return self.lines
            if line is None:
                self._ended = True
            else:
                self.lines.append(line)


def stop_process(proc: subprocess.Popen[str], timeout: float = 15.0) -> int:
    """SIGTERM, wait, SIGKILL if it hangs; close its pipes; returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return proc.returncode


class Cli:
    """``python -m dxserial ARGS`` as a user runs it, with its stdout read line by line.

    stderr goes to a pipe (:meth:`stderr` once it has exited) or, for long runs that log
    much, appended to the file ``stderr_path``.  Use as a context manager (the process
    is killed at the end) or call :meth:`close` (it is asked to stop first).
    """

    def __init__(self, *args: str, stderr_path: Path | None = None) -> None:
        self._err_file = stderr_path.open("a") if stderr_path is not None else None
        self.proc = subprocess.Popen(
            [PY, "-m", "dxserial", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err_file if self._err_file is not None else subprocess.PIPE,
            text=True,
        )
        self.pid = self.proc.pid
        assert self.proc.stdout is not None
        self.out = LineReader(self.proc.stdout)

    def send(self, line: str) -> None:
        """One line on the process's stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Signal the process and return its exit code (it is killed if it hangs; the bound is
        long because a loaded machine, DOSBox emulating a 286 beside it, took over 10 s)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"process ignored signal {sig} for {timeout:g} s") from None
        return self.proc.returncode

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def stderr(self) -> str:
        """All of stderr; only once the process has exited."""
        assert self.proc.stderr is not None and self.proc.poll() is not None
        return self.proc.stderr.read()

    def status(self) -> dict[str, int]:
        return proc_status(self.pid)

    def fds(self) -> int:
        return open_fds(self.pid)

    def close(self, timeout: float = 15.0) -> int:
        """Ask it to stop (SIGTERM; SIGKILL after ``timeout``), read its last lines, close
        everything; returns the exit code."""
        code = stop_process(self.proc, timeout)
        self._cleanup()
        return code

    def _cleanup(self) -> None:
        self.out.join()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self._err_file is not None:
            self._err_file.close()

    def __enter__(self) -> Cli:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._cleanup()


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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    """Someone listens on TCP ``port`` (read from /proc: connecting to find out would be a
    session of its own for a bridge, and would take DOSBox's only connection)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def open_fds(pid: int) -> int:
    """How many file descriptors ``pid`` holds (``/proc/PID/fd``)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


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
        if self._stop.is_set():
            return
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
        """Largest sampled RSS above the RSS when sampling began."""
        return (self.max_kib - self.baseline_kib) / _MIB


def group_members(pgid: int) -> list[int]:
    """The pids of the processes still in process group ``pgid`` (from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members
