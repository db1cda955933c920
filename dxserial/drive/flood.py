"""Keeps a flood of one kind of log line from burying the line that matters."""

from __future__ import annotations


class FloodGuard:
    """At most ``burst`` log lines of one kind per ``window`` seconds; the rest are counted.

    An engine that sends the same wrong thing thousands of times must not fill the disk
    of an unattended rig, nor hide the one line that matters among copies.
    """

    def __init__(self, burst: int = 20, window: float = 60.0) -> None:
        self.burst = burst
        self.window = window
        self._seen: dict[str, tuple[float, int, int]] = {}  # kind -> (start, shown, hidden)

    def allow(self, kind: str, now: float) -> tuple[bool, int]:
        """Whether to show this line, and how many of its kind were hidden in the window
        that just ended (to be summarised before it)."""
        start, shown, hidden = self._seen.get(kind, (now, 0, 0))
        summary = 0
        if now - start >= self.window:
            summary = hidden
            start, shown, hidden = now, 0, 0
        if shown < self.burst:
            self._seen[kind] = (start, shown + 1, hidden)
            return True, summary
        self._seen[kind] = (start, shown, hidden + 1)
        return False, summary

    def summary(self, kind: str, hidden: int, tail: str = " (counted only)") -> str:
        """The line that stands for ``hidden`` lines of ``kind`` not shown."""
        return f"{hidden} more '{kind}' lines in the last {self.window:g} s not shown{tail}"

    def drain(self) -> list[tuple[str, int]]:
        """Counts not yet reported, for a last word at shutdown."""
        out = [(kind, hidden) for kind, (_, _, hidden) in self._seen.items() if hidden]
        self._seen.clear()
        return out


__all__ = ["FloodGuard"]
