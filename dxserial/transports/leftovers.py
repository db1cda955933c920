"""Engines left by a director that was killed together with its keepers, swept by the next one.

The keeper (:mod:`dxserial.transports.keeper`) stops what a command started when the director
dies; if the keeper is killed too (the OOM killer, ``kill -9`` of the whole process tree), a
wrapper's ``setsid`` grandchildren are left under init, outside any group the state file names.
What they keep is their environment: every engine command runs with :data:`MARK` naming its
director's run, and each director leaves a record of that run in the state folder while it
runs.  The next director on the machine (any ``dxserial match``, ``tournament``, cluster worker
that starts an engine command) finds the records of runs whose director is gone, kills the
processes that still carry that run's mark, and removes the record.  What this does and does
not guarantee: docs/engines-as-commands.md.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dxserial.bridge.statefile import state_dir
from dxserial.files import output_dir, write_atomic
from dxserial.transports.child import start_time

__all__ = ["MARK", "Run", "dead_runs", "default_folder", "marked", "sweep", "this_run"]

log = logging.getLogger("dxserial.processes")

#: The environment variable every engine command runs with: its director's run.
MARK = "DXSERIAL_DIRECTOR_RUN"
#: The records' folder, in the state folder (the bridge's: ``--state-dir`` aside).
FOLDER = "directors"


def default_folder(env: Mapping[str, str] = os.environ) -> Path:
    """Where the records go: the state folder the bridge keeps its state files in
    (``$STATE_DIRECTORY``, else ``$XDG_STATE_HOME/dxserial``, else ~/.local/state/dxserial)."""
    return state_dir(None, env).path / FOLDER


def _boot() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:
        return "noboot"


@dataclass(frozen=True)
class Run:
    """One director's run: its pid, its start time (clock ticks since boot) and the boot."""

    pid: int
    started: int
    boot: str

    @property
    def mark(self) -> str:
        return f"{self.boot}-{self.pid}-{self.started}"

    def alive(self) -> bool:
        """The director still runs (the same process: same pid, same start time, same boot)."""
        return self.boot == _boot() and start_time(self.pid) == self.started

    @classmethod
    def me(cls) -> Run:
        return cls(os.getpid(), start_time(os.getpid()) or 0, _boot())


def dead_runs(folder: Path) -> list[tuple[Path, Run]]:
    """The records in ``folder`` whose director is gone (a record that does not read is
    removed: it names nothing that could be swept)."""
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            run = Run(int(data["pid"]), int(data["started"]), str(data["boot"]))
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        if not run.alive():
            found.append((path, run))
    return found


def marked(mark: str, started: int, environ: Mapping[str, str] | None = None) -> list[int]:
    """The live processes whose environment carries ``MARK=mark``, started no earlier than
    ``started`` (they can only be that run's), this process never."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(os.path.join(entry.path, "environ"), "rb") as handle:
                env = handle.read()
        except OSError:  # another user's, or gone
            continue
        if needle not in env.split(b"\0"):
            continue
        began = start_time(int(entry.name))
        if began is not None and began >= started:
            found.append(int(entry.name))
    return sorted(found)


def sweep(folder: Path) -> list[tuple[Run, list[int]]]:
    """Kill what the dead runs recorded in ``folder`` left; each run and the pids killed."""
    swept = []
    for path, run in dead_runs(folder):
        pids = marked(run.mark, run.started) if run.boot == _boot() else []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            path.unlink()
        swept.append((run, pids))
    return swept


_RUN: dict[Path, str] = {}


def this_run(folder: Path | None = None) -> str:
    """This director's mark for its engine commands; the first call sweeps what dead
    directors left (one log line each that killed anything) and records this run in
    ``folder``, removed when this process exits normally."""
    folder = default_folder() if folder is None else folder
    if folder in _RUN:
        return _RUN[folder]
    run = Run.me()
    try:
        output_dir(folder, "folder of director records")
        for dead, pids in sweep(folder):
            if pids:
                log.warning("engines left running by an earlier director (pid %d, no longer "
                            "running): killed %d process(es) (pids %s)", dead.pid, len(pids),
                            ", ".join(map(str, pids)))
        path = folder / f"{run.mark}.json"
        write_atomic(path, json.dumps({"pid": run.pid, "started": run.started,
                                       "boot": run.boot}) + "\n", what="director record")
        atexit.register(_forget, path)
    except Exception as exc:  # a sweep must never stop a director
        log.warning("no record of this director's engines in %s (%s): engines left by a "
                    "director killed with its keepers are not swept", folder, exc)
    _RUN[folder] = run.mark
    return run.mark


def _forget(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
