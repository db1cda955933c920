"""Ballots by name: the 2-move ballots made from the rules, the shared FEN lists read as
they are (Moby Dam's files, or files of their shape made here), an order, a seed and a start,
and both colours of every ballot in the schedule."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from dxserial.draughts import Position
from dxserial.draughts.ballots import two_move_ballots
from dxserial.errors import ConfigError
from dxserial.tournament.event import Schedule
from dxserial.tournament.spec import TournamentSpec, parse_opening

ENGINES = """
[engines.alpha]
endpoint = "tcp://127.0.0.1:27531"
[engines.beta]
endpoint = "tcp://127.0.0.1:27532"
"""
#: Moby Dam's test folder (``test/`` of its source), for the tests on the real files.
MOBYDAM = os.environ.get("DXSERIAL_MOBYDAM_TEST")
#: The two 2-move ballots the shared 79 leave out (White captures at once after them).
LEFT_OUT = {"1. 31-27 16-21", "1. 32-27 16-21"}


def spec(head: str, tmp_path: Path | None = None) -> TournamentSpec:
    return TournamentSpec.from_toml(head + ENGINES, base=tmp_path)


def full_fen(position: Position) -> str:
    """A FEN as the shared match files write it: every square listed, no ranges."""
    return position.to_fen()


def matchfile(path: Path, positions: list[Position]) -> Path:
    """A FEN list in the shared files' shape: one full FEN a line, CRLF line ends."""
    path.write_bytes("".join(f"{full_fen(p)}\r\n" for p in positions).encode())
    return path


def three_ply_positions() -> list[Position]:
    seen: dict[str, Position] = {}
    for text in two_move_ballots():
        after = parse_opening(text).position
        assert after is not None
        for move in after.legal_moves():
            position = after.play(move)
            seen.setdefault(position.to_fen(), position)
    return list(seen.values())


def test_two_move_ballots_are_every_first_move_and_answer() -> None:
    ballots = two_move_ballots()
    assert len(ballots) == 81 == len(set(ballots))
    positions = [parse_opening(b).position for b in ballots]
    assert all(p is not None and p.turn.name == "WHITE" for p in positions)
    assert len({p.to_fen() for p in positions if p is not None}) == 81
    assert ballots[0] == "1. 31-26 16-21" and set(ballots) >= LEFT_OUT


def test_openings_2_move_plays_every_ballot_with_both_colours_as_pairs() -> None:
    s = spec('openings = "2-move"\n')
    assert [o.text for o in s.openings] == two_move_ballots()
    games = Schedule(s).games
    assert len(games) == 162
    assert Counter(g.opening for g in games) == Counter({i: 2 for i in range(81)})
    for first, second in zip(games[::2], games[1::2], strict=True):  # a pair, one after the other
        assert first.opening == second.opening
        assert (first.white, first.black) == (second.black, second.white)


def test_three_move_by_name_asks_for_the_file() -> None:
    with pytest.raises(ConfigError) as err:
        spec('openings = "3-move"\n')
    assert "openings_file" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError, match='"2-move"'):
        spec('openings = "4-move"\n')


def test_a_3_move_matchfile_of_331_positions_plays_662_games(tmp_path: Path) -> None:
    positions = three_ply_positions()[:331]
    matchfile(tmp_path / "3-move ballots uniq matchfile.fen", positions)
    s = spec('openings_file = "3-move ballots uniq matchfile.fen"\n', tmp_path)
    assert len(s.openings) == 331
    assert [o.position for o in s.openings] == positions  # CRLF, full FENs: read as they are
    assert all(o.position is not None and o.position.turn.name == "BLACK" for o in s.openings)
    assert len(Schedule(s).games) == 662


def test_random_order_is_a_seeded_shuffle_and_start_skips() -> None:
    plain = [o.text for o in spec('openings = "2-move"\n').openings]
    one = [o.text for o in spec(
        'openings = "2-move"\nopenings_order = "random"\nopenings_seed = 7\n').openings]
    again = [o.text for o in spec(
        'openings = "2-move"\nopenings_order = "random"\nopenings_seed = 7\n').openings]
    other = [o.text for o in spec(
        'openings = "2-move"\nopenings_order = "random"\nopenings_seed = 8\n').openings]
    assert one == again and sorted(one) == sorted(plain) and one != plain and one != other
    started = [o.text for o in spec(
        'openings = "2-move"\nopenings_order = "random"\nopenings_seed = 7\n'
        "openings_start = 11\n").openings]
    assert started == one[10:]
    games = Schedule(spec('openings = "2-move"\nopenings_start = 81\n')).games
    assert [(g.opening, g.white) for g in games] == [(0, "alpha"), (0, "beta")]


def test_a_changed_order_is_another_tournament_for_resume() -> None:
    base = 'openings = "2-move"\nopenings_order = "random"\n'
    a = Schedule(spec(base + "openings_seed = 1\n")).fingerprint
    assert a == Schedule(spec(base + "openings_seed = 1\n")).fingerprint
    assert a != Schedule(spec(base + "openings_seed = 2\n")).fingerprint
    assert a != Schedule(spec(base + "openings_seed = 1\nopenings_start = 2\n")).fingerprint


@pytest.mark.parametrize(("head", "says"), [
    ('openings = "2-move"\nopenings_order = "shuffled"\n', "openings_order must be"),
    ('openings = "2-move"\nopenings_seed = 3\n', 'needs openings_order = "random"'),
    ('openings = "2-move"\nopenings_start = 0\n', "openings_start must be a whole number >= 1"),
    ('openings = "2-move"\nopenings_start = 82\n', "there are 81 opening(s)"),
    ("openings_start = 2\n", "need openings"),
])
def test_bad_ballot_settings_are_one_line(head: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        spec(head)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.skipif(MOBYDAM is None, reason="DXSERIAL_MOBYDAM_TEST: Moby Dam's test/ folder")
def test_moby_dams_shared_files_as_they_are() -> None:
    folder = Path(str(MOBYDAM))
    two = spec('openings_file = "2-move ballots matchfile.fen"\n', folder).openings
    made = {parse_opening(b).position: b for b in two_move_ballots()}
    assert len(two) == 79
    assert [made[o.position] for o in two] == [b for b in two_move_ballots() if b not in LEFT_OUT]
    three = spec('openings_file = "3-move ballots uniq matchfile.fen"\n', folder).openings
    assert len(three) == 331 and len(Schedule(spec(
        'openings_file = "3-move ballots uniq matchfile.fen"\n', folder)).games) == 662


@pytest.mark.e2e
def test_a_2_move_tournament_plays_every_ballot_twice_with_colours_reversed(
    tmp_path: Path,
) -> None:
    from helpers import run_dxserial
    from pdn_check import both_read

    from dxserial.game.pdn import read_pdn

    engine = [sys.executable, "-m", "dxserial", "engine", "tcp://127.0.0.1:{port}",
              "--role", "follower", "--depth", "1"]
    table = "".join(
        f'[engines.{name}]\nspeaks = "dxp-client"\ncommand = {json.dumps(engine)}\n'
        for name in ("a", "b")
    )
    file = tmp_path / "lab.toml"
    file.write_text('openings = "2-move"\nopenings_order = "random"\nopenings_seed = 5\n'
                    "max_moves = 1\nminutes = 1\n" + table)
    done = run_dxserial("tournament", file, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    games = read_pdn(tmp_path / "games" / "event.pdn")
    assert len(games) == 162
    made = {parse_opening(b).position: b for b in two_move_ballots()}
    pairs = Counter((made[g.start_position], g.white, g.black) for g in games)
    assert set(pairs.values()) == {1}
    assert {b for b, _, _ in pairs} == set(made.values())
    assert all((b, black, white) in pairs for b, white, black in pairs)  # colours reversed
    order = [o.text for o in spec(
        'openings = "2-move"\nopenings_order = "random"\nopenings_seed = 5\n').openings]
    assert [made[g.start_position] for g in games[::2]] == order  # in the shuffled order
    both_read(tmp_path / "games" / "event.pdn", games=162)


def test_after_a_verdict_only_the_other_colour_of_a_begun_ballot_is_played() -> None:
    schedule = Schedule(spec('openings = "2-move"\n'))
    games = schedule.games
    assert all(schedule.partner(schedule.partner(g)) == g != schedule.partner(g) for g in games)
    # Game 3 (ballot 2, first colour) was in play when the SPRT decided; 1 and 2 are done.
    ready = schedule.ready({1, 2, 3}, [])
    assert [g.number for g in schedule.halves(ready, {1, 2, 3}, [])] == [4]
    assert schedule.halves(schedule.ready({1, 2}, []), {1, 2}, []) == []
    running = [games[4]]  # game 5 still playing (engines run per game): 6 may start, 7 not
    ready = schedule.ready({1, 2, 3, 4}, running, parallel=("alpha", "beta"))
    assert [g.number for g in ready][:2] == [6, 7]
    assert [g.number for g in schedule.halves(ready, {1, 2, 3, 4}, running)] == [6]


@pytest.mark.e2e
def test_killed_and_resumed_with_concurrency_every_ballot_has_both_colours(
    tmp_path: Path,
) -> None:
    import signal

    from helpers import run_dxserial

    from dxserial.game.pdn import read_pdn
    from dxserial.testing.process import Cli, wait_until

    engine = [sys.executable, "-m", "dxserial", "engine", "tcp://127.0.0.1:{port}",
              "--role", "follower", "--depth", "1"]
    table = "".join(
        f'[engines.{name}]\nspeaks = "dxp-client"\ncommand = {json.dumps(engine)}\n'
        for name in ("a", "b")
    )
    file = tmp_path / "lab.toml"
    file.write_text('openings = "2-move"\nopenings_order = "random"\nopenings_seed = 3\n'
                    "concurrency = 2\nmax_moves = 1\nminutes = 1\n" + table)
    state = tmp_path / "games" / "tournament-state.json"

    def finished() -> int:
        return len(json.loads(state.read_text())["games"]) if state.exists() else 0

    with Cli("tournament", str(file)) as first:
        wait_until(lambda: finished() >= 20, timeout=120, what="20 finished games")
        first.stop(signal.SIGKILL)  # a crash, with games in play
    assert finished() < 162
    done = run_dxserial("tournament", file, "--resume", timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    games = read_pdn(tmp_path / "games" / "event.pdn")
    assert len(games) == 162
    played = Counter((g.start_fen, g.white) for g in games)
    assert set(played.values()) == {1} and len({fen for fen, _ in played}) == 81
