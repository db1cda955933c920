"""International draughts (FMJD) rules: positions, legal moves, FEN, PDN notation, perft.

Pure Python, synchronous, no I/O, and nothing of DXP: the mapping between DXP messages and
moves is :mod:`dxserial.protocol.dxp_moves`.  The referee and the recorder call it, and so
can tests.
"""

from dxserial.draughts.board import START_FEN, Position
from dxserial.draughts.errors import FenError, IllegalMoveError, Rejection, RulesError
from dxserial.draughts.movegen import LegalMove
from dxserial.draughts.notation import parse_pdn_move, pdn, pdn_in, pdn_moves
from dxserial.draughts.perft import divide, perft

__all__ = [
    "START_FEN",
    "FenError",
    "IllegalMoveError",
    "LegalMove",
    "Position",
    "Rejection",
    "RulesError",
    "divide",
    "parse_pdn_move",
    "pdn",
    "pdn_in",
    "pdn_moves",
    "perft",
]
