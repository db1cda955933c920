"""Drawing on a terminal: the live status line of a match or tournament."""

from __future__ import annotations

from collections.abc import Callable


class TerminalProgress:
    """A live line on a terminal (redrawn in place), plain lines otherwise."""

    def __init__(self, write: Callable[[str], None], *, live: bool) -> None:
        self._write = write
        self.live = live
        self._showing = False
        self.status = ""

    def line(self, text: str) -> None:
        """A line that stays (the live line is cleared first and redrawn after)."""
        if self._showing:
            self._write("\r\x1b[K")
            self._showing = False
        self._write(text + "\n")
        self._redraw()

    def update(self, text: str) -> None:
        """The live line: the game in progress (nothing when not on a terminal)."""
        self.status = text
        self._redraw()

    def _redraw(self) -> None:
        if self.live and self.status:
            self._write("\r\x1b[K" + self.status)
            self._showing = True

    def clear(self) -> None:
        self.status = ""
        if self._showing:
            self._write("\r\x1b[K")
            self._showing = False


__all__ = ["TerminalProgress"]
