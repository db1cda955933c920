"""``dxserial tournament`` with its games as tasks on a real Dask scheduler and real worker
processes on 127.0.0.1: every game played once across the workers; a worker killed
mid-game, its game played again on another and scored once; an SPRT that stops by itself;
a scheduler that goes away stops the event, and --resume on a new one finishes it."""

from __future__ import annotations

import json
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip(
    "distributed", reason="Dask distributed is not installed: pip install 'dxserial[cluster]'"
)

from dxserial.testing.cluster import DaskRig, descendants
from dxserial.testing.process import Cli, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ENGINE = [sys.executable, "-m", "dxserial", "engine"]


def builtin(name: str, speaks: str = "dxp-server") -> str:
    """The built-in engine at depth 1, started by the worker for each game."""
    where = "listen://127.0.0.1:{port}" if speaks == "dxp-server" else "tcp://127.0.0.1:{port}"
    argv = [*ENGINE, where, "--role", "follower", "--depth", "1"]
    return f'[engines.{name}]\ncommand = {json.dumps(argv)}\nspeaks = "{speaks}"\n'


def running(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (a zombie waiting for init to reap it is not)."""
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def finished(folder: Path) -> dict[int, dict[str, object]]:
    path = folder / "games" / "tournament-state.json"
    games = json.loads(path.read_text())["games"] if path.exists() else []
    return {int(g["number"]): g for g in games}


def played(out: list[str]) -> dict[int, str]:
    """Game number -> the worker it was scored from, from the director's game lines; a
    game scored twice fails here."""
    seen: dict[int, str] = {}
    for line in out:
        if m := re.match(r"\[\d+/\d+\] game (\d+): .* on (\w+)  \|", line):
            number = int(m.group(1))
            assert number not in seen, f"game {number} scored twice: {out}"
            seen[number] = m.group(2)
    return seen


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskRig]:
    """One scheduler with w1 (a serial line) and w2, for the tests that neither kill a
    process of the rig nor need other workers: each test's games are its own event (its
    own folder), so they share the rig as a lab's users share theirs."""
    with DaskRig(tmp_path_factory.mktemp("rig")) as rig:
        rig.add_workers({"w1": "serial=1", "w2": ""})
        yield rig


@pytest.fixture
def rig(shared: DaskRig) -> Iterator[DaskRig]:
    """The shared rig, its workers checked alive before and after each test."""
    assert all(proc.poll() is None for proc, _ in shared.workers.values())
    yield shared
    assert all(proc.poll() is None for proc, _ in shared.workers.values())


def run_to_end(cli: Cli, timeout: float = 200) -> list[str]:
    cli.wait(timeout)
    lines = cli.out.drain()
    cli.close()
    return lines


def test_a_round_robin_plays_every_game_once_across_the_workers(
    tmp_path: Path, rig: DaskRig
) -> None:
    file = tmp_path / "lab.toml"
    file.write_text(
        f'moves = 6\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
        + builtin("a") + builtin("b", "dxp-client") + builtin("c")
    )
    cli = Cli("tournament", str(file))
    out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    where = played(out)
    assert sorted(where) == list(range(1, 7)), out
    assert set(where.values()) == {"w1", "w2"}, where  # both workers played
    state = finished(tmp_path)
    assert sorted(state) == list(range(1, 7))
    assert all(g["plies"] == 12 and g["result"] == "1-1" for g in state.values()), state
    # The workers' PDN and engine logs came back to the director's pdn folder.
    for game in state.values():
        pdn = (tmp_path / "games" / str(game["pdn"])).read_text()
        assert '[Result "1-1"]' in pdn and f'[White "{game["white"]}"]' in pdn
    event = (tmp_path / "games" / "event.pdn").read_text()
    assert event.count("[Event ") == 6
    log = (tmp_path / "games" / "a.log").read_text()
    assert log.count("--- game ") == 4 and "engine ready" in log
    assert any(line.startswith("cluster: scheduler") and "2 worker(s)" in line for line in out)


def test_a_worker_killed_mid_game_has_its_game_played_again_elsewhere(tmp_path: Path) -> None:
    with DaskRig(tmp_path) as rig:
        rig.add_workers({"w1": "", "w2": ""})
        file = tmp_path / "lab.toml"
        file.write_text(
            f'moves = 40\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
            'openings = ["", "1. 32-28 18-23"]\n' + builtin("a") + builtin("b", "dxp-client")
        )
        cli = Cli("tournament", str(file))

        def w1_mid_game() -> bool:  # an engine of w1's game wrote that it is playing
            logs = rig.games("w1").glob("dxserial-engines-*/*/*.log")
            return any("playing" in p.read_text(errors="replace") for p in logs)

        wait_until(w1_mid_game, timeout=60, what="a game under way on w1")
        kept = descendants(rig.pid("w1"))
        assert kept  # its engines are running there
        rig.signal_worker("w1", signal.SIGKILL)  # the worker alone: its engines die with it
        rig.workers["w1"][0].wait()
        wait_until(lambda: not running(kept), timeout=30,
                   what="the killed worker's engines gone")
        out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    replayed = [line for line in out if "was lost while playing it" in line]
    assert len(replayed) == 1 and "started again on worker w2" in replayed[0], out
    lost = int(re.match(r"game (\d+):", replayed[0]).group(1))  # type: ignore[union-attr]
    where = played(out)
    assert sorted(where) == [1, 2, 3, 4] and where[lost] == "w2", out
    state = finished(tmp_path)
    assert sorted(state) == [1, 2, 3, 4]
    # Played again from the start to its end: the move limit, or a result of the play (the
    # built-in engine picks among equal moves at random), never a forfeit.
    assert 0 < int(state[lost]["plies"]) <= 80, state[lost]  # type: ignore[call-overload]
    assert "forfeit" not in str(state[lost]["reason"]), state[lost]


def test_an_sprt_stops_by_itself_with_its_games_on_the_workers(
    tmp_path: Path, rig: DaskRig
) -> None:
    file = tmp_path / "sprt.toml"
    file.write_text(
        f'moves = 6\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
        "sprt = { elo0 = 0, elo1 = 200, alpha = 0.1, beta = 0.1 }\n"
        + builtin("new") + builtin("old", "dxp-client")
    )
    cli = Cli("tournament", str(file))
    out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    assert any("H0 accepted" in line for line in out), out
    where = played(out)
    state = finished(tmp_path)
    # Equal engines, every game a draw: four pairs decide; a game in flight then is kept
    # when it had started (one playing and one waiting on each worker: four at most).
    assert 8 <= len(state) <= 12 and sorted(where) == sorted(state), (out, sorted(state))
    assert set(where.values()) == {"w1", "w2"}


def test_a_scheduler_gone_stops_the_event_and_resume_finishes_it(tmp_path: Path) -> None:
    file = tmp_path / "lab.toml"
    with DaskRig(tmp_path) as rig:
        rig.add_worker("w1")
        file.write_text(
            f'moves = 6\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
            + builtin("a") + builtin("b", "dxp-client") + builtin("c")
        )
        cli = Cli("tournament", str(file))
        wait_until(lambda: len(finished(tmp_path)) >= 2, timeout=90, what="two games scored")
        rig.kill_scheduler()
        cli.wait(60)
        out, error = cli.out.drain(), cli.stderr()
        cli.close()
    assert cli.proc.returncode == 1, out
    before = finished(tmp_path)
    assert 2 <= len(before) < 6
    stopped = [line for line in out + error.splitlines() if "went away" in line]
    assert stopped and "--resume" in stopped[0], (out, error)
    with DaskRig(tmp_path / "again") as rig:  # a new scheduler elsewhere: --cluster wins
        rig.add_worker("w3")
        cli = Cli("tournament", str(file), "--resume", "--cluster", rig.address)
        out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    where = played(out)
    assert not set(where) & set(before), (sorted(where), sorted(before))  # nothing replayed
    assert sorted(finished(tmp_path)) == list(range(1, 7))
    assert set(where.values()) == {"w3"}


def test_engines_bound_to_a_host_play_only_on_its_worker(tmp_path: Path, rig: DaskRig) -> None:
    file = tmp_path / "lab.toml"
    file.write_text(
        f'moves = 6\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
        'format = "gauntlet"\ngauntlet = "b"\n'
        + builtin("a") + "resources = { serial = 1 }\n"
        + builtin("b", "dxp-client")
        + builtin("c") + 'worker = "w2"\n'
        + builtin("d")
    )
    cli = Cli("tournament", str(file))
    out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    where = played(out)
    state = finished(tmp_path)
    assert sorted(where) == sorted(state) == list(range(1, 7)), out
    for number, game in state.items():
        if "a" in (game["white"], game["black"]):
            assert where[number] == "w1", (number, where)
        if "c" in (game["white"], game["black"]):
            assert where[number] == "w2", (number, where)
    shown = {line.split(":")[0]: line for line in out if line.startswith("engine ")}
    assert shown["engine a"].endswith("(dxp-server) on serial=1"), shown
    assert shown["engine c"].endswith("(dxp-server) on worker w2"), shown
    assert shown["engine b"].endswith("(dxp-client) on any worker"), shown


def test_an_engine_that_cannot_start_on_a_worker_stops_the_event_in_one_line(
    tmp_path: Path,
) -> None:
    with DaskRig(tmp_path) as rig:
        rig.add_worker("w1")
        file = tmp_path / "lab.toml"
        broken = [sys.executable, "-c", "import sys; print('no licence here'); sys.exit(3)"]
        file.write_text(
            f'moves = 6\nminutes = 1\nmove_timeout = 10\nconnect_timeout = 10\n'
            f'cluster = "{rig.address}"\n' + builtin("a")
            + f'[engines.b]\ncommand = {json.dumps(broken)}\nspeaks = "dxp-server"\n'
            "max_restarts = 0\n"
        )
        cli = Cli("tournament", str(file))
        cli.wait(120)
        out, error = cli.out.drain(), cli.stderr()
        cli.close()
    assert cli.proc.returncode == 1, out
    assert not finished(tmp_path)  # nothing scored: --resume plays it
    assert any("started again on worker w1" in line and "tried once more" in line
               for line in out), out
    lines = [line for line in error.splitlines() if line.startswith("dxserial: error:")]
    assert len(lines) == 1 and "engine b could not be started on worker w1" in lines[0], error
    assert "--resume" in lines[0]


def test_a_game_no_worker_can_play_is_named_at_the_start(tmp_path: Path) -> None:
    with DaskRig(tmp_path) as rig:
        rig.add_worker("w1")
        file = tmp_path / "lab.toml"
        file.write_text(
            f'moves = 6\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
            + builtin("a") + 'resources = { serial = 1 }\n' + builtin("b", "dxp-client")
        )
        cli = Cli("tournament", str(file))
        line = cli.out.expect("cluster: no worker has", timeout=60)
        assert "serial=1" in line and "wait for one" in line
        # It waits (nothing is forfeited) until a worker with a serial line joins.
        rig.add_worker("w2", resources="serial=1")
        out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    assert set(played(out).values()) == {"w2"}


def test_a_stopped_director_scores_nothing_in_flight_and_resumes(
    tmp_path: Path, rig: DaskRig
) -> None:
    file = tmp_path / "lab.toml"
    file.write_text(
        f'moves = 6\nminutes = 1\nmove_timeout = 10\ncluster = "{rig.address}"\n'
        + builtin("a") + builtin("b", "dxp-client") + builtin("c")
    )
    cli = Cli("tournament", str(file))
    wait_until(lambda: len(finished(tmp_path)) >= 1, timeout=90, what="a game scored")
    cli.proc.send_signal(signal.SIGINT)
    cli.wait(60)
    out, error = cli.out.drain(), cli.stderr()
    cli.close()
    assert cli.proc.returncode == 1, (out, error)
    assert "--resume" in error, error
    before = finished(tmp_path)
    assert 1 <= len(before) < 6, (sorted(before), out)
    cli = Cli("tournament", str(file), "--resume")
    out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    assert not set(played(out)) & set(before)
    assert sorted(finished(tmp_path)) == list(range(1, 7))


def test_engines_bound_to_two_workers_are_refused_before_any_game(tmp_path: Path) -> None:
    from dxserial.cli.options import link_options
    from dxserial.cluster.runner import ClusterTournament
    from dxserial.errors import ConfigError
    from dxserial.match.standings import QuietProgress
    from dxserial.tournament.spec import TournamentSpec

    spec = TournamentSpec.from_toml(
        'cluster = "tcp://127.0.0.1:1"\n' + builtin("a") + 'worker = "w1"\n'
        + builtin("b", "dxp-client") + 'worker = "w2"\n', source="lab.toml", base=tmp_path,
    )
    options = link_options("nulmodem", 9600, "0x02", "0x03", 1.0, 5, 30)
    with pytest.raises(ConfigError, match="bound to different workers") as caught:
        ClusterTournament(spec, options, address="tcp://127.0.0.1:1", progress=QuietProgress())
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "games").exists()  # nothing written, nothing started


def standin(name: str, mode: str, speaks: str = "dxp-server") -> str:
    from dxserial.testing.standins import command

    where = "listen://127.0.0.1:{port}" if speaks == "dxp-server" else "tcp://127.0.0.1:{port}"
    return f'[engines.{name}]\ncommand = {json.dumps(command(mode, where))}\nspeaks = "{speaks}"\n'


def workers(folder: Path) -> dict[str, dict[str, object]]:
    state = json.loads((folder / "games" / "tournament-state.json").read_text())
    return dict(state.get("workers", {}))


def test_the_strict_engine_kept_on_the_workers_hears_nothing_its_state_forbids(
    tmp_path: Path, rig: DaskRig
) -> None:
    from dxserial.standins.strict import command

    def strict(name: str, where: str, speaks: str, seed: str) -> str:
        argv = command(where, "--seed", seed, "--link", "nul")
        return f'[engines.{name}]\ncommand = {json.dumps(argv)}\nspeaks = "{speaks}"\n'

    file = tmp_path / "lab.toml"
    file.write_text(
        f'moves = 5\nminutes = 1\nmove_timeout = 10\nrounds = 2\ncluster = "{rig.address}"\n'
        + strict("server", "listen://127.0.0.1:{port}", "dxp-server", "1")
        + strict("client", "tcp://127.0.0.1:{port}", "dxp-client", "2") + builtin("c")
    )
    cli = Cli("tournament", str(file))
    out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    assert sorted(played(out)) == list(range(1, 13)), out
    state = finished(tmp_path)
    assert all(g["plies"] == 10 and g["result"] == "1-1" for g in state.values()), state
    # Each game's start is printed by the director, with its worker (no terminal here).
    starts = [line for line in out if re.match(r"game \d+: White \w+ vs Black \w+ on worker w", line)]
    assert len(starts) == 12, out
    for name in ("server", "client"):
        log = (tmp_path / "games" / f"{name}.log").read_text()
        assert log.count("--- game ") == 8 and "strict engine:" not in log, log
        # Kept from game to game: started once on each worker that played it, at most.
        assert 1 <= log.count("engine ready") <= 2, log
    health = workers(tmp_path)
    assert sum(int(str(w["games"])) for w in health.values()) == 12, health
    assert any(line.startswith("worker  games  forfeits  time losses  crashes") for line in out)


def test_an_engine_that_crashes_on_a_worker_is_started_again_there(tmp_path: Path) -> None:
    with DaskRig(tmp_path) as rig:
        rig.add_worker("w1")
        file = tmp_path / "lab.toml"
        file.write_text(
            f'moves = 6\nminutes = 1\nmove_timeout = 10\nrounds = 2\ncluster = "{rig.address}"\n'
            + standin("x", "crash") + builtin("a", "dxp-client")
        )
        cli = Cli("tournament", str(file))
        out = run_to_end(cli)
        assert not descendants(rig.pid("w1"))  # the director's end stopped the kept engines
    assert cli.proc.returncode == 0, out
    assert sorted(played(out)) == [1, 2, 3, 4], out  # each scored once
    state = finished(tmp_path)
    forfeits = [g for g in state.values() if "forfeits" in str(g["reason"])]
    assert len(forfeits) == 1 and "(x) forfeits" in str(forfeits[0]["reason"]), state
    assert all(g["plies"] == 12 for g in state.values() if g not in forfeits), state
    log = (tmp_path / "games" / "x.log").read_text()
    assert log.count("standin: crash now") == 1
    health = workers(tmp_path)["w1"]
    assert (health["games"], health["crashes"], health["forfeits"]) == (4, 1, 1), health


def test_a_stopped_worker_is_noticed_from_its_silence_and_its_game_played_elsewhere(
    tmp_path: Path,
) -> None:
    with DaskRig(tmp_path) as rig:
        rig.add_workers({"w1": "", "w2": ""}, env={"DXSERIAL_STANDIN_DELAY": "0.3"})
        file = tmp_path / "lab.toml"
        file.write_text(
            f'moves = 10\nminutes = 1\nmove_timeout = 3\nconnect_timeout = 10\nrounds = 2\n'
            f'cluster = "{rig.address}"\n' + standin("s", "slow") + builtin("a", "dxp-client")
        )
        cli = Cli("tournament", str(file))
        start = cli.out.expect("game ", timeout=90)
        while not start.endswith("on worker w1"):  # a game's start line, from the director
            start = cli.out.expect("game ", timeout=90)
        kept = descendants(rig.pid("w1"))
        rig.signal_worker("w1", signal.SIGSTOP)
        cli.wait(200)
        out = start and [start, *cli.out.drain()]
        cli.close()
        rig.signal_worker("w1", signal.SIGCONT)  # it comes back: removed, it closes
        wait_until(lambda: rig.workers["w1"][0].poll() is not None, timeout=60,
                   what="the removed worker closing")
        wait_until(lambda: not running(kept), timeout=30,
                   what="its engines stopped")
    assert cli.proc.returncode == 0, out
    hung = [line for line in out if "taken for hung" in line]
    assert len(hung) == 1 and hung[0].startswith("worker w1: game "), out
    again = [line for line in out if "hung while playing it" in line]
    assert len(again) == 1 and "started again on worker w2" in again[0], out
    number = int(re.match(r"game (\d+):", again[0]).group(1))  # type: ignore[union-attr]
    where = played(out)
    assert sorted(where) == [1, 2, 3, 4] and where[number] == "w2", out
    assert finished(tmp_path)[number]["plies"] == 20
    assert workers(tmp_path)["w1"]["lost"] == 1


def test_the_worker_whose_engine_loses_on_time_stands_out(tmp_path: Path) -> None:
    with DaskRig(tmp_path) as rig:
        # s thinks 0.3 s a move on w2, 8 s on w1 (a slow host for it): it loses on time there,
        # and never on w2, whose moves are a 4 s timeout's thirteenth even on a loaded machine.
        rig.add_worker("w1", env={"DXSERIAL_STANDIN_DELAY": "8"})
        rig.add_worker("w2", env={"DXSERIAL_STANDIN_DELAY": "0.3"})
        file = tmp_path / "lab.toml"
        file.write_text(
            f'moves = 8\nminutes = 1\nmove_timeout = 4\nrounds = 6\ncluster = "{rig.address}"\n'
            + standin("s", "slow") + builtin("a", "dxp-client")
        )
        cli = Cli("tournament", str(file))
        out = run_to_end(cli)
    assert cli.proc.returncode == 0, out
    assert sorted(played(out)) == list(range(1, 13)), out
    health = workers(tmp_path)
    assert int(str(health["w1"]["time_losses"])) >= 2 and health["w2"]["time_losses"] == 0, out
    standing = [line for line in out if "stands out" in line]
    assert standing and all(line.startswith("worker w1 stands out:") for line in standing), out
    assert "time losses" in standing[0]
