"""The live view's clocks: the director's where it keeps one, else the engines' word."""

from __future__ import annotations

from dxserial.live.view import LiveView


def game_event(**extra: object) -> dict[str, object]:
    return {"kind": "game", "number": 1, "white": "A", "black": "B", "fen": "W:W31-50:B1-20",
            "minutes": 5, **extra}


def move_event(colour: str, seconds: int, **extra: object) -> dict[str, object]:
    return {"kind": "move", "number": 1, "ply": 1, "pdn": "32-28", "colour": colour,
            "fen": "B:W28,31,33-50:B1-20", "seconds": seconds, **extra}


def test_the_directors_clock_fills_left_and_is_preferred_over_reported_seconds() -> None:
    view = LiveView()
    update = view.apply(game_event(left={"White": 300.0, "Black": 300.0}))
    assert update is not None and update["game"]["left"] == {"White": 300.0, "Black": 300.0}
    update = view.apply(move_event("White", 0, left={"White": 287.4, "Black": 300.0}))
    assert update is not None and update["game"]["left"] == {"White": 287.4, "Black": 300.0}
    assert view.snapshot()["games"][0]["left"] == {"White": 287.4, "Black": 300.0}


def test_without_a_directors_clock_left_is_what_the_engines_reported() -> None:
    view = LiveView()
    view.apply(game_event())
    update = view.apply(move_event("White", 12))
    assert update is not None and update["game"]["left"] == {"White": 288, "Black": 300}
