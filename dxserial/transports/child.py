"""An engine process the director started: its own process group, output to a log file.

The child runs in a new process group so that stopping it reaches everything it started
(DOSBox, a shell wrapper): :meth:`Child.stop` sends SIGTERM to the group, then SIGKILL
after a grace.  On Linux it also gets PR_SET_PDEATHSIG (SIGKILL), so a director killed
with SIGKILL does not leave it running; a resumed tournament also kills any group the
state file still lists with its start time (see :func:`kill_leftover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from dxserial.errors import PortError

__all__ = ["Child", "describe_status", "kill_leftover", "start_time"]

_PR_SET_PDEATHSIG = 1


def _in_child() -> None:  # pragma: no cover - runs in the forked child
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def describe_status(code: int | None) -> str:
    """``exit status 3`` / ``killed by SIGSEGV`` / ``still running``."""
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit status {code}"


class Child:
    """One run of an engine command."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log
        self.stopped_by: str | None = None  # "SIGTERM" / "SIGKILL" when we stopped it

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        log: Path,
    ) -> Child:
        """Start ``argv`` in ``cwd``; stdout and stderr appended to ``log``."""
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            out.write(f"--- dxserial: starting {' '.join(argv)} (in {cwd})\n".encode())
            out.flush()
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=cwd,
                    env=dict(env),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=out,
                    stderr=asyncio.subprocess.STDOUT,
                    preexec_fn=_in_child,
                )
            except OSError as exc:
                raise PortError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        return cls(proc, log)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def started(self) -> int | None:
        """See :func:`start_time` (what a resumed director checks before killing)."""
        return start_time(self.proc.pid)

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def status(self) -> str:
        if self.stopped_by:
            return f"did not exit by itself: stopped by the director with {self.stopped_by}"
        return describe_status(self.returncode)

    async def wait(self) -> int:
        return await self.proc.wait()

    async def stop(self, grace: float) -> None:
        """SIGTERM to the group, SIGKILL after ``grace`` seconds; then the group is gone."""
        if self.proc.returncode is None:
            self.stopped_by = "SIGTERM"
            self._signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), grace)
            except TimeoutError:
                self.stopped_by = "SIGKILL"
        # Whatever the leader did, nothing of its group may outlive it.
        self._signal(signal.SIGKILL)
        await self.proc.wait()

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def log_tail(self, lines: int = 3) -> str:
        """The last lines of the log (this run's), joined with `` | ``."""
        try:
            with open(self.log, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - 4096))
                text = handle.read().decode(errors="replace")
        except OSError:
            return ""
        run = text.rsplit("--- dxserial: starting", 1)[-1].splitlines()[1:]
        kept = [line.strip() for line in run if line.strip()][-lines:]
        return " | ".join(kept)


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), None if gone:
    with the pid it names one process, never a later one that got the same pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 else None


def kill_leftover(pgid: int, started: int) -> bool:
    """Kill process group ``pgid`` if its leader is still the process that started at
    ``started`` (see :func:`start_time`); True if it did."""
    if start_time(pgid) != started:
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True
