"""The rig's web page numbers each game once across the rig (issue #36, point 12)."""

from __future__ import annotations

from typing import Any

from dxserial.live.view import LiveView
from dxserial.live.web import WebView
from dxserial.serve.page import RigPage


def game(number: int, white: str) -> dict[str, Any]:
    return {"kind": "game", "number": number, "fen": None, "minutes": 5, "white": white,
            "black": "B"}


def move(number: int, pdn: str) -> dict[str, Any]:
    return {"kind": "move", "number": number, "ply": 1, "pdn": pdn, "colour": "White",
            "fen": None, "seconds": 1}


def test_a_restarted_line_s_games_take_new_numbers_and_none_vanishes() -> None:
    page = RigPage(WebView(LiveView("rig"), ()))
    page.publish("one", game(1, "first"))
    page.publish("one", move(1, "32-28"))
    page.publish("two", game(1, "other"))
    page.publish("one", {"kind": "result", "number": 1, "result": "2-0", "reason": "resign"})
    # A reload changed line one: its new bridge numbers its games from 1 again.
    page.publish("one", game(1, "second"))
    page.publish("one", move(1, "33-29"))
    games = page.view.live.snapshot()["games"]
    assert [(g["number"], g["white"], g["moves"]) for g in games] == [
        (1, "[one] first", ["32-28"]),
        (2, "[two] other", []),
        (3, "[one] second", ["33-29"]),
    ]
    assert games[0]["result"] == "2-0" and games[2]["result"] is None
