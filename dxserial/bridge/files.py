"""Trace lines and PDN files written by a thread of their own, so a slow disk never makes a
NULMODEM echo late.

The event loop only appends to a bounded in-memory queue; the writer thread takes
everything queued, writes it and flushes, then waits for more.  Nothing waits on the disk
in the loop.  Bounds: at most ``max_lines`` trace lines wait in memory.  When the disk
falls that far behind, further lines are counted and a ``trace-gap`` record saying how many
were skipped is written once the writer catches up (a trace with a known hole beats a
bridge that stalls).  A crash (SIGKILL, power loss) loses what is queued and not yet
written: normally nothing, as the thread writes within a millisecond, and never more than
``max_lines`` lines.  PDN files are written in order by the same thread (atomically, see
:func:`dxserial.game.pdn.write_pdn`); the loop is told the outcome through ``on_written``.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dxserial.errors import DxSerialError
from dxserial.game.pdn import write_pdn
from dxserial.game.record import GameRecord
from dxserial.game.trace import TraceWriter

DEFAULT_MAX_LINES = 4096
DEFAULT_MAX_RECORDS_PER_MINUTE = 60

log = logging.getLogger("dxserial.bridge")

#: Called in the writer thread with (record, path or None, error text or None).
WrittenCallback = Callable[[GameRecord, Path | None, str | None], None]


class FileWriter:
    """One thread that owns the trace file and writes PDN records."""

    def __init__(
        self,
        trace: TraceWriter | None,
        pdn_dir: Path | None,
        *,
        on_written: WrittenCallback | None = None,
        max_lines: int = DEFAULT_MAX_LINES,
        max_records_per_minute: int = DEFAULT_MAX_RECORDS_PER_MINUTE,
        annotated: bool = False,
        log: logging.Logger = log,
    ) -> None:
        self._log = log
        self._trace = trace
        self._annotated = annotated
        self._pdn_dir = pdn_dir
        self._on_written = on_written
        self.max_lines = max_lines
        self._lines: deque[str] = deque()
        self._records: deque[GameRecord] = deque()
        self._skipped = 0
        self.max_records_per_minute = max_records_per_minute
        self._recent: deque[float] = deque()
        self._skipped_records = 0
        self._said_skipped = -math.inf
        self._cond = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        if trace is not None or pdn_dir is not None:
            self._thread = threading.Thread(target=self._run, name="dxserial-files", daemon=True)
            self._thread.start()

    @property
    def tracing(self) -> bool:
        return self._trace is not None

    def trace(self, fields: dict[str, Any]) -> None:
        """Queue one trace record; never blocks."""
        if self._trace is None:
            return
        record = {"time": round(time.time(), 6), **fields}
        line = json.dumps(record, separators=(",", ":"))
        with self._cond:
            if len(self._lines) >= self.max_lines:
                self._skipped += 1
                return
            self._lines.append(line)
            self._cond.notify()

    def record(self, game: GameRecord) -> None:
        """Queue one finished game for its PDN file; never blocks.

        At most ``max_records_per_minute`` files a minute: no real game is that short, and
        a client that starts and ends games in a loop must not fill the disk.  What is
        skipped is counted and said once a minute.
        """
        if self._pdn_dir is None:
            return
        now = time.monotonic()
        recent = self._recent
        while recent and now - recent[0] >= 60.0:
            recent.popleft()
        if len(recent) >= self.max_records_per_minute:
            self._skipped_records += 1
            if now - self._said_skipped >= 60.0:
                self._said_skipped = now
                self._log.error(
                    "game records NOT written: more than %d games in a minute (a client "
                    "starting and ending games in a loop?); %d skipped so far",
                    self.max_records_per_minute, self._skipped_records,
                )
            return
        recent.append(now)
        with self._cond:
            self._records.append(game)
            self._cond.notify()

    def close(self, timeout: float = 10.0) -> None:
        """Write everything queued, then stop the thread and close the trace."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._trace is not None:
            self._trace.close()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._lines or self._records or self._closing):
                    self._cond.wait()
                lines = list(self._lines)
                self._lines.clear()
                records = list(self._records)
                self._records.clear()
                skipped, self._skipped = self._skipped, 0
                closing = self._closing and not lines and not records
            if lines and self._trace is not None:
                self._trace.write_lines(lines)
            if skipped and self._trace is not None:
                self._trace.write(
                    "trace-gap", skipped=skipped,
                    text=f"{skipped} trace line(s) not written: the disk fell behind",
                )
            for game in records:
                self._write_pdn(game)
            if closing:
                return

    def _write_pdn(self, game: GameRecord) -> None:
        assert self._pdn_dir is not None
        try:
            path: Path | None = write_pdn(game, self._pdn_dir, annotated=self._annotated)
            error = None
        except (DxSerialError, OSError) as exc:
            path, error = None, str(exc)
        if self._on_written is not None:
            self._on_written(game, path, error)


__all__ = ["DEFAULT_MAX_LINES", "FileWriter"]
