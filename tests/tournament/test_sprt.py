"""The SPRT statistics against published figures, and its verdicts."""

from __future__ import annotations

import math

import pytest

from dxserial.errors import ConfigError
from dxserial.tournament.sprt import SprtConfig, SprtState, logistic_llr, parse_sprt


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "llr"),
    [
        # fastchess's tests/sprt test cases "logistic pentanomial 1" and "2": pair counts
        # LL, LD, WL + DD, WD, WW and the LLR its logistic model gives.
        ([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, -3.07),
        ([871, 26175, 55003 + 980, 26678, 821], 0.0, 2.0, -4.98),
    ],
)
def test_llr_matches_the_published_figures(
    counts: list[int], elo0: float, elo1: float, llr: float
) -> None:
    assert logistic_llr(counts, elo0, elo1) == pytest.approx(llr, abs=0.006)


def test_bounds_are_walds() -> None:
    cfg = SprtConfig(0, 5, 0.05, 0.05)
    assert cfg.lower == pytest.approx(-2.944, abs=1e-3)
    assert cfg.upper == pytest.approx(2.944, abs=1e-3)


def test_a_clearly_stronger_engine_is_accepted_and_a_weaker_one_rejected() -> None:
    state = SprtState(SprtConfig(0, 50))
    while state.verdict() is None:
        state.add_pair(1.0, 0.5)  # a win and a draw, then two draws
        state.add_pair(0.5, 0.5)
    assert state.verdict() == "H1" and state.pairs < 40
    # The chart's curve: the LLR after each pair, ending where the verdict was reached.
    assert len(state.history) == state.pairs and state.history[-1] == state.llr()
    assert max(state.history[:-2]) < state.config.upper <= state.history[-1]  # pairs of pairs
    elo, low, high = state.elo()
    assert low < elo < high and elo > 50
    weak = SprtState(SprtConfig(0, 50))
    for _ in range(30):
        weak.add_pair(0.0, 0.5)
    assert weak.verdict() == "H0"
    assert "H0 accepted: LLR" in weak.line() and "pentanomial [0, 30, 0, 0, 0]" in weak.line()


def test_no_pairs_no_verdict() -> None:
    state = SprtState(SprtConfig())
    assert state.llr() == 0.0 and state.verdict() is None
    assert state.elo()[1] == -math.inf


@pytest.mark.parametrize(
    ("table", "words"),
    [({"elo0": 5, "elo1": 0}, "elo0 must be below elo1"), ({"alpha": 1.5}, "alpha and beta"),
     ({"elo": 1}, "unknown setting"), ({"beta": "x"}, "must be numbers")],
)
def test_a_bad_sprt_table_is_one_line(table: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        parse_sprt(table, "lab.toml")
