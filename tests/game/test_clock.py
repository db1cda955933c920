"""The director's clock (dxserial.game.clock) and the arbiter's settings, on a fake clock."""

from __future__ import annotations

import pytest

from dxserial.draughts.pieces import Colour
from dxserial.errors import ConfigError
from dxserial.game.arbiter import ArbiterSettings, clock_left, time_loss
from dxserial.game.clock import GameClock, TimeControl

W, Z = Colour.WHITE, Colour.BLACK


def test_time_runs_from_delivery_to_answer_less_the_margin() -> None:
    clock = GameClock(TimeControl(60.0, margin=0.25))
    clock.start(W, 100.0)
    assert clock.left(W, 110.0) == pytest.approx(60 - 9.75)
    assert clock.stop(W, 110.0) == pytest.approx(9.75)
    assert clock.left(W, 500.0) == pytest.approx(50.25)  # stopped: no longer runs
    clock.start(Z, 110.1)
    assert clock.stop(Z, 110.2) == 0.0  # within the margin: the line's time, not charged
    assert clock.left(Z, 111.0) == 60.0


def test_the_flag_falls_after_time_and_margin() -> None:
    clock = GameClock(TimeControl(5.0, margin=0.5))
    clock.start(W, 0.0)
    assert clock.flag_at() == pytest.approx(5.5)
    assert clock.fallen(5.49) is None
    assert clock.fallen(5.5) is W
    result = time_loss(W, "A", clock, 6.0)
    assert result.result == "0-2" and result.reason.startswith("White A lost on time (5 s")
    assert clock_left(clock, 6.0) == {"White": 0.0, "Black": 5.0}


def test_an_answer_after_the_flag_leaves_the_side_fallen() -> None:
    clock = GameClock(TimeControl(5.0))
    clock.start(Z, 0.0)
    clock.stop(Z, 7.0)
    assert clock.fallen(7.0) is Z and clock.flag_at() is None


def test_time_for_a_number_of_moves_comes_again_after_them() -> None:
    clock = GameClock(TimeControl.from_gamereq(1, 2))  # 1 minute for 2 moves
    for start in (0.0, 100.0):
        clock.start(W, start)
        clock.stop(W, start + 20.0)
    assert clock.left(W, 300.0) == pytest.approx(60 - 40 + 60)


def test_settings_defaults_and_the_time_controls() -> None:
    settings = ArbiterSettings()
    assert settings.fmjd and settings.on_false_claim == "loss"
    assert settings.control(5, 75) == TimeControl(300.0, 75, 0.3)
    assert ArbiterSettings(time_control="off").control(5, 75) is None
    assert ArbiterSettings(time_control="2.5s").control(5, 75) == TimeControl(2.5, 0, 0.3)
    assert settings.control(0, 0) is None  # a GAMEREQ with no time: nothing to keep


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"draw_rules": "fide"}, "--draw-rules: 'fide' is not 'fmjd' or 'off'"),
        ({"on_false_claim": "win"}, "--on-false-claim: 'win' is not 'loss' or 'as-claimed'"),
        ({"time_control": "5m"}, "--time-control: '5m' is not 'on', 'off' or seconds"),
        ({"time_control": "-1s"}, "--time-control: '-1s'"),
        ({"clock_margin": -1}, "--clock-margin: must be seconds"),
        ({"clock_margin": True}, "--clock-margin: must be seconds"),
    ],
)
def test_bad_settings_are_one_clear_line(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(")):
        ArbiterSettings.checked(values, lambda key: "--" + key.replace("_", "-"))


def test_the_match_starts_a_clock_where_the_link_delivered_the_move() -> None:
    from dxserial.match.engine import Engine
    from dxserial.match.rules import clock_from_delivery

    side = Engine("B")
    clock = GameClock(TimeControl(10.0))
    clock.start(Z, 100.0)  # the MOVE was sent at 100.0
    side.delivered = (b"M0000322800", 99.0)  # an older delivery of the same bytes
    clock_from_delivery(clock, side, Z, b"M0000322800")
    assert clock.since == 100.0
    side.delivered = (b"Cchat", 100.2)  # something else delivered
    clock_from_delivery(clock, side, Z, b"M0000322800")
    assert clock.since == 100.0
    side.delivered = (b"M0000322800", 100.13)  # the echo of its end byte came back
    clock_from_delivery(clock, side, Z, b"M0000322800")
    assert clock.since == 100.13 and clock.flag_at() == pytest.approx(110.13)
