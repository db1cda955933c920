"""``dxserial tournament``: four built-in engines (two on NULMODEM virtual cables, one on a
cable exported by a real ser2net over RFC 2217, one on TCP) play a round robin; the
director is killed halfway and resumed without replaying a finished game."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
from pdn_check import both_read

from dxserial.game.pdn import read_pdn
from dxserial.testing.process import Cli, free_port, wait_until
from dxserial.testing.rig import start_serial_engine
from dxserial.testing.ser2net import SER2NET_MISSING, Ser2net

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def finished(state: Path) -> dict[int, dict[str, str]]:
    if not state.exists():
        return {}
    return {g["number"]: g for g in json.loads(state.read_text())["games"]}


def lines_until_exit(cli: Cli, timeout: float = 90) -> list[str]:
    """Every line the process printed, once it has exited."""
    cli.wait(timeout)
    try:
        while True:
            cli.out.expect("", timeout=10)
    except AssertionError:
        return cli.out.lines


@pytest.mark.skipif(SER2NET_MISSING is not None, reason=str(SER2NET_MISSING))
def test_round_robin_killed_halfway_and_resumed(tmp_path: Path) -> None:
    procs: list[Cli] = []
    ser2net = None
    try:
        engines = {}
        for name, seed in (("alpha", 1), ("beta", 2), ("gamma", 3)):
            where = tmp_path / name
            where.mkdir()
            vpair, engine, end = start_serial_engine(where, seed, "--depth", "1")
            procs += [vpair, engine]
            engines[name] = end
        ser2net = Ser2net(tmp_path, engines["gamma"])
        engines["gamma"] = ser2net.url
        port = free_port()
        engines["delta"] = f"listen://127.0.0.1:{port}"
        file = tmp_path / "lab.toml"
        file.write_text(
            'event = "Lab RR"\nmoves = 3\nminutes = 1\nmove_timeout = 5\npdn = "games"\n'
            + "".join(f'[engines.{n}]\nendpoint = "{e}"\n' for n, e in engines.items())
        )
        state = tmp_path / "games" / "tournament-state.json"
        args = ("tournament", str(file), "--concurrency", "2", "--echo-timeout", "2", "--max-attempts", "1000")

        def delta() -> None:
            procs.append(Cli("engine", f"tcp://127.0.0.1:{port}", "--role", "follower", "--depth", "1", "--seed", "4", "--connect-timeout", "30"))

        first = Cli(*args)
        procs.append(first)
        delta()
        wait_until(lambda: len(finished(state)) >= 4, timeout=60, what="4 finished games")
        first.stop(signal.SIGKILL)  # a crash: nothing is cleaned up
        before = finished(state)
        total = 6 * 2  # pairings x colours (openings: tests/tournament/test_tournament.py)
        assert 4 <= len(before) < total
        delta()  # the TCP engine's session ended with the director; it starts again
        second = Cli(*args, "--resume")
        procs.append(second)
        out = lines_until_exit(second)
        assert second.proc.returncode == 0, out
    finally:
        for proc in reversed(procs):
            proc.stop()
            proc.__exit__(None, None, None)
        if ser2net is not None:
            ser2net.close()
    left = total - len(before)
    assert any(line.endswith(f"{total} game(s), {left} left (resumed), 2 game(s) at the same time, PDN in {tmp_path / 'games'}") for line in out), out
    assert not [line for line in out if "forfeit" in line or "failed" in line], out
    played = [line for line in out if re.match(r"\[\d+/\d+\] game \d+:", line)]
    assert len(played) == left, played
    assert not {int(line.split()[2].rstrip(":")) for line in played} & set(before)  # none replayed
    after = finished(state)
    assert sorted(after) == list(range(1, total + 1))
    for number, game in before.items():
        assert after[number] == game
    games = tmp_path / "games"
    for number, game in after.items():
        assert len(list(games.glob(f"*-g{number}.pdn"))) == 1
        (record,) = read_pdn(games / game["pdn"])
        assert record.result == game["result"] in ("2-0", "1-1", "0-2")
        assert record.white == game["white"] and not record.violations()
    event = read_pdn(games / "event.pdn")
    both_read(games / "event.pdn", games=total)  # pydraughts reads every game of the event
    assert [int(r.round) for r in event] == list(range(1, total + 1))
    assert all(r.termination == after[int(r.round)]["reason"] for r in event)  # why each ended
    listed = out[out.index(f"games ({total}):") + 1 :][:total]
    assert [line.split()[0] for line in listed] == [str(n) for n in range(1, total + 1)]
    assert all(line.endswith(f"({after[n]['reason']})") for n, line in enumerate(listed, 1))
    table = out[out.index(next(x for x in out if x.startswith("crosstable after"))):]
    assert table[0] == f"crosstable after {total} of {total} game(s); scoring: win 2, draw 1, loss 0"
    rows = table[2:6]
    assert sorted(r.split()[1] for r in rows) == ["alpha", "beta", "delta", "gamma"]
    scores = [re.search(r"\s(\d+)/\d+\s+\d+-\d+-\d+-\d+\s", r) for r in rows]
    assert sum(int(m.group(1)) for m in scores if m) == 2 * total  # every game: 2 points
    # The field's ratings, an interval or (no points, every point) a bound, and LOS.
    rated = r"\d+-\d+-\d+-\d+\s+([+-]\d+ \[[+-]\d+, [+-]\d+\]|[<>] [+-]\d+)\s+(\d+%|-)$"
    assert all(re.search(rated, r) for r in rows), rows
