"""Each worker's health on a cluster (sans-I/O): what a game's result counts as, the
table beside the crosstable, the worker that stands out, and how long a game may be
silent before its worker is taken for hung."""

from __future__ import annotations

import dataclasses

from dxserial.cluster.health import Health
from dxserial.cluster.jobs import SLACK, silence_bound, tally
from dxserial.match.rules import MatchConfig


def test_a_game_counts_its_forfeits_time_losses_and_crashes() -> None:
    assert tally("draw: move limit of 10 moves reached", [None, None]) == (0, 0, 0)
    flag = "Black b lost on time (1 min, 0.3 s over)"
    assert tally(flag, [None, None]) == (0, 1, 0)
    timeout = "White s forfeits: no move within 1 s"
    assert tally(timeout, ["no move within 1 s", None]) == (1, 1, 0)
    crash = "Black c forfeits: link lost: the engine closed the connection (exit status 134)"
    assert tally(crash, [None, "link lost: the engine closed the connection"]) == (1, 0, 1)


def test_the_worker_whose_engine_loses_on_time_stands_out_and_no_other() -> None:
    health = Health()
    for _ in range(6):
        health.add("w1", plies=3, seconds=3.0, forfeits=1, time_losses=1)
        health.add("w2", plies=20, seconds=1.0)
    health.add("w3", plies=20, seconds=1.0, forfeits=1, time_losses=1)  # one is no news
    lines = health.standing_out()
    assert len(lines) == 1 and lines[0].startswith("worker w1 stands out: 6 time losses in 6")
    table = health.table()
    assert table[0].split() == ["worker", "games", "forfeits", "time", "losses", "crashes",
                                "lost", "s/move"]
    assert table[1].split() == ["w1", "6", "6", "6", "0", "0", "1.000"]
    assert table[2].split() == ["w2", "6", "0", "0", "0", "0", "0.050"]
    assert health.state()["w1"]["time_losses"] == 6 and health.state()["w2"]["per_move"] == 0.05


def test_crashes_stand_out_too_and_a_clean_field_says_nothing() -> None:
    health = Health()
    for _ in range(4):
        health.add("w1", plies=10, seconds=1.0, crashes=1, forfeits=1)
        health.add("w2", plies=10, seconds=1.0)
    assert [line.split(":")[0] for line in health.standing_out()] == ["worker w1 stands out"]
    assert "crashes" in health.standing_out()[0]
    clean = Health()
    for _ in range(10):
        clean.add("w1", plies=10, seconds=1.0)
        clean.add("w2", plies=10, seconds=1.0)
    assert clean.standing_out() == []


def test_a_resumed_event_goes_on_from_the_saved_figures() -> None:
    health = Health()
    health.add("w1", plies=10, seconds=2.0, time_losses=1)
    health.lose("w2")
    again = Health()
    again.load(health.state())
    assert again.state() == health.state()


def test_the_silence_bound_follows_the_time_control() -> None:
    config = MatchConfig(minutes=1, move_timeout=3.0, connect_timeout=10.0)
    # A move takes at most the move timeout (the GAMEEND exchange its own, 5 s).
    assert silence_bound(config, first=False) == max(3.0, config.gameend_timeout) + SLACK
    # Before the first move: the engines' start and the GAMEACC too.
    assert silence_bound(config, first=True) == silence_bound(config, first=False) + 13.0
    slow = dataclasses.replace(config, move_timeout=120.0)
    assert silence_bound(slow, first=False) == 60.0 + SLACK  # the whole clock is shorter
