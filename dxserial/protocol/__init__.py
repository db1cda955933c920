"""The sans-I/O DXP core: messages, layer-1 framings and dialogue state. No I/O here."""

from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    Piece,
    StopCode,
    encode,
    parse,
)

__all__ = [
    "AcceptCode",
    "BackAccept",
    "BackCode",
    "BackRequest",
    "Chat",
    "Colour",
    "EndReason",
    "GameAccept",
    "GameEnd",
    "GameRequest",
    "Message",
    "Move",
    "Piece",
    "StopCode",
    "encode",
    "parse",
]
