"""The keeper: a small process between the director and one engine command.

Run as ``python -I -S .../keeper.py PARENT GRACE -- ARGV...`` (a few standard modules only:
it is started before every engine).  The
director's own children die with it only if something kills them: a SIGKILLed director reaps
nothing and
PR_SET_PDEATHSIG reaches just the one process it was set on, not a shell wrapper's
children.  So each engine command runs under a keeper that

* is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever the command starts and leaves
  behind (``sh -c "sleep 100000 | mobydam ..."``) becomes the keeper's child, not init's;
* asks for SIGUSR1 when the director dies (PR_SET_PDEATHSIG), and then stops the command
  as the director would have: SIGTERM to the group, SIGKILL after GRACE seconds;
* on SIGTERM (the director's stop) does the same;
* when the command exits, kills whatever of its group and descendants is left, reaps it
  all, and exits with the command's own status (a signal death is passed on as one), so
  the director reports the engine's exit, not the keeper's.

The keeper, the command and everything it starts share one process group (the director
starts the keeper as a group leader), whose id and start time the director writes into
its state file: the last line of defence is ``--resume`` killing a group whose leader is
gone (:func:`dxserial.transports.child.kill_leftover`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: Signals the keeper waits for (blocked, taken with sigtimedwait: no handler races).
_WATCHED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP, signal.SIGINT}
#: How long the sweep of leftovers may take before the keeper gives up on a process that
#: does not die (one in uninterruptible sleep).
_SWEEP_LIMIT = 5.0


def _prctl(option: int, value: int) -> bool:
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every live process, from /proc."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(os.path.join(entry.path, "stat")) as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] not in ("Z", "X"):
            found[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return found


def leftovers(me: int, group: int) -> set[int]:
    """Live processes of ``group`` and every descendant of ``me``, ``me`` itself not."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_, pgid) in table.items() if pgid == group}
    seen: set[int] = set()
    todo = list(children.get(me, []))
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(children.get(pid, []))
    found |= seen
    found.discard(me)
    return found


def _signal_all(me: int, group: int, sig: int) -> None:
    for pid in leftovers(me, group):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap(engine: int) -> tuple[int | None, bool]:
    """Reap what has exited: (the engine's wait status if it was among them, children
    left)."""
    status = None
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status, False
        if pid == 0:
            return status, True
        if pid == engine:
            status = code


def _start(argv: list[str]) -> int:
    """Fork and exec the command (its exec error goes to stderr: the engine's log)."""
    pid = os.fork()
    if pid:
        return pid
    try:  # pragma: no cover - the forked child
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the keeper killed: the command too
        os.execvp(argv[0], argv)
    except OSError as exc:  # pragma: no cover
        print(f"dxserial: cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
        sys.stderr.flush()
    os._exit(127)  # pragma: no cover


def _exit_as(status: int) -> None:
    """Exit the way the command did: its exit status, or killed by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core of the keeper
        with contextlib.suppress(ValueError, OSError):  # SIGKILL, SIGSTOP: no handler
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def keep(parent: int, grace: float, argv: list[str]) -> None:
    """Run ``argv`` for ``parent`` (the director) and never let it outlive ``parent``."""
    me = os.getpid()
    if os.getpgid(0) != me:  # its group is the command's, never its starter's
        os.setpgid(0, 0)
    group = me
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1)
    if os.getppid() != parent:  # the director died before the keeper could ask
        os._exit(1)
    engine = _start(argv)
    status: int | None = None
    kill_at: float | None = None  # after SIGTERM: when the rest gets SIGKILL
    while status is None:
        status, _ = _reap(engine)
        if status is not None:
            break
        timeout = None if kill_at is None else max(0.0, kill_at - time.monotonic())
        if timeout is None:
            info = signal.sigwaitinfo(_WATCHED)
            sig = info.si_signo
        else:
            got = signal.sigtimedwait(_WATCHED, timeout)
            sig = got.si_signo if got is not None else 0
        if sig == 0:  # the grace is over
            _signal_all(me, group, signal.SIGKILL)
        elif sig == signal.SIGUSR1 and os.getppid() == parent:
            continue  # the forking thread ended, not the director
        elif sig != signal.SIGCHLD and kill_at is None:
            kill_at = time.monotonic() + grace  # stop: SIGTERM now, SIGKILL at kill_at
            _signal_all(me, group, signal.SIGTERM)
    # The command is gone: nothing it started may stay.
    limit = time.monotonic() + _SWEEP_LIMIT
    while time.monotonic() < limit:
        _signal_all(me, group, signal.SIGKILL)
        _, more = _reap(engine)
        if not more and not leftovers(me, group):
            break
        signal.sigtimedwait({signal.SIGCHLD}, 0.05)
    _exit_as(status)


def main(args: list[str]) -> None:
    if len(args) < 4 or args[2] != "--":
        sys.exit("usage: keeper.py PARENT GRACE -- COMMAND...")
    keep(int(args[0]), float(args[1]), args[3:])


if __name__ == "__main__":
    main(sys.argv[1:])
