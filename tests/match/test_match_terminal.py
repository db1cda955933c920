"""Match and tournament output on a terminal (issue 24, item 7).

On a terminal a live line is redrawn in place; a log line on the same terminal must start
on a line of its own (it ran into the live line: 'game 1/2: starting20:43:56.485 INFO ...').
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dxserial.testing.process import Cli

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

# A log line's timestamp that does not start a line (nor follow a cleared live line).
RUN_IN = re.compile(rb"[^\n\r\x1b\[K]\d\d:\d\d:\d\d\.\d{3} (?:INFO|WARNING|ERROR) ")


def test_log_lines_never_run_into_the_live_line(tmp_path: Path) -> None:
    engines = [Cli("engine", "listen://127.0.0.1:0", "--role", "follower", "--depth", "1")
               for _ in range(2)]
    try:
        ports = [re.search(r"127\.0\.0\.1:(\d+)", e.out.expect("engine ready", timeout=20))
                 for e in engines]
        master, slave = pty.openpty()
        match = subprocess.Popen(
            [sys.executable, "-m", "dxserial", "match",
             *(f"tcp://127.0.0.1:{p.group(1)}" for p in ports if p),
             "--games", "2", "--moves", "8", "--pdn", str(tmp_path)],
            stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
            env={**os.environ, "COLUMNS": "100"},
        )  # fmt: skip
        os.close(slave)
        screen = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the match exited: the pty is hung up
                    break
                if not chunk:
                    break
                screen += chunk
            elif match.poll() is not None:
                break
        os.close(master)
        assert match.wait(10) == 0, screen.decode(errors="replace")
    finally:
        for engine in engines:
            engine.stop()
            engine.__exit__(None, None, None)
    assert b"\r\x1b[K" in screen  # there was a live line
    assert b" INFO " in screen  # and log lines on the same terminal
    assert not RUN_IN.search(screen), screen.decode(errors="replace")
    assert b"results after 2 game(s); scoring: win 2, draw 1, loss 0" in screen
