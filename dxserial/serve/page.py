"""The rig's web page: every line's games on the live view, and a row per line above them.

The page is the live view's (:mod:`dxserial.live.web`): each line's games are its cards,
numbered across the rig and headed by the line's name, and the table of lines is the
view's table (the one a tournament shows its standings in), redrawn when a row changes.
"""

from __future__ import annotations

from typing import Any

from dxserial.live.web import WebView
from dxserial.serve.status import COLUMNS, rows

#: The longest state shown in a row (the status command's table cuts it there too).
STATE_WIDTH = 44
_NBSP = "\u00a0"  # the page splits its table on columns blank on every row: keep cells whole


class RigPage:
    """Feeds one :class:`WebView` from every line."""

    def __init__(self, view: WebView) -> None:
        self.view = view
        #: (line, the line's own number) -> the page's number, for the line's running bridge.
        self._numbers: dict[tuple[str, int], int] = {}
        self._last = 0  # the page's numbers are never given twice
        self._table: list[str] = []

    def publish(self, line: str, event: dict[str, Any]) -> None:
        """A line's game news, its game numbers made unique across the rig.

        A line's bridge numbers its games from 1, and a restarted bridge (a reload that
        changed the line, a port that came back) starts again: each new game takes the
        page's next number, never an earlier game's."""
        number = event.get("number")
        if not isinstance(number, int):
            return
        key = (line, number)
        if event.get("kind") == "game":
            self._last += 1
            self._numbers[key] = self._last
        elif key not in self._numbers:
            return
        out = {**event, "number": self._numbers[key]}
        if event.get("kind") == "game":
            out["white"] = f"[{line}] {event.get('white', '?')}"
        self.view.publish(out)

    def show_lines(self, status: dict[str, Any]) -> None:
        """The table of lines, if it changed."""
        found = rows(status)
        for row in found:  # as --status shows it: the whole reason is in --status --json
            row[2] = row[2] if len(row[2]) <= STATE_WIDTH else row[2][: STATE_WIDTH - 3] + "..."
        table = [[cell.replace(" ", _NBSP) for cell in row] for row in [list(COLUMNS), *found]]
        widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
        running = sum(row[2] == "running" for row in found)
        head = f"{len(found)} line(s), {running} running"
        text = [head] + ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
                         for row in table]
        if text != self._table:
            self._table = text
            self.view.publish({"kind": "standings", "table": text, "heading": "Lines"})


__all__ = ["RigPage"]
