"""Where the built-in DXP player can get its moves from instead of its own search.

A :class:`MoveSource` (a Hub engine process: :class:`~dxserial.engine.hub_mover.HubMover`)
is asked once per move with the game's positions so far (the last is where it is to move),
in the runner's worker thread; :class:`MoverFailed` means it gave
no legal move, and the player ends its game with a GAMEEND.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from dxserial.draughts import LegalMove, Position
from dxserial.errors import DxSerialError

__all__ = ["MoveSource", "MoverFailed"]


class MoverFailed(DxSerialError):
    """The move source gave no legal move; the message says why, in one line."""


class MoveSource(Protocol):
    def choose(
        self,
        game: int,
        positions: Sequence[Position],
        *,
        seconds_left: float | None,
        moves_left: int | None,
        cancel: threading.Event | None = None,
    ) -> LegalMove: ...
