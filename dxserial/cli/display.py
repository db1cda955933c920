"""Drawing on a terminal, and running a match or tournament under it: the live status line,
signals that stop it cleanly, and the optional live web view."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any


class TerminalProgress:
    """A live line on a terminal (redrawn in place), plain lines otherwise."""

    def __init__(self, write: Callable[[str], None], *, live: bool) -> None:
        self._write = write
        self.live = live
        self._showing = False
        self.status = ""

    def line(self, text: str) -> None:
        """A line that stays (the live line is cleared first and redrawn after)."""
        self.hide()
        self._write(text + "\n")
        self._redraw()

    def update(self, text: str) -> None:
        """The live line: the game in progress (nothing when not on a terminal)."""
        self.status = text
        self._redraw()

    def hide(self) -> None:
        """Clear the live line for a moment (a log line is written to the terminal)."""
        if self._showing:
            self._write("\r\x1b[K")
            self._showing = False

    def show(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        if self.live and self.status:
            self._write("\r\x1b[K" + self.status)
            self._showing = True

    def clear(self) -> None:
        self.status = ""
        self.hide()


def stdout_progress() -> TerminalProgress:
    """Progress on stdout: a live line on a terminal, plain lines in a pipe or a log."""

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    progress = TerminalProgress(write, live=sys.stdout.isatty())
    if progress.live:
        from dxserial.cli.common import live_line

        live_line[:] = [progress]
    return progress


Publish = Callable[[dict[str, Any]], None]


async def run_watched(
    run: Callable[[], Awaitable[bool]],
    stop: Callable[[], None],
    *,
    web: str | None,
    allow: list[str],
    say: Callable[[str], None],
    title: str,
    watch: Callable[[Publish], None],
) -> bool:
    """``run()`` with Ctrl-C/SIGTERM calling ``stop`` and, with ``web``, the live page fed
    through ``watch`` (which hands the page's publish function to the program)."""
    from dxserial.drive.driver import on_signals

    server = None
    with on_signals(stop):
        try:
            if web is not None:
                from dxserial.live.web import start_web

                server = await start_web(web, allow, say, title)
                watch(server.publish)
            return await run()
        finally:
            if server is not None:
                await server.close()


__all__ = ["TerminalProgress", "run_watched", "stdout_progress"]
