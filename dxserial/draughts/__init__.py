"""International draughts (FMJD) rules: positions, legal moves, DXP matching, PDN, perft.

Pure Python, synchronous, no I/O: the referee and the recorder call it, and so can tests.
"""

from dxserial.draughts.board import START_FEN, Position
from dxserial.draughts.dxp import describe_dxp_move, match_dxp_move, to_dxp_move
from dxserial.draughts.errors import FenError, IllegalMoveError, Rejection, RulesError
from dxserial.draughts.movegen import LegalMove
from dxserial.draughts.notation import parse_pdn_move, pdn, pdn_moves
from dxserial.draughts.perft import divide, perft

__all__ = [
    "START_FEN",
    "FenError",
    "IllegalMoveError",
    "LegalMove",
    "Position",
    "Rejection",
    "RulesError",
    "describe_dxp_move",
    "divide",
    "match_dxp_move",
    "parse_pdn_move",
    "pdn",
    "pdn_moves",
    "perft",
    "to_dxp_move",
]
