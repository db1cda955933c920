"""An engine process the director started: under a keeper, in its own process group, its
output to a log file, its console a pipe the director holds open and never writes.

The output comes to the director through a pipe and goes to the log (mode 0600, like PDN and
trace) through :class:`CappedLog`: a chatty engine's log keeps its last part, never more than
:data:`LOG_LIMIT` bytes, and says what it dropped (docs/engines-as-commands.md).

The command runs under :mod:`dxserial.transports.keeper` (a child subreaper that dies with the
director and takes the command's whole tree with it), in a new process group led by the
keeper, so that stopping it reaches everything it started (DOSBox, a shell wrapper):
:meth:`Child.stop` sends SIGTERM to the keeper, which passes it to the group and sends
SIGKILL after the grace; the director's SIGKILL to the group is the last resort.  A resumed
tournament also kills any group the state file still lists (see :func:`kill_leftover`).

Its stdin is a pipe, not /dev/null: an engine that waits for console input (Moby Dam
select()s on it) blocks there instead of reading end-of-file in a loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dxserial.errors import PortError

__all__ = ["LOG_LIMIT", "CappedLog", "Child", "Group", "describe_status", "kill_leftover",
           "start_piped", "start_time", "stop_piped"]

log = logging.getLogger("dxserial.processes")

#: The most an engine's log file holds; past it the older part goes, the tail stays.
LOG_LIMIT = 8 << 20
#: How long the output of an engine that has exited may take to reach its log.
_PUMP_GRACE = 2.0


class CappedLog:
    """A log file that is appended to and never grows past ``limit`` bytes: when it would,
    it keeps its last ``limit // 2`` bytes (from a line's start), headed by a line that says
    how much was dropped.  Created with mode 0600; an older file is made 0600 too."""

    def __init__(self, path: Path, limit: int = LOG_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.dropped = 0  # bytes of output dropped so far
        self._head = 0  # the length of the line that says so, at the top of the file
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        with contextlib.suppress(OSError):
            os.fchmod(self._fd, 0o600)
        self.size = os.fstat(self._fd).st_size
        if self.size > limit:
            self._cut()

    def write(self, data: bytes) -> bool:
        """Append ``data``; True when the file was cut to its tail by this write."""
        if self._fd < 0:
            return False
        os.write(self._fd, data)
        self.size += len(data)
        if self.size <= self.limit:
            return False
        self._cut()
        return True

    def _cut(self) -> None:
        keep = self.limit // 2
        tail = os.pread(self._fd, keep, max(0, self.size - keep))
        start = tail.find(b"\n") + 1 if b"\n" in tail[:-1] else 0
        tail = tail[start:]
        self.dropped += max(0, self.size - len(tail) - self._head)  # output, not our line
        head = (f"--- dxserial: this log passed {self.limit} bytes: the first {self.dropped} "
                f"bytes of output were dropped, the last {len(tail)} kept\n").encode()
        os.ftruncate(self._fd, 0)
        os.write(self._fd, head + tail)
        self.size = len(head) + len(tail)
        self._head = len(head)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

#: The keeper's script (see :mod:`dxserial.transports.keeper`).
KEEPER = Path(__file__).with_name("keeper.py")
#: How much longer than the grace the keeper gets to stop the command and exit by itself.
_KEEPER_MARGIN = 2.0


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

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        log: Path,
        grace: float = 3.0,
        output: CappedLog | None = None,
    ) -> None:
        self.proc = proc
        self.log = log
        self.grace = grace
        self.stopped_by: str | None = None  # "SIGTERM" / "SIGKILL" when we stopped it
        self.group = Group.of(proc.pid)
        self._output = output
        self._pump: asyncio.Task[None] | None = None
        if output is not None and proc.stdout is not None:
            self._pump = asyncio.ensure_future(self._copy(proc.stdout, output))

    async def _copy(self, pipe: asyncio.StreamReader, out: CappedLog) -> None:
        """The command's output into its log, capped (said once in the director's log)."""
        said = False
        try:
            while chunk := await pipe.read(65536):
                if out.write(chunk) and not said:
                    said = True
                    log.warning("engine log %s passed %d bytes: its older output is dropped, "
                                "the last part kept (said at the top of the file)",
                                out.path, out.limit)
        except OSError as exc:
            log.warning("engine log %s: cannot write: %s", out.path, exc.strerror or exc)
        finally:
            out.close()

    async def _drained(self) -> None:
        """The output written (what is left of it after the command exited), bounded."""
        if self._pump is None:
            return
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._pump), _PUMP_GRACE)
        if not self._pump.done():
            self._pump.cancel()

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        log: Path,
        grace: float = 3.0,
        log_limit: int = LOG_LIMIT,
    ) -> Child:
        """Start ``argv`` in ``cwd`` under a keeper; stdout and stderr appended to ``log``.

        ``grace``: how long the command gets after SIGTERM (when stopped, or when the
        director dies) before SIGKILL."""
        log.parent.mkdir(parents=True, exist_ok=True)
        keeper = _keeper(grace)
        try:
            out = CappedLog(log, log_limit)
        except OSError as exc:
            raise PortError(f"cannot write the engine's log {log}: {exc.strerror or exc}") \
                from None
        try:
            out.write(f"--- dxserial: starting {' '.join(argv)} (in {cwd})\n".encode())
            _check_runnable(argv[0], cwd, env)
            proc = await asyncio.create_subprocess_exec(
                *keeper,
                *argv,
                cwd=cwd,
                env=dict(env),
                stdin=asyncio.subprocess.PIPE,  # held open, never written
                stdout=asyncio.subprocess.PIPE,  # to the log, capped
                stderr=asyncio.subprocess.STDOUT,
                preexec_fn=_new_group,  # uvloop takes no process_group=
            )
        except OSError as exc:
            out.close()
            raise PortError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        return cls(proc, log, grace, out)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def status(self) -> str:
        if self.stopped_by:
            return f"did not exit by itself: stopped by the director with {self.stopped_by}"
        return describe_status(self.returncode)

    async def wait(self) -> int:
        code = await self.proc.wait()
        await self._drained()
        return code

    async def stop(self) -> None:
        """SIGTERM to the keeper, which passes it on and sends SIGKILL after the grace;
        then the group is gone (the director's SIGKILL to it if the keeper is slow)."""
        if self.proc.returncode is None:
            self.stopped_by = "SIGTERM"
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), self.grace + _KEEPER_MARGIN)
            except TimeoutError:
                self.stopped_by = "SIGKILL"
            if self.proc.returncode == -signal.SIGKILL:
                self.stopped_by = "SIGKILL"  # the keeper's, after the grace
        # Whatever the leader did, nothing of its group may outlive it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        await self._drained()
        if self.proc.stdin is not None:
            self.proc.stdin.close()

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


def _keeper(grace: float) -> tuple[str, ...]:
    """The keeper's command line, to which the command's argv is appended.

    A script of the standard library only, run isolated: nothing of the command's
    environment (PYTHONPATH, a checkout not installed) changes how it starts."""
    return (sys.executable, "-I", "-S", str(KEEPER), str(os.getpid()), f"{grace:g}", "--")


def start_piped(argv: Sequence[str], *, grace: float = 2.0) -> subprocess.Popen[bytes]:
    """Start ``argv`` under a keeper, in a group of its own, its stdin and stdout pipes to
    this process (a Hub engine speaks on them), its stderr this process's.

    Blocking, for a worker thread; the keeper outlives the thread that started it (it
    waits for the director, not the thread).  An OSError if the program is not there."""
    _check_runnable(argv[0], Path.cwd(), os.environ)
    return subprocess.Popen(
        [*_keeper(grace), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        process_group=0,
    )


def stop_piped(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """Wait ``timeout`` seconds for a command of :func:`start_piped` to exit by itself, then
    stop it and everything it started; its exit status (the command's, told by its keeper)."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def _new_group() -> None:  # pragma: no cover - runs in the forked child
    os.setpgid(0, 0)


def _check_runnable(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """The command's program is there: an OSError now, as starting it directly would."""
    import shutil

    if os.sep in program:
        path = Path(program) if Path(program).is_absolute() else cwd / program
        if not path.exists():
            raise FileNotFoundError(2, "No such file or directory")
        if not os.access(path, os.X_OK):
            raise PermissionError(13, "Permission denied")
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(2, "No such file or directory")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields if len(fields) > 19 and fields[0] not in ("Z", "X") else None


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), None if gone:
    with the pid it names one process, never a later one that got the same pid."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


@dataclass(frozen=True)
class Group:
    """What identifies an engine's process group for a later run: its id (the keeper's
    pid), the keeper's start time, and the session it ran in."""

    pgid: int
    started: int | None
    session: int | None

    @classmethod
    def of(cls, pid: int) -> Group:
        fields = _stat(pid)
        return cls(pid, int(fields[19]) if fields else None, int(fields[3]) if fields else None)


def members(pgid: int) -> dict[int, tuple[int, int]]:
    """The live processes of group ``pgid``: pid -> (start time, session)."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields and int(fields[2]) == pgid:
                found[int(entry.name)] = (int(fields[19]), int(fields[3]))
    return found


def kill_leftover(pgid: int, started: int, session: int | None = None) -> list[int]:
    """Kill what is left of an earlier run's engine group ``pgid`` (its keeper started at
    ``started``, in ``session``); the pids killed.

    Every member must be the earlier run's: started no earlier than its keeper and, when
    the session is known, in that session (a group id is not reused while the group has
    members, so these are the processes it started).  If the leader is alive it must be
    that keeper (same start time); if it is gone the members are killed all the same.
    """
    found = members(pgid)
    leader = found.get(pgid)
    if leader is not None and leader[0] != started:
        return []  # the id now names another process's group
    ours = {
        pid: info for pid, info in found.items()
        if info[0] >= started and (session is None or info[1] == session)
    }
    if not ours or len(ours) != len(found):
        return []
    for pid in ours:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return sorted(ours)
