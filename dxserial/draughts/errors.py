"""Errors of the rules package; all are :class:`~dxserial.errors.DxSerialError`.

They live here rather than in ``dxserial/errors.py`` so that the rules package stays one
self-contained piece; the CLI still reports them as one line because of the common root.
"""

from __future__ import annotations

import enum

from dxserial.errors import DxSerialError


class RulesError(DxSerialError):
    """Anything the draughts rules reject: a bad position, an illegal move."""


class FenError(RulesError):
    """A PDN FEN or a DXP position string that cannot be read; says which part is wrong."""


class Rejection(enum.StrEnum):
    """Why a move is illegal, for callers that act on the reason (a referee's log, tests)."""

    NO_PIECE = "no-piece"
    CAPTURE_COMPULSORY = "capture-compulsory"
    TOO_FEW_CAPTURED = "too-few-captured"
    NO_SUCH_CAPTURE = "no-such-capture"
    NO_SUCH_MOVE = "no-such-move"
    AMBIGUOUS = "ambiguous"
    BAD_NOTATION = "bad-notation"


class IllegalMoveError(RulesError):
    """A move that is not legal in the position; the text says why, ``reason`` classifies it."""

    def __init__(self, message: str, *, reason: Rejection) -> None:
        super().__init__(message)
        self.reason = reason
