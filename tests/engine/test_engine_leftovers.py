"""Engines left by a director killed together with its keepers (as the OOM killer kills a
process tree): what a wrapper started with ``setsid`` is outside every group the director
knew, and the next director that starts an engine command sweeps it by its run's mark
(issue #36, point 8; docs/engines-as-commands.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dxserial.testing.process import Cli, wait_until
from dxserial.transports.leftovers import MARK, Run, marked, sweep

pytestmark = pytest.mark.e2e

ENGINE = [sys.executable, "-m", "dxserial", "engine"]


def test_a_dead_run_s_marked_processes_are_killed_a_live_run_s_spared(tmp_path: Path) -> None:
    me = Run.me()
    dead = Run(me.pid, me.started - 1, me.boot)  # this pid, another start: that director is gone
    orphan = subprocess.Popen(["setsid", "sleep", "100000"], env={**os.environ, MARK: dead.mark})
    kept = subprocess.Popen(["sleep", "100000"], env={**os.environ, MARK: me.mark})
    try:
        folder = tmp_path / "directors"
        folder.mkdir()
        for run in (dead, me):
            (folder / f"{run.mark}.json").write_text(json.dumps(
                {"pid": run.pid, "started": run.started, "boot": run.boot}))
        wait_until(lambda: marked(dead.mark, dead.started) == [orphan.pid], timeout=10,
                   what="the orphan's environment to be readable")
        assert sweep(folder) == [(dead, [orphan.pid])]
        assert orphan.wait(10) == -signal.SIGKILL
        assert kept.poll() is None  # a live director's engine is never touched
        assert [p.name for p in folder.iterdir()] == [f"{me.mark}.json"]
    finally:
        for proc in (orphan, kept):
            proc.kill()
            proc.wait()


def engines_file(tmp_path: Path, mark: str) -> Path:
    shell = (f"setsid sleep 100000 & exec {' '.join(ENGINE)} listen://127.0.0.1:{{port}} "
             "--role follower --depth 1")
    file = tmp_path / "engines.toml"
    file.write_text(
        f'[engines.wrapped]\ncommand = {json.dumps(["sh", "-c", shell])}\nspeaks = "dxp-server"\n'
        f'env = {{ DXSERIAL_TEST_RUN = "{mark}" }}\n'
        f'[engines.plain]\ncommand = {json.dumps([*ENGINE, "tcp://127.0.0.1:{port}", "--role", "follower", "--depth", "1"])}\n'
        'speaks = "dxp-client"\n'
    )
    return file


def with_mark(mark: str) -> dict[int, bytes]:
    """Live processes whose environment holds ``DXSERIAL_TEST_RUN=mark``: pid -> cmdline."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            env = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            line = (entry / "cmdline").read_bytes()
        except (OSError, NotADirectoryError):
            continue
        if f"DXSERIAL_TEST_RUN={mark}".encode() in env.split(b"\0") and state not in "ZX":
            found[int(entry.name)] = line
    return found


def test_the_next_match_sweeps_what_a_director_killed_with_its_keepers_left(
    tmp_path: Path,
) -> None:
    mark = f"swept-{os.getpid()}"
    file = engines_file(tmp_path, mark)
    args = ["match", "--engines", str(file), "wrapped", "plain", "--moves", "40",
            "--pdn", str(tmp_path / "games")]
    with Cli(*args, "--games", "50") as first:
        wait_until(lambda: any(c.startswith(b"sleep\0") for c in with_mark(mark).values()), timeout=60,
                   what="the wrapper's setsid sleep to run")
        keepers = [pid for pid, c in with_mark(mark).items() if b"keeper.py" in c]
        for pid in [*keepers, first.pid]:  # the keepers and their director, as one kill
            os.kill(pid, signal.SIGKILL)
        first.proc.wait(10)
    wait_until(lambda: all(c.startswith(b"sleep\0") for c in with_mark(mark).values()), timeout=10,
               what="everything but the setsid sleep to be gone")
    orphans = list(with_mark(mark))
    assert orphans, "nothing was left behind: the test proves nothing"

    second = Cli(*args, "--games", "1")
    second.wait(90)
    err = second.stderr()
    second.close()
    assert second.proc.returncode == 0, err
    assert f"engines left running by an earlier director (pid {first.pid}, no longer running): " \
        "killed" in err, err
    wait_until(lambda: not with_mark(mark), timeout=10, what=f"no process left: {with_mark(mark)}")
