"""Adjudication on the engines' scores: a draw both agree on, a loss both see, named in
Termination; off by default; refused in one line for an engine that reports no scores."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_conductor import Game

from dxserial.errors import ConfigError
from dxserial.game.adjudication import Adjudication, Adjudicator, DrawRule, ResignRule
from dxserial.game.thinking import Thinking
from dxserial.protocol.messages import Chat, Colour, EndReason, GameEnd
from dxserial.tournament.spec import TournamentSpec

W, B = Colour.WHITE, Colour.BLACK
HUB = '[engines.{0}]\nspeaks = "hub"\ncommand = ["{1}", "-m", "dxserial", "hub-engine"]\n'


def said(score: float | None) -> Thinking | None:
    return None if score is None else Thinking(score, 10)


def run(rules: Adjudication, plies: list[float | None], first_move: int = 1) -> list[str]:
    """The result after each ply (White first), "" while none."""
    judge = Adjudicator(rules)
    out = []
    for ply, score in enumerate(plies):
        result = judge.observe(W if ply % 2 == 0 else B, said(score), first_move + ply // 2)
        out.append(result.result if result else "")
    return out


def test_a_draw_needs_both_sides_within_the_margin_for_n_moves_after_move_m() -> None:
    rules = Adjudication(draw=DrawRule(after_move=3, moves=2, margin=0.1))
    assert run(rules, [0.0, 0.05, -0.1, 0.0, 0.02]) == ["", "", "", "", "1-1"]  # at move 3
    assert run(rules, [0.0, 0.05, -0.1, 0.2, 0.02, 0.0, 0.0, 0.0])[-3:] == ["", "", "1-1"]
    assert run(rules, [0.0] * 8, first_move=1)[:4] == ["", "", "", ""]  # not before move 3


def test_a_loss_needs_the_losers_score_confirmed_by_its_opponent() -> None:
    rules = Adjudication(resign=ResignRule(moves=2, score=3.0))
    assert run(rules, [4.0, -4.0, 5.0, -3.0]) == ["", "", "", "2-0"]
    assert run(rules, [-4.0, 4.0, -5.0, 3.5]) == ["", "", "", "0-2"]
    assert run(rules, [4.0, -1.0, 5.0, -4.0, 5.0]) == [""] * 5  # Black does not agree yet
    # A forced move (no score) neither counts nor breaks the run.
    assert run(rules, [4.0, -4.0, None, None, 5.0, -3.0]) == ["", "", "", "", "", "2-0"]


def test_off_by_default() -> None:
    assert not Adjudication().on
    assert run(Adjudication(), [9.0, -9.0] * 20) == [""] * 40


def test_the_conductor_ends_the_game_tells_both_and_names_it() -> None:
    game = Game(moves=40, adjudication=Adjudication(resign=ResignRule(moves=1, score=2.0)))
    game.a.reports_thinking = game.b.reports_thinking = True
    game.start()
    game.send("A", b"Cthinking score=2.50 depth=9", after=0.0)
    game.send("A", b"M0000332800")
    game.take("B")
    game.send("B", b"Cthinking score=-2.00 depth=8", after=0.0)
    game.send("B", b"M0000182300")
    reason = game.conductor.result.reason if game.conductor.result else ""
    assert game.conductor.result is not None and game.conductor.result.result == "2-0"
    assert reason.startswith("adjudicated: Black lost")
    assert Chat(text=f"referee: {reason}") in game.take("A")
    sent = game.take("B")  # the loser is told first (it is to move): "I win"
    assert sent[0] == Chat(text=f"referee: {reason}")
    assert isinstance(sent[1], GameEnd) and sent[1].reason is EndReason.WIN


def test_a_pairing_with_an_engine_that_reports_no_scores_is_refused_in_one_line() -> None:
    text = ("adjudicate_draw = {}\n" + HUB.format("scan", sys.executable)
            + '[engines.gwd]\nendpoint = "tcp://127.0.0.1:27531"\n')
    with pytest.raises(ConfigError) as err:
        TournamentSpec.from_toml(text)
    assert "engine 'gwd' reports no scores" in str(err.value) and "\n" not in str(err.value)
    hubs = HUB.format("one", sys.executable) + HUB.format("two", sys.executable)
    spec = TournamentSpec.from_toml("adjudicate_draw = { moves = 4 }\n" + hubs)
    assert spec.adjudication == Adjudication(draw=DrawRule(moves=4))
    for bad, says in (("adjudicate_draw = 3", "must be a table"),
                      ("adjudicate_resign = { moves = 0 }", "moves must be a whole number >= 1"),
                      ("adjudicate_resign = { score = -1 }", "score must be a number of men > 0"),
                      ("adjudicate_draw = { margins = 1 }", "unknown setting(s) margins")):
        with pytest.raises(ConfigError, match=None) as err:
            TournamentSpec.from_toml(bad + "\n" + hubs)
        assert says in str(err.value), (bad, str(err.value))


@pytest.mark.e2e
def test_hub_engines_adjudicated_draw_and_loss_named_in_termination(tmp_path: Path) -> None:
    from helpers import run_dxserial
    from pdn_check import both_read

    from dxserial.game.pdn import read_pdn

    file = tmp_path / "lab.toml"
    file.write_text(
        'max_moves = 30\nminutes = 1\nopenings = ["W:W31-50:B1-5", ""]\n'
        "adjudicate_draw = { after_move = 3, moves = 2, margin = 0.1 }\n"
        "adjudicate_resign = { moves = 2, score = 3.0 }\n"
        + HUB.format("a", sys.executable) + HUB.format("b", sys.executable)
    )
    done = run_dxserial("tournament", file, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    games = read_pdn(tmp_path / "games" / "event.pdn")
    assert [g.result for g in games] == ["2-0", "2-0", "1-1", "1-1"]
    for game in games[:2]:  # five men against twenty: White's win, both scores agreeing
        assert game.termination.startswith("adjudicated: Black lost, its score at or below -3")
        assert game.plies < 30
    for game in games[2:]:
        assert game.termination == "adjudicated: draw, both scores within 0.1 for 2 moves from move 3"
    both_read(tmp_path / "games" / "event.pdn", games=4)
