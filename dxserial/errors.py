"""One root error type for everything dxserial reports.

Catching :class:`DxSerialError` catches every problem the project itself detects, so a
caller (the CLI, the bridge) can turn it into a one-line message and never a traceback.
Protocol errors carry ``side``: who is to blame, in the caller's words ("initiator",
"follower", "serial", "tcp", "local", "remote").  Port errors are also ``OSError`` and
link time-outs are also ``TimeoutError`` so generic handlers still work.
"""

from __future__ import annotations


class DxSerialError(Exception):
    """Root of every error dxserial raises on purpose."""


class ProtocolError(DxSerialError):
    """Bytes or messages that break DXP. ``side`` names who sent them, when known."""

    def __init__(self, message: str, *, side: str | None = None) -> None:
        super().__init__(message)
        self.side = side

    def __str__(self) -> str:
        text = super().__str__()
        if not self.side or text.startswith(self.side):
            return text
        return f"{self.side}: {text}"


class MessageError(ProtocolError):
    """A layer-2 message that does not match its layout.

    ``msg_type`` is the type letter (or ``None`` if even that is missing), ``field`` the
    field's name, ``offset`` the 0-based byte offset where the problem starts.
    """

    def __init__(
        self,
        message: str,
        *,
        msg_type: str | None = None,
        field: str | None = None,
        offset: int | None = None,
        side: str | None = None,
    ) -> None:
        super().__init__(message, side=side)
        self.msg_type = msg_type
        self.field = field
        self.offset = offset


class FramingError(ProtocolError):
    """Layer-1 trouble: an overlong frame, a byte >= 0x80, a broken handshake."""


class DialogueError(ProtocolError):
    """A well-formed message sent at the wrong moment (out of turn, unanswered request).

    ``reason`` is why, on its own (no "initiator sent MOVE but"): what a referee shows.
    """

    def __init__(self, message: str, *, side: str | None = None, reason: str | None = None):
        super().__init__(message, side=side)
        self.reason = reason


class DuplicateMessageError(DialogueError):
    """A repeat of the sender's previous message when it is not that side's turn.

    This is what a NULMODEM retransmission looks like after a corrupted echo of E: the
    receiver already delivered the message, the sender sent it again.
    """


class LinkDownError(DxSerialError, TimeoutError):
    """The NULMODEM peer stopped answering: too many failed attempts in a row."""


class PortError(DxSerialError, OSError):
    """A serial port or socket could not be opened or was lost."""


class ConfigError(DxSerialError):
    """A bad option, environment variable or configuration-file value."""
