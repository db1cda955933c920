"""The tournament's sans-I/O parts: the file, the schedule, the crosstable, ratings, the state."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.draughts import Position
from dxserial.errors import ConfigError
from dxserial.game.arbiter import ArbiterSettings
from dxserial.game.clock import TimeControl
from dxserial.tournament.event import (
    GameResultEntry,
    Schedule,
    Scores,
    State,
    game_lines,
)
from dxserial.tournament.spec import TournamentSpec, parse_opening

FILE = """
event = "Lab"
moves = 3
openings = ["1. 32-28 18-23", "W:W31-50:B1-20"]
[engines.alpha]
endpoint = "/dev/ttyUSB0"
[engines.beta]
endpoint = "tcp://127.0.0.1:27531"
link = "nul"
[engines.gamma]
endpoint = "rfc2217://10.0.0.2:7000"
baud = 2400
[engines.delta]
endpoint = "listen://127.0.0.1:0"
"""


def spec(text: str = FILE, **extra: object) -> TournamentSpec:
    head = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in extra.items())
    return TournamentSpec.from_toml(head + text, base=Path("/lab"))


def test_round_robin_plays_each_opening_with_both_colours() -> None:
    schedule = Schedule(spec())
    games = schedule.games
    assert len(games) == 6 * 2 * 2  # 6 pairings, 2 openings, both colours
    for a, b in (("alpha", "beta"), ("gamma", "delta")):
        for opening in (0, 1):
            colours = {(g.white, g.black) for g in games if g.opening == opening and {g.white, g.black} == {a, b}}
            assert colours == {(a, b), (b, a)}
    assert [g.number for g in games] == list(range(1, 25))
    assert spec().pdn == Path("/lab/games")


def test_gauntlet_pairs_one_engine_with_every_other() -> None:
    s = spec(format="gauntlet", gauntlet="beta", rounds=2)
    games = Schedule(s).games
    assert all("beta" in (g.white, g.black) for g in games)
    assert len(games) == 3 * 2 * 2 * 2  # opponents x openings x colours x rounds


def test_ready_games_never_share_an_engine_and_skip_finished_ones() -> None:
    schedule = Schedule(spec())
    first = schedule.ready(done=[], running=[])
    engines = [n for g in first for n in (g.white, g.black)]
    assert len(engines) == len(set(engines)) == 4  # two games at once with four engines
    running = first[:1]
    more = schedule.ready(done=[], running=running)
    assert running[0] not in more
    assert not {running[0].white, running[0].black} & {n for g in more for n in (g.white, g.black)}
    done = [g.number for g in schedule.games[:-1]]
    assert schedule.ready(done=done, running=[]) == [schedule.games[-1]]


def test_an_engine_is_stopped_after_its_own_last_game() -> None:
    schedule = Schedule(spec())
    last = schedule.games[-1]
    done = [g.number for g in schedule.games[:-1]]
    assert schedule.last_for(last, done) == {last.white, last.black}
    assert schedule.last_for(schedule.games[0], []) == set()


def test_openings_as_moves_and_as_fen() -> None:
    moved = parse_opening("1. 32-28 18-23")
    assert moved.position is not None and moved.position.turn.name == "WHITE"
    assert moved.position != Position.start()
    assert parse_opening("W:W31-50:B1-20").position == Position.start()
    assert parse_opening("").position is None
    with pytest.raises(ConfigError, match="32-27"):
        parse_opening("1. 32-27 32-27")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[engines.a]\nendpoint = "x"\n', "at least two"),
        (FILE + "colour = 1\n", "unknown setting"),
        ('format = "swiss"\n' + FILE, "swiss"),
        ('format = "gauntlet"\n' + FILE, "gauntlet ="),
        ("rounds = 0\n" + FILE, "rounds"),
        ("move_timeout = 0\n" + FILE, "move_timeout"),
        ('openings = ["1. 31-26 31-26"]\n' + FILE.replace("openings =", "# openings ="), "opening"),
        ('draw_rules = "fide"\n' + FILE, "draw_rules: 'fide' is not 'fmjd' or 'off'"),
        ('on_false_claim = "draw"\n' + FILE, "on_false_claim"),
        ('time_control = "5 min"\n' + FILE, "time_control"),
        ("clock_margin = -0.1\n" + FILE, "clock_margin"),
        ("max_moves = 40\n" + FILE, "moves is the old name of max_moves"),  # FILE: moves
        ("time_moves = 1000\n" + FILE, "time_moves"),
        ("pdn_notes = 1\n" + FILE, "pdn_notes must be true or false"),
    ],
)
def test_a_bad_file_is_refused_in_one_line(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as info:
        TournamentSpec.from_toml(text)
    assert "\n" not in str(info.value)


def test_the_time_control_apart_from_the_move_limit() -> None:
    new = FILE.replace("moves = 3\n", "")
    default = TournamentSpec.from_toml(new)
    assert (default.minutes, default.time_moves, default.moves) == (5, None, 75)
    chosen = TournamentSpec.from_toml(
        "minutes = 2\ntime_moves = 40\nmax_moves = 120\npdn_notes = true\n" + new
    )
    assert (chosen.minutes, chosen.time_moves, chosen.moves, chosen.pdn_notes) == (
        2, 40, 120, True)
    old = spec()  # FILE says moves = 3: the old name, the same limit
    assert old.moves == 3 and old.time_moves is None
    # A file of before keeps its schedule's fingerprint (a --resume goes on with it).
    same = TournamentSpec.from_toml("max_moves = 3\n" + new, base=Path("/lab"))
    assert Schedule(old).fingerprint == Schedule(same).fingerprint
    assert Schedule(spec(time_moves=40)).fingerprint != Schedule(old).fingerprint


def test_arbiter_keys_default_to_fmjd_loss_and_the_gamereq_clock() -> None:
    assert spec().arbiter == ArbiterSettings("fmjd", "loss", "on", 0.3)
    chosen = spec(draw_rules="off", on_false_claim="as-claimed", time_control="off")
    assert chosen.arbiter == ArbiterSettings("off", "as-claimed", "off", 0.3)
    assert spec(time_control="20s", clock_margin=0.5).arbiter.control(5, 75) == TimeControl(
        20.0, 0, 0.5
    )


def test_the_games_list_says_why_each_game_ended() -> None:
    games = {2: entry(2, "b", "a", "1-1"), 1: entry(1, "a", "b", "2-0")}
    assert game_lines(games) == ["games (2):", "    1  a - b  2-0  (test)", "    2  b - a  1-1  (test)"]


def entry(n: int, white: str, black: str, result: str) -> GameResultEntry:
    return GameResultEntry(n, white, black, result, "test", None, "Eng", "Eng")


def test_crosstable_scores_two_one_zero() -> None:
    scores = Scores(["a", "b", "c"])
    for e in (entry(1, "a", "b", "2-0"), entry(2, "b", "a", "1-1"), entry(3, "c", "a", "0-2"), entry(4, "b", "c", "*")):
        scores.add(e)
    assert [scores.lines[n].points for n in "abc"] == [5, 1, 0]
    assert scores.order() == ["a", "b", "c"]
    table = scores.table(4, 6)
    assert table[0] == "crosstable after 4 of 6 game(s); scoring: win 2, draw 1, loss 0"
    row_a = table[2].split()
    assert row_a[:4] == ["1", "a", "(Eng)", "x"]
    assert row_a[4:6] == ["3/4", "2/2"] and row_a[6] == "5/6" and row_a[7] == "2-1-0-0"
    assert "0-1-1-1" in table[3]  # b: the unfinished game counts as played, scores nothing


def test_the_crosstable_rates_the_field_jointly_with_bounds_for_a_zero_score() -> None:
    scores = Scores(["a", "b", "c"])
    results = ["2-0", "1-1", "2-0", "0-2", "0-2", "2-0"]
    for n, (white, black) in enumerate([("a", "b"), ("b", "a"), ("b", "c"), ("c", "b"),
                                         ("c", "a"), ("a", "c")], 1):
        scores.add(entry(n, white, black, results[n - 1]))
    table = scores.table(6, 6)
    assert "rating [95%]" in table[1] and "LOS" in table[1] and "Elo" not in table[1]
    c_row = next(line for line in table if line.split()[1] == "c")
    assert "< " in c_row and "inf" not in c_row  # c scored nothing: a bound
    assert table[-1].startswith("rating: joint maximum likelihood, logistic")
    assert "performance" not in " ".join(table)


def test_state_survives_a_restart_and_refuses_another_tournament(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    state = State("abc")
    state.games[3] = entry(3, "a", "b", "2-0")
    state.save(path)
    again = State.load(path, "abc")
    assert again.games == state.games
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary file left
    with pytest.raises(ConfigError, match="different tournament"):
        State.load(path, "other")
    assert State.load(tmp_path / "none.json", "abc").games == {}


def test_every_key_of_the_file_is_described_and_the_example_reads() -> None:
    """`dxserial tournament --keys` (issue 24: --help did not describe the file's keys)."""
    from dxserial.processes import command as engine_command
    from dxserial.tournament import keys as tournament_keys
    from dxserial.tournament import spec as tournament_file

    assert set(tournament_keys.TOP) == tournament_file.KNOWN_KEYS - {"engines"}
    kinds = set().union(*engine_command.KIND_KEYS.values())
    assert set(tournament_keys.ENGINE) == {
        "endpoint", "link", "baud", *engine_command.COMMAND_KEYS, *kinds,
        *tournament_file.PLACEMENT_KEYS,
    }
    text = tournament_keys.example()
    engines = text[text.index("[engines.NAME]"):]
    two = text.replace(engines, engines.replace("NAME", "a") + "\n" + engines.replace("NAME", "b"))
    spec = TournamentSpec.from_toml(two)
    assert [e.name for e in spec.engines] == ["a", "b"] and spec.engines[0].baud == 2400
    shown = run_in_process("tournament", "--keys")
    assert shown.returncode == 0 and shown.stdout.strip() == text
    helped = run_in_process("tournament", "--help")
    assert "--keys" in helped.stdout


def test_the_state_says_which_engines_were_in_a_game_when_the_run_ended(tmp_path: Path) -> None:
    """A resumed run ends an engine's old game only on this evidence (issue 29): the games
    in play are written when they start and when they end."""
    path = tmp_path / "state.json"
    state = State("abc", playing={3: ["alpha", "beta"]})
    state.save(path)
    again = State.load(path, "abc")
    assert again.playing == {3: ["alpha", "beta"]}
    assert again.may_have_a_game_open("alpha") == "game 3 was in play when the previous run ended"
    assert again.may_have_a_game_open("gamma") is None
    State("abc").save(path)
    assert State.load(path, "abc").may_have_a_game_open("alpha") is None


def test_a_state_file_from_before_the_record_of_games_in_play_says_it_cannot_tell(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"fingerprint": "abc", "games": []}\n')
    why = State.load(path, "abc").may_have_a_game_open("alpha")
    assert why is not None and "before dxserial recorded the games in play" in why
    path.write_text('{"fingerprint": "abc", "games": [], "playing": [1, 2]}\n')
    with pytest.raises(ConfigError, match="'playing' is not a table"):
        State.load(path, "abc")
