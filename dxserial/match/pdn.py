"""A match game's PDN: the record the referee kept, completed with the match's tags, saved.

Apart from :mod:`dxserial.match.runner` so the game flow does not carry the PDN tags.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from dxserial.draughts import START_FEN, Position
from dxserial.errors import DxSerialError
from dxserial.game.clock import TimeControl
from dxserial.game.pdn import write_pdn
from dxserial.game.record import GameRecord
from dxserial.game.referee import GameResult
from dxserial.protocol.messages import Colour, Piece

__all__ = ["Player", "save_game", "time_control_text"]

log = logging.getLogger("dxserial.match.runner")


@dataclass(frozen=True)
class Player:
    """One engine as the PDN names it: its label ("A") and the name it gave ("" if none)."""

    label: str
    name: str

    @property
    def shown(self) -> str:
        return self.name or self.label


def save_game(
    record: GameRecord | None,
    number: int,
    white: Player,
    black: Player,
    result: GameResult,
    *,
    event: str,
    label_players: bool,
    pdn_dir: Path,
    opening: str = "",
    position: tuple[Piece, ...] | None = None,
    to_move: Colour | None = None,
    time_control: TimeControl | None = None,
    annotated: bool = False,
) -> Path | None:
    """Write game ``number`` (a record of its own if the game never started); its path,
    or None if it could not be saved (logged).  ``time_control``: the director's clock, if
    it kept one: the TimeControl tag then says what it kept (else the GAMEREQ's, which the
    engines planned by).  ``annotated``: the prose form (docs/pdn.md)."""
    if record is None:
        record = GameRecord(white=white.shown, black=black.shown, event=event, site="dxserial")
    record.round = str(number)
    record.game_number = number
    record.result = result.result
    record.termination = result.reason
    record.tags["WhiteEngine"] = white.label
    record.tags["BlackEngine"] = black.label
    if label_players:
        record.white, record.black = white.label, black.label
        record.tags["WhiteEngine"] = white.shown
        record.tags["BlackEngine"] = black.shown
    if opening:
        record.tags["Opening"] = opening
    if time_control is not None:
        record.tags["TimeControl"] = time_control.tag()
    if position is not None and record.start_fen == START_FEN:
        record.start_fen = Position.from_dxp(position, to_move or Colour.WHITE).to_fen()
    try:
        return write_pdn(record, pdn_dir, annotated=annotated)
    except DxSerialError as exc:
        log.error("game %d not saved: %s", number, exc)
        return None


def time_control_text(minutes: float, moves: int) -> str:
    """The GAMEREQ's time control in words, for the match's first line."""
    if not minutes:
        return "none (minutes 0)"
    per = f"{moves} moves" if moves else "the game"
    return f"{minutes:g} min for {per}"
