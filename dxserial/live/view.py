"""What the live web view shows, sans I/O: every game's board, moves and clocks, and the table.

A :class:`LiveView` takes the events a match, tournament or bridge reports (see
:data:`dxserial.game.news.Watcher`; the bridge adds "takeback") and keeps one card
per game; :meth:`LiveView.apply` returns what a browser needs to redraw, so the page
itself stays a dumb renderer.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LiveView", "to_move"]

#: Finished games kept on the page (the running ones are always there).
KEEP_FINISHED = 48


class LiveView:
    def __init__(self, title: str = "dxserial") -> None:
        self.title = title
        self.games: dict[int, dict[str, Any]] = {}
        self.standings: list[str] = []
        #: A tournament's ratings and its charts (SVG text by file name), when it has them.
        self.pictures: dict[str, Any] = {}
        self.heading = "Standings"  # the table's heading (a rig's page: "Lines")

    def apply(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Take one event; return the update to send to browsers (None: nothing changed)."""
        kind = event.get("kind")
        if kind == "standings":
            self.standings = [str(line) for line in event.get("table", [])]
            self.pictures = _pictures(event)
            self.heading = str(event.get("heading") or "Standings")
            return {"type": "standings", "table": self.standings, "heading": self.heading,
                    **self.pictures}
        number = event.get("number")
        if not isinstance(number, int):
            return None
        if kind == "game":
            self.games[number] = {
                "number": number,
                "white": event.get("white", "?"),
                "black": event.get("black", "?"),
                "fen": event.get("fen"),
                "opening": event.get("opening", ""),
                "minutes": event.get("minutes", 0),
                "moves": [],
                "thinking": [],  # per move: score (White's side), depth, pv, or None
                "used": {"White": 0, "Black": 0},
                "result": None,
                "reason": "",
                "clock": event.get("left"),  # the director's clock, when it keeps one
            }
            self._forget_old()
        game = self.games.get(number)
        if game is None:
            return None
        if kind == "move":
            game["moves"].append(str(event.get("pdn", "?")))
            said = event.get("thinking")
            game["thinking"].append(said if isinstance(said, dict) else None)
            if event.get("fen") is not None:  # None: position unknown, the last one stays
                game["fen"] = event["fen"]
            colour = str(event.get("colour", "White"))
            seconds = int(event.get("seconds", 0))
            if event.get("total"):  # cumulative MOVE times (GWD): the total so far
                game["used"][colour] = seconds
            else:
                game["used"][colour] = game["used"].get(colour, 0) + seconds
            if isinstance(event.get("left"), dict):
                game["clock"] = dict(event["left"])
        elif kind == "takeback":  # the bridge sees take-backs (BACKACC code 0)
            del game["moves"][int(event.get("ply", 0)) :]
            del game["thinking"][int(event.get("ply", 0)) :]
            if event.get("fen") is not None:
                game["fen"] = event["fen"]
        elif kind == "result":
            game["result"] = event.get("result")
            game["reason"] = event.get("reason", "")
        elif kind != "game":
            return None
        return {"type": "game", "game": self.clocked(game)}

    @staticmethod
    def clocked(game: dict[str, Any]) -> dict[str, Any]:
        """The game with each side's time left: the director's clock where it keeps one
        (``left`` of the move events), else minutes x 60 less the seconds each reported; and
        ``to_move``, whose clock the page runs from the moment it gets this update."""
        if game.get("clock"):
            return {**game, "left": dict(game["clock"]), "to_move": to_move(game)}
        total = round(float(game.get("minutes") or 0) * 60)  # GAMEREQ may say 0.5
        left = {c: (total - used if total else None) for c, used in game["used"].items()}
        return {**game, "left": left, "to_move": to_move(game)}

    def _forget_old(self) -> None:
        finished = sorted(n for n, g in self.games.items() if g["result"] is not None)
        for number in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.games[number]

    def snapshot(self) -> dict[str, Any]:
        """Everything, for a browser that just connected."""
        games = [self.clocked(self.games[n]) for n in sorted(self.games)]
        return {"type": "snapshot", "title": self.title, "games": games, "table": self.standings,
                "heading": self.heading, **self.pictures}


def _pictures(event: dict[str, Any]) -> dict[str, Any]:
    """The ratings and charts a tournament's standings event carries (none from others)."""
    out: dict[str, Any] = {}
    if isinstance(event.get("ratings"), dict):
        out["ratings"] = event["ratings"]
    charts = event.get("charts")
    if isinstance(charts, dict):
        out["charts"] = {str(k): str(v) for k, v in charts.items()}
    return out


def to_move(game: dict[str, Any]) -> str | None:
    """"White" or "Black" from the FEN's side character; None once the game is over (or
    the position is not known)."""
    if game.get("result") is not None:
        return None
    fen = game.get("fen")
    if not fen:
        return None if game.get("moves") else "White"
    return {"W": "White", "B": "Black"}.get(str(fen)[:1].upper())
