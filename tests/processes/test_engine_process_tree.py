"""The director owns its engines' whole process tree: a tournament whose engine commands are
shell wrappers (``sh -c "sleep 100000 | ENGINE"``, how Moby Dam gets a console), SIGKILLed
mid-game and resumed, leaves no process of either run behind, checked in the process table
(each run's processes carry a mark in their environment), not in the state file.  And an
engine command's console is a pipe that stays open and silent: one that waits on it blocks
instead of spinning."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from dxserial.testing.process import Cli, wait_until

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

ENGINE = f"{sys.executable} -m dxserial engine"


def marked(mark: str) -> dict[int, int]:
    """Live processes whose environment holds ``DXSERIAL_TEST_RUN=mark``: pid -> start time."""
    found = {}
    needle = f"DXSERIAL_TEST_RUN={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            stat = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if needle in environ.split(b"\0") and stat[0] not in ("Z", "X"):
            found[int(entry.name)] = int(stat[19])
    return found


def alive(processes: dict[int, int]) -> dict[int, int]:
    """Those of ``processes`` still running (same pid and start time)."""
    left = {}
    for pid, started in processes.items():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(stat[19]) == started and stat[0] not in ("Z", "X"):
            left[pid] = started
    return left


def wrapped(name: str, endpoint: str, speaks: str, mark: str) -> str:
    shell = f"sleep 100000 | {ENGINE} {endpoint} --role follower --depth 1"
    return (
        f"[engines.{name}]\ncommand = {json.dumps(['sh', '-c', shell])}\n"
        f'speaks = "{speaks}"\nstop_grace = 1\nenv = {{ DXSERIAL_TEST_RUN = "{mark}" }}\n'
    )


def tournament(tmp_path: Path, mark: str) -> Path:
    file = tmp_path / "wrapped.toml"
    file.write_text(
        'event = "Wrapped"\nmoves = 12\nminutes = 1\nmove_timeout = 5\nconnect_timeout = 20\n'
        'rounds = 2\n'
        + wrapped("server", "listen://127.0.0.1:{port}", "dxp-server", mark)
        + wrapped("client", "tcp://127.0.0.1:{port}", "dxp-client", mark)
    )
    return file


def finished(state: Path) -> int:
    if not state.exists():
        return 0
    try:
        return len(json.loads(state.read_text()).get("games", []))
    except ValueError:  # caught between its write and its rename: not yet
        return 0


def test_a_sigkilled_tournament_of_wrapped_engines_resumed_leaves_no_process_behind(
    tmp_path: Path,
) -> None:
    mark = f"tree-{os.getpid()}"
    file = tournament(tmp_path, mark)
    state = tmp_path / "games" / "tournament-state.json"
    seen: dict[int, int] = {}
    with Cli("tournament", str(file)) as first:

        def mid_game() -> bool:
            seen.update(marked(mark))
            # a game finished, and both wrappers (sh, sleep, engine) run the next one
            return finished(state) >= 1 and len(marked(mark)) >= 6

        wait_until(mid_game, timeout=60, what="game 2 under way")
        first.stop(signal.SIGKILL)  # the director reaps nothing, cleans up nothing
    # The keepers take their engines' whole trees with them, sleep and all.
    wait_until(lambda: not alive(seen), timeout=10,
               what=f"the killed director's engines to be gone: {alive(seen)}")
    assert not marked(mark)

    second = Cli("tournament", str(file), "--resume")
    second.wait(90)
    out = second.out.drain()
    second.close()
    assert second.proc.returncode == 0, out
    assert finished(state) == 4  # 2 rounds, each engine once with each colour
    assert any(re.match(r"\[\d/4\] game \d: ", line) for line in out)
    wait_until(lambda: not marked(mark), timeout=10,
               what=f"the resumed run's engines to be gone: {marked(mark)}")


def test_resume_kills_what_an_earlier_run_left_when_its_keepers_died_too(
    tmp_path: Path,
) -> None:
    """The last line of defence: the director and every keeper SIGKILLed at once (as the
    OOM killer or ``kill -9 -1`` might), the wrappers' children orphaned to init; the
    resumed run finds them by the state file's groups, checks each member, kills them."""
    mark = f"orphans-{os.getpid()}"
    file = tournament(tmp_path, mark)
    state = tmp_path / "games" / "tournament-state.json"
    with Cli("tournament", str(file)) as first:
        wait_until(lambda: finished(state) >= 1 and len(marked(mark)) >= 6, timeout=60,
                   what="game 2 under way")
        engines = json.loads(state.read_text())["engines"]
        keepers = [info["pgid"] for info in engines.values() if info.get("pgid")]
        assert len(keepers) == 2
        os.kill(first.pid, signal.SIGKILL)
        for keeper in keepers:
            os.kill(keeper, signal.SIGKILL)
        first.proc.wait(10)
    # The engines die with their keeper (PDEATHSIG); what the shells started stays.
    wait_until(lambda: all(p not in keepers for p in marked(mark)), timeout=10,
               what="the keepers to be gone")
    orphans = marked(mark)
    assert orphans, "nothing was left to clean up: the test proves nothing"

    second = Cli("tournament", str(file), "--resume")
    wait_until(lambda: not alive(orphans), timeout=20,
               what=f"the resumed run to kill the orphans {alive(orphans)}")
    second.wait(90)
    out = second.out.drain()
    second.close()
    assert second.proc.returncode == 0, out
    assert [line for line in out if "left running by the earlier run" in line], out
    wait_until(lambda: not marked(mark), timeout=10, what="no process of either run")
