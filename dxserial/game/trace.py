"""JSON-lines trace of everything that crossed (or failed to cross) a bridge.

One object per line, flushed as written, so a crash loses nothing already seen and
``tail -f`` shows the game live.  The writer bounds the file: past ``max_bytes`` it
stops writing and says so once in a last line, rather than filling a disk on a
week-long unattended run.

A trace holds every message and chat line. New files are made readable by their owner only;
an existing file keeps the mode its owner gave it (changing it behind their back would
surprise whoever reads it on purpose), but if others may read it the log says so once.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from dxserial.errors import DxSerialError
from dxserial.files import open_append
from dxserial.protocol.messages import Message, escape

DEFAULT_MAX_BYTES = 256 * 1024 * 1024

log = logging.getLogger("dxserial.game.trace")


class TraceWriter:
    """Append-only JSON-lines writer. Files are created readable by the owner only."""

    def __init__(self, path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, mode: int = 0o600):
        self.path = path
        self.max_bytes = max_bytes
        fd = open_append(path, "trace file", mode)
        self._file: IO[str] = os.fdopen(fd, "a", encoding="utf-8")
        self._written = self._file.tell()
        self._full = False
        mode = os.fstat(fd).st_mode
        self.exposure = exposure(mode)
        if self.exposure is not None:
            log.warning(
                "trace file %s is readable by %s (mode %04o): it holds every message; "
                "chmod 600 %s if that is not intended",
                path, self.exposure, stat.S_IMODE(mode), path,
            )

    def write(self, kind: str, **fields: Any) -> None:
        if self._full:
            return
        record = {"time": round(time.time(), 6), "kind": kind, **fields}
        line = json.dumps(record, separators=(",", ":")) + "\n"
        if self._written + len(line) > self.max_bytes:
            self._full = True
            line = json.dumps({"time": round(time.time(), 6), "kind": "trace-full",
                               "max_bytes": self.max_bytes}) + "\n"
        self._file.write(line)
        self._file.flush()
        self._written += len(line)

    def write_lines(self, lines: list[str]) -> None:
        """Records already serialised as JSON (a batch from a writer thread), one flush."""
        if self._full:
            return
        out = []
        for line in lines:
            if self._written + len(line) + 1 > self.max_bytes:
                self._full = True
                line = json.dumps({"time": round(time.time(), 6), "kind": "trace-full",
                                   "max_bytes": self.max_bytes})
                out.append(line + "\n")
                self._written += len(line) + 1
                break
            out.append(line + "\n")
            self._written += len(line) + 1
        self._file.write("".join(out))
        self._file.flush()

    def message(
        self,
        direction: str,
        raw: bytes,
        *,
        msg: Message | None = None,
        error: str | None = None,
        action: str = "forwarded",
    ) -> None:
        fields: dict[str, Any] = {"direction": direction, "raw": escape(raw), "action": action}
        if msg is not None:
            fields["type"] = msg.NAME
            fields["fields"] = msg.fields()
            if msg.warnings:
                fields["warnings"] = list(msg.warnings)
        if error is not None:
            fields["error"] = error
        self.write("message", **fields)

    def event(self, text: str, *, level: str = "info", **extra: Any) -> None:
        self.write("event", level=level, text=text, **extra)

    def close(self) -> None:
        self._file.close()


def exposure(mode: int) -> str | None:
    """Who besides the owner may read a file of this mode: "others", "its group" or None."""
    if mode & stat.S_IROTH:
        return "others"
    if mode & stat.S_IRGRP:
        return "its group"
    return None


def unescape(text: str) -> bytes:
    """Inverse of :func:`dxserial.protocol.messages.escape`."""
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and text[i + 1 : i + 2] == "\\":
            out.append(0x5C)
            i += 2
        elif ch == "\\" and text[i + 1 : i + 2] == "x":
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        else:
            out.append(ord(ch))
            i += 1
    return bytes(out)


class TraceError(DxSerialError):
    """A trace file that cannot be read as one: says where."""


def parse_trace(text: str, *, source: str = "trace") -> Iterator[dict[str, Any]]:
    """Records of a trace's text.  A torn last line (the bridge killed mid-write) is
    skipped; any other line that is not JSON is an error naming its line number."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                continue
            raise TraceError(f"{source}: line {number} is not JSON") from None
        if isinstance(record, dict):
            yield record


def read_trace(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a trace file (see :func:`parse_trace`)."""
    return parse_trace(path.read_text(encoding="utf-8"), source=str(path))
