"""``dxserial hub`` on a line where nothing answers (issue 38 point 9), as a Hub client
sees it: the ``go`` answered within its move time, the process still there for the next
``go``, and ``quit`` done at once, not after retries of a GAMEREQ nobody took."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dxserial.testing.rig import start_vpair

pytestmark = pytest.mark.e2e

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


def test_a_silent_line_answers_go_in_its_move_time_and_quits_at_once(tmp_path: Path) -> None:
    vpair, a, _b = start_vpair(tmp_path)  # nothing on end B
    with vpair:
        hub = subprocess.Popen(
            [sys.executable, "-m", "dxserial", "hub", a], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert hub.stdin is not None and hub.stdout is not None
        try:
            hub.stdin.write(f"hub\ninit\npos pos={START}\nlevel move-time=1\ngo think\n")
            hub.stdin.flush()
            before: list[str] = []
            while not (line := hub.stdout.readline()).startswith("done "):
                assert line, "the hub ended before it answered the go"
                before.append(line)
            # Not before the GAMEREQ went unanswered (a slow line's 3 s, the adapter's own
            # clock): the client is told so, in an error line ahead of the move.
            assert any(said.startswith('error message="the engine did not answer the GAMEREQ, '
                                       "and has said nothing since the connection opened")
                       for said in before), before
            hub.stdin.write("quit\n")
            hub.stdin.flush()
            code = hub.wait(60)  # before: the GAMEREQ's retries, then exit 1 (link lost)
            err = hub.stderr.read() if hub.stderr else ""
        finally:
            if hub.poll() is None:
                hub.kill()
                hub.wait()
        assert code == 0, err
        assert "has said nothing since the connection opened" in err
        # No fresh connection (a wait of --answer-timeout more for nothing), no lost link.
        assert "fresh connection" not in err and "lost the DXP engine" not in err
        vpair.stop()
