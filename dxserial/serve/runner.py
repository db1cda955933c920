"""``dxserial serve``: every line of a rig file bridged in one process, on one event loop.

Each line is a :class:`~dxserial.serve.line.LineRunner` in a task of its own.  A reload
(SIGHUP) reads the file again and compares line by line: a line whose table is unchanged
is not touched (its sessions and games go on), a removed line is stopped, a changed one
stopped and started again with its new settings, a new one started.  A file that does not
read is refused as a whole, in one log line, and every line keeps running as it was.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from dxserial.errors import DxSerialError
from dxserial.serve.line import RESTART_PAUSE, RETRY_INTERVAL, LineRunner
from dxserial.serve.rig import LineSpec, RigSpec, read_rig
from dxserial.serve.usb import find_serial_number

log = logging.getLogger("dxserial.serve")


class Daemon:
    """The lines of one rig file; :meth:`reload` follows the file's changes."""

    def __init__(
        self,
        spec: RigSpec,
        *,
        watch: Callable[[str, dict[str, Any]], None] | None = None,
        retry: float = RETRY_INTERVAL,
        restart_pause: float = RESTART_PAUSE,
        finder: Callable[[str], str | None] = find_serial_number,
    ) -> None:
        self.spec = spec
        self._find = finder
        self.lines: dict[str, LineRunner] = {}
        self._watch = watch
        self._retry = retry
        self._restart_pause = restart_pause
        self._lock = asyncio.Lock()
        self._stopped = asyncio.Event()
        self.started = time.time()
        self.reloads = 0
        #: The last reload's refusal while the file still has that mistake, for --status.
        self.refused: str | None = None

    def _runner(self, spec: LineSpec) -> LineRunner:
        return LineRunner(spec, watch=self._watch, retry=self._retry,
                          restart_pause=self._restart_pause, finder=self._find)

    def start(self) -> None:
        """Start every line (each waits for its port if it is not there yet)."""
        for name, spec in self.spec.lines.items():
            self.lines[name] = runner = self._runner(spec)
            runner.start()
        log.info("serving %d line(s) from %s", len(self.lines), self.spec.path)

    async def reload(self, spec: RigSpec | None = None) -> str:
        """Follow the file (or ``spec``): the one-line summary of what changed."""
        async with self._lock:
            if self._stopped.is_set():
                return "stopping: the file is not read again"
            if spec is None:
                try:
                    spec = read_rig(self.spec.path)
                except DxSerialError as exc:
                    text = f"reload refused, every line runs on as it was: {exc}"
                    log.error("%s", text)
                    self.refused = text
                    return text
            old, new = self.spec.lines, spec.lines
            removed = [n for n in old if n not in new]
            changed = [n for n in old if n in new and new[n] != old[n]]
            added = [n for n in new if n not in old]
            going = [self.lines.pop(n) for n in removed + changed if n in self.lines]
            for runner in going:
                runner.stop()
            for runner in going:  # their ports and addresses are free before the new ones
                await runner.wait()
            if self._stopped.is_set():  # a stop came meanwhile: start nothing new
                return "stopping: the reload was not finished"
            for name in changed + added:
                self.lines[name] = runner = self._runner(new[name])
                runner.start()
            # Keep the file's order for the status and the page.
            self.lines = {n: self.lines[n] for n in new if n in self.lines}
            if (spec.web, spec.web_allow, spec.status) != (
                self.spec.web, self.spec.web_allow, self.spec.status
            ):
                log.warning("reload: web, web_allow and status take effect at the next start")
            self.spec = spec
            self.reloads += 1
            self.refused = None
            parts = [f"{label} {', '.join(names)}" for label, names in
                     (("added", added), ("removed", removed), ("changed", changed)) if names]
            kept = len(new) - len(added) - len(changed)
            text = f"reloaded {spec.path}: " + ("; ".join(parts) or "no line changed") + (
                f"; {kept} line(s) untouched")
            log.info("%s", text)
            return text

    def stop(self) -> None:
        """Stop every line (a signal handler may call this)."""
        self._stopped.set()
        for runner in self.lines.values():
            runner.stop()

    async def wait(self) -> None:
        """Until :meth:`stop`, then until every line has closed."""
        await self._stopped.wait()
        await asyncio.gather(*(runner.wait() for runner in list(self.lines.values())))

    def status(self) -> dict[str, Any]:
        """The whole rig, JSON-ready: what ``dxserial serve --status --json`` prints."""
        return {
            "rig": str(self.spec.path),
            "pid": os.getpid(),
            "started": round(self.started, 3),
            "reloads": self.reloads,
            "refused": self.refused,
            "lines": [runner.status() for runner in self.lines.values()],
        }


__all__ = ["Daemon"]
