"""A real Dask scheduler and real worker processes on 127.0.0.1, for tests and bench/:
started as a user starts them (``python -m dask scheduler`` / ``dask worker``), waited
for on their own log lines, and stopped (or killed with what they started) by pid."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from dxserial.testing.process import PY, LineReader, free_port, stop_process

__all__ = ["DaskRig", "descendants"]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        todo += kids
    return found


def _await_line(reader: LineReader, text: str, timeout: float) -> str:
    """The next line (Dask's lines start with a time stamp) that holds ``text``."""
    deadline = time.monotonic() + timeout
    while True:
        line = reader.expect("", timeout=max(0.01, deadline - time.monotonic()))
        if text in line:
            return line


class DaskRig:
    """One scheduler and named workers; use as a context manager (everything is stopped)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler = self._spawn("scheduler", "--host", "127.0.0.1", "--port",
                                     str(self.port), "--dashboard-address", "127.0.0.1:0")
        self._logs = {"scheduler": self.scheduler[1]}
        self.workers: dict[str, tuple[subprocess.Popen[str], LineReader]] = {}
        try:
            _await_line(self.scheduler[1], "Scheduler at:", 60)
        except BaseException:
            stop_process(self.scheduler[0], 10)  # nothing left behind by a failed start
            raise

    def _spawn(
        self, *args: str, tmp: Path | None = None, env_extra: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[str], LineReader]:
        env = {**os.environ, **(env_extra or {})}
        if tmp is not None:  # a worker's games' folders, where a test can look at them
            tmp.mkdir(parents=True, exist_ok=True)
            env["TMPDIR"] = str(tmp)
        proc = subprocess.Popen([PY, "-m", "dask", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, cwd=self.folder, env=env)
        assert proc.stderr is not None
        return proc, LineReader(proc.stderr)

    def add_worker(self, name: str, threads: int = 1, resources: str = "",
                   env: dict[str, str] | None = None) -> None:
        """A worker process (no nanny: killing it loses it) that plays ``threads`` games."""
        self.add_workers({name: resources}, threads, env)

    def add_workers(self, names: dict[str, str], threads: int = 1,
                    env: dict[str, str] | None = None) -> None:
        """Workers (name -> resources, "" for none) started together, then each awaited
        until it has registered: their start-ups overlap instead of adding up.  ``env``:
        what their environment (and so their engines') has besides this process's."""
        for name, resources in names.items():
            extra = ("--resources", resources) if resources else ()
            self.workers[name] = self._spawn(  # (stopped by close() even if never registered)
                "worker", self.address, "--name", name, "--nthreads", str(threads),
                "--no-nanny", "--no-dashboard", "--local-directory", str(self.folder / name),
                *extra, tmp=self.games(name), env_extra=env)
        for name in names:
            _await_line(self.workers[name][1], "Registered to:", 60)

    def games(self, name: str) -> Path:
        """The folder the worker ``name`` plays its games in (its TMPDIR)."""
        return self.folder / f"{name}-tmp"

    def pid(self, name: str) -> int:
        return self.workers[name][0].pid

    def kill_worker(self, name: str) -> None:
        """The host gone: the worker and every process it started, SIGKILL."""
        proc = self.workers[name][0]
        below = descendants(proc.pid)
        proc.kill()
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()

    def signal_worker(self, name: str, sig: int) -> None:
        """Only the worker process (SIGSTOP: a hung host), not what it started."""
        os.kill(self.pid(name), sig)

    def kill_scheduler(self) -> None:
        self.scheduler[0].kill()
        self.scheduler[0].wait()

    def log(self, name: str) -> list[str]:
        """The lines a process wrote so far (workers by name, or "scheduler")."""
        reader = self._logs.get(name) or self.workers[name][1]
        with contextlib.suppress(AssertionError):
            reader.expect("\0", timeout=0.01)  # collect what has arrived
        return reader.lines

    def close(self) -> None:
        for proc, _ in self.workers.values():
            below = descendants(proc.pid)
            stop_process(proc, 10)
            for pid in below:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        stop_process(self.scheduler[0], 10)

    def __enter__(self) -> DaskRig:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
