"""The seven DXP layer-2 messages: exact layouts, ``parse`` and ``encode``.

Every field is checked against the fixed layout of the protocol page, and an error says
which message, which field, at which byte offset, and what was expected, in one line.
A parsed message keeps the bytes it came from in ``raw``: the bridge forwards those,
never a re-encoding, because engines differ in details that must survive untouched.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, ClassVar

# The vocabulary is the rules' (draughts/ imports nothing of DXP); DXP speaks it too.
from dxserial.draughts.pieces import START_POSITION as START_POSITION
from dxserial.draughts.pieces import Colour as Colour
from dxserial.draughts.pieces import Piece as Piece
from dxserial.draughts.pieces import colour_name as colour_name
from dxserial.errors import MessageError

MAX_MESSAGE_LEN = 127
#: A CHAT's text: the message's 127 characters less the type letter.
MAX_CHAT_TEXT = MAX_MESSAGE_LEN - 1
NAME_LEN = 32
SQUARES = 50


class AcceptCode(enum.StrEnum):
    ACCEPT = "0"
    VERSION_DIFFERS = "1"
    REFUSE_THIS_GAME = "2"
    REFUSE_ALL_GAMES = "3"


class EndReason(enum.StrEnum):
    NONE = "0"
    RESIGN = "1"
    DRAW = "2"
    WIN = "3"


class StopCode(enum.StrEnum):
    CONTINUE = "0"
    STOP = "1"


class BackCode(enum.StrEnum):
    ACCEPTED = "0"
    NOT_SUPPORTED = "1"
    CONTINUE_GAME = "2"


@dataclass(frozen=True, kw_only=True)
class Message:
    """Base of the seven messages. ``raw`` is the exact bytes received (empty if built)."""

    TYPE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""

    raw: bytes = field(default=b"", compare=False, repr=False)
    warnings: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @property
    def wire(self) -> bytes:
        """The bytes to forward: what was received, or the encoding of a built message."""
        return self.raw if self.raw else encode(self)

    def fields(self) -> dict[str, Any]:
        """Fields as plain JSON-friendly values, for ``--json`` and traces."""
        out: dict[str, Any] = {}
        for spec in dataclass_fields(self):  # not asdict(): no deep copy on a hot path
            key = spec.name
            if key in ("raw", "warnings"):
                continue
            value = getattr(self, key)
            if isinstance(value, tuple):
                value = "".join(value) if key == "position" else list(value)
            out[key] = value
        return out


@dataclass(frozen=True, kw_only=True)
class GameRequest(Message):
    """GAMEREQ ``R``: the initiator offers a game (form A: normal start; form B: a position)."""

    TYPE: ClassVar[str] = "R"
    NAME: ClassVar[str] = "GAMEREQ"

    version: int = 1
    name: str
    follower_colour: Colour
    minutes: int | float
    moves: int
    to_move: Colour | None = None
    position: tuple[Piece, ...] | None = None

    @property
    def initiator_colour(self) -> Colour:
        return self.follower_colour.other

    @property
    def first_to_move(self) -> Colour:
        return self.to_move if self.to_move is not None else Colour.WHITE

    @property
    def start_position(self) -> tuple[Piece, ...]:
        return self.position if self.position is not None else START_POSITION


@dataclass(frozen=True, kw_only=True)
class GameAccept(Message):
    """GAMEACC ``A``: the follower's answer to a GAMEREQ."""

    TYPE: ClassVar[str] = "A"
    NAME: ClassVar[str] = "GAMEACC"

    name: str
    code: AcceptCode


@dataclass(frozen=True, kw_only=True)
class Move(Message):
    """MOVE ``M``: from, to and the captured squares (in the order sent); no route."""

    TYPE: ClassVar[str] = "M"
    NAME: ClassVar[str] = "MOVE"

    seconds: int = 0
    from_square: int
    to_square: int
    captured: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class GameEnd(Message):
    """GAMEEND ``E``: ends the game (first by the side to move, then the answer with 0)."""

    TYPE: ClassVar[str] = "E"
    NAME: ClassVar[str] = "GAMEEND"

    reason: EndReason = EndReason.NONE
    stop: StopCode = StopCode.CONTINUE


@dataclass(frozen=True, kw_only=True)
class Chat(Message):
    """CHAT ``C``: free text, allowed at any time."""

    TYPE: ClassVar[str] = "C"
    NAME: ClassVar[str] = "CHAT"

    text: str

    @classmethod
    def carrying(cls, text: str) -> Chat:
        """A CHAT of ``text`` that DXP can carry: printable ASCII (others become ``?``),
        at most 126 characters (longer text ends in ``...``)."""
        clean = "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in text)
        if len(clean) > MAX_CHAT_TEXT:
            clean = clean[: MAX_CHAT_TEXT - 3] + "..."
        return cls(text=clean or "?")


@dataclass(frozen=True, kw_only=True)
class BackRequest(Message):
    """BACKREQ ``B``: asks to go back to move number ``move`` with ``to_move`` to play."""

    TYPE: ClassVar[str] = "B"
    NAME: ClassVar[str] = "BACKREQ"

    move: int
    to_move: Colour


@dataclass(frozen=True, kw_only=True)
class BackAccept(Message):
    """BACKACC ``K``: the answer to a BACKREQ."""

    TYPE: ClassVar[str] = "K"
    NAME: ClassVar[str] = "BACKACC"

    code: BackCode


MESSAGE_TYPES: dict[str, type[Message]] = {
    cls.TYPE: cls
    for cls in (GameRequest, GameAccept, Move, GameEnd, Chat, BackRequest, BackAccept)
}


# --------------------------------------------------------------------------- parsing


class _Reader:
    """Field-by-field reader over one message that builds precise errors."""

    def __init__(self, text: str, name: str, strict: bool) -> None:
        self.text = text
        self.name = name
        self.strict = strict
        self.warnings: list[str] = []

    def fail(self, fld: str, offset: int, what: str) -> MessageError:
        return MessageError(
            f"{self.name}: field '{fld}' at offset {offset}: {what}",
            msg_type=self.text[:1] or None,
            field=fld,
            offset=offset,
        )

    def lenient(self, fld: str, offset: int, what: str) -> None:
        """A variant real engines send: an error when strict, a warning when lenient."""
        if self.strict:
            raise self.fail(fld, offset, what)
        self.warnings.append(f"{self.name}: field '{fld}' at offset {offset}: {what}")

    def length(self, *allowed: int) -> None:
        n = len(self.text)
        if n not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise MessageError(
                f"{self.name}: length {n}: expected {want} characters",
                msg_type=self.text[:1] or None,
                field="length",
                offset=min(n, min(allowed)),
            )

    def number(self, fld: str, start: int, width: int, lo: int, hi: int) -> int:
        chunk = self.text[start : start + width]
        if not (len(chunk) == width and _all_digits(chunk)):
            raise self.fail(fld, start, f"{chunk!r} is not {width} digits")
        value = int(chunk)
        if not lo <= value <= hi:
            raise self.fail(fld, start, f"{chunk!r} is not in {lo:0{width}d}..{hi:0{width}d}")
        return value

    def square(self, fld: str, start: int) -> int:
        chunk = self.text[start : start + 2]
        if not (len(chunk) == 2 and _all_digits(chunk) and 1 <= int(chunk) <= SQUARES):
            raise self.fail(fld, start, f"{chunk!r} is not a square 01..50")
        return int(chunk)

    def choice(self, fld: str, offset: int, enum_cls: type[enum.StrEnum]) -> Any:
        ch = self.text[offset : offset + 1]
        try:
            return enum_cls(ch)
        except ValueError:
            allowed = "/".join(repr(m.value) for m in enum_cls)
            raise self.fail(fld, offset, f"{ch!r} is not one of {allowed}") from None

    def name_field(self, fld: str, start: int, width: int = NAME_LEN) -> str:
        chunk = self.text[start : start + width]
        if chunk.startswith(" "):
            self.lenient(fld, start, "a name must not start with a blank")
        name = chunk.rstrip(" ")
        padded = name.rstrip("0")
        if not self.strict and len(name) - len(padded) >= _ZERO_PADDING and padded.strip():
            # Some clients pad with '0' instead of blanks: a run like that is no name.
            self.warnings.append(f"{self.name}: field '{fld}' at offset {start}: padded "
                                 f"with '0' instead of blanks {NORMALISED}")
            name = padded.rstrip(" ")
        return name


#: Ends the warning of a lenient reading that re-encodes to the normal layout (not the same
#: bytes: what is forwarded is always the bytes received).
NORMALISED = "(read as the normal layout)"

#: A name ending in this many '0's or more is taken as padded with '0' (lenient reading).
_ZERO_PADDING = 4


def _all_digits(chunk: str) -> bool:
    return chunk.isascii() and chunk.isdigit()


def _parse_minutes(r: _Reader, start: int) -> int | float:
    chunk = r.text[start : start + 3]
    if _all_digits(chunk):
        return int(chunk)
    try:
        value = float(chunk)
    except ValueError:
        value = -1.0
    if value >= 0 and "." in chunk and _all_digits(chunk.replace(".", "", 1)):
        if _minutes_text(value) != chunk:  # '00.' or '.25': not how any engine writes it
            raise r.fail("minutes", start, f"{chunk!r} is not 3 digits or a number like 0.5")
        r.lenient("minutes", start, f"{chunk!r} is a fractional number of minutes")
        return value
    raise r.fail("minutes", start, f"{chunk!r} is not 3 digits")


def _gamereq_name_width(r: _Reader) -> int:
    """The name's width: 32, or (lenient) what a form A or B tail leaves of another length."""
    n = len(r.text)
    if r.strict or n in (43, 94):
        return NAME_LEN
    for tail in (8, 59):  # colour, minutes, moves, then 'A' / 'B' + colour + 50 squares
        width = n - 3 - tail
        if width > 0 and r.text[n - tail : n - tail + 1] in ("W", "Z") and (
            r.text[n - tail + 7] == ("A" if tail == 8 else "B")
        ):
            r.warnings.append(
                f"{r.name}: field 'initiator name' at offset 3: {width} characters, not "
                f"{NAME_LEN} {NORMALISED}"
            )
            return width
    return NAME_LEN


def _parse_gamereq(r: _Reader) -> GameRequest:
    width = _gamereq_name_width(r)
    if width != NAME_LEN:  # read it as if the name had the normal width
        r.text = r.text[:3] + r.text[3 : 3 + width].rstrip(" ")[:NAME_LEN].ljust(NAME_LEN) + (
            r.text[3 + width :]
        )
    r.length(43, 94)
    version = r.number("version", 1, 2, 1, 99)
    name = r.name_field("initiator name", 3)
    follower = r.choice("follower colour", 35, Colour)
    minutes = _parse_minutes(r, 36)
    moves = r.number("moves", 39, 3, 0, 999)
    start = r.text[42]
    if start == "A":
        if len(r.text) != 43:
            raise r.fail("start", 42, "form 'A' ends here, but more characters follow")
        return GameRequest(
            version=version, name=name, follower_colour=follower, minutes=minutes, moves=moves
        )
    if start != "B":
        raise r.fail("start", 42, f"{start!r} is not 'A' (start position) or 'B' (position)")
    if len(r.text) != 94:
        raise r.fail("position", 43, "form 'B' needs a colour and 50 squares (94 characters)")
    to_move = r.choice("colour to move", 43, Colour)
    squares: list[Piece] = []
    for i in range(SQUARES):
        squares.append(r.choice("position", 44 + i, Piece))
    return GameRequest(
        version=version,
        name=name,
        follower_colour=follower,
        minutes=minutes,
        moves=moves,
        to_move=to_move,
        position=tuple(squares),
    )


def _parse_gameacc(r: _Reader) -> GameAccept:
    n = len(r.text)
    if n != 34 and n >= 3 and not r.strict:  # a name of another width: the code is last
        r.warnings.append(
            f"{r.name}: field 'follower name' at offset 1: {n - 2} characters, not {NAME_LEN} "
            f"{NORMALISED}"
        )
        name = r.name_field("follower name", 1, n - 2)[:NAME_LEN].rstrip(" ")
        return GameAccept(name=name, code=r.choice("code", n - 1, AcceptCode))
    r.length(34)
    name = r.name_field("follower name", 1)
    return GameAccept(name=name, code=r.choice("code", 33, AcceptCode))


def _parse_move(r: _Reader) -> Move:
    n = len(r.text)
    if n < 11 or n % 2 == 0:
        raise MessageError(
            f"MOVE: length {n}: expected 11 + 2 x (captured count) characters",
            msg_type="M",
            field="length",
            offset=min(n, 11),
        )
    seconds = r.number("seconds", 1, 4, 0, 9999)
    src = r.square("from", 5)
    dst = r.square("to", 7)
    count = r.number("captured count", 9, 2, 0, 20)
    if n != 11 + 2 * count:
        raise r.fail(
            "captured count", 9, f"{count} captures need {11 + 2 * count} characters, got {n}"
        )
    captured: list[int] = []
    for i in range(count):
        offset = 11 + 2 * i
        sq = r.square("captured", offset)
        if sq in captured:
            raise r.fail("captured", offset, f"square {sq:02d} is captured twice")
        if sq == src:
            raise r.fail("captured", offset, f"square {sq:02d} is the 'from' square")
        if sq == dst:
            raise r.fail("captured", offset, f"square {sq:02d} is the 'to' square")
        captured.append(sq)
    return Move(seconds=seconds, from_square=src, to_square=dst, captured=tuple(captured))


def _parse_gameend(r: _Reader) -> GameEnd:
    r.length(3)
    return GameEnd(reason=r.choice("reason", 1, EndReason), stop=r.choice("stop", 2, StopCode))


def _parse_chat(r: _Reader) -> Chat:
    if len(r.text) < 2:
        raise MessageError(
            "CHAT: length 1: expected 2..127 characters (text must not be empty)",
            msg_type="C",
            field="length",
            offset=1,
        )
    return Chat(text=r.text[1:])


def _parse_backreq(r: _Reader) -> BackRequest:
    r.length(5)
    return BackRequest(
        move=r.number("move", 1, 3, 1, 999), to_move=r.choice("colour to move", 4, Colour)
    )


def _parse_backacc(r: _Reader) -> BackAccept:
    r.length(2)
    return BackAccept(code=r.choice("code", 1, BackCode))


_PARSERS: dict[str, Callable[[_Reader], Message]] = {
    "R": _parse_gamereq,
    "A": _parse_gameacc,
    "M": _parse_move,
    "E": _parse_gameend,
    "C": _parse_chat,
    "B": _parse_backreq,
    "K": _parse_backacc,
}


def _first_bad_byte(data: bytes) -> tuple[int, int] | None:
    for i, b in enumerate(data):
        if b == 0 or b >= 0x80:
            return i, b
    return None


# A well-formed MOVE, most of a game's messages: matched in one step; anything else (and
# any MOVE this does not take) goes through the field-by-field reader, which says what is
# wrong.
_MOVE = re.compile(rb"M([0-9]{4})([0-9]{2})([0-9]{2})([0-9]{2})((?:[0-9]{2}){0,20})")


def _quick_move(data: bytes) -> Move | None:
    match = _MOVE.fullmatch(data)
    if match is None:
        return None
    seconds, src_text, dst_text, count_text, rest = match.groups()
    src, dst = int(src_text), int(dst_text)
    if not (1 <= src <= SQUARES and 1 <= dst <= SQUARES) or len(rest) != 2 * int(count_text):
        return None
    captured = tuple(int(rest[i : i + 2]) for i in range(0, len(rest), 2))
    if captured and (
        len(set(captured)) != len(captured)
        or src in captured
        or dst in captured
        or not all(1 <= sq <= SQUARES for sq in captured)
    ):
        return None
    # Every field at once into the instance dict: what the frozen dataclass's __init__ does
    # one object.__setattr__ at a time (a third of the time of a whole parse).
    move = object.__new__(Move)
    move.__dict__.update(
        seconds=int(seconds), from_square=src, to_square=dst, captured=captured,
        raw=bytes(data), warnings=(),
    )
    return move


def parse(data: bytes, *, strict: bool = True) -> Message:
    """Parse one message (without its layer-1 framing).

    ``strict=False`` accepts the variants real engines send (fractional minutes, a name
    starting with a blank) and lists each in the message's ``warnings``.
    """
    if data[:1] == b"M":
        quick = _quick_move(data)
        if quick is not None:
            return quick
    return _parse_fields(data, strict)


def _parse_fields(data: bytes, strict: bool) -> Message:
    """:func:`parse`, field by field: every message type, and the error for a bad one."""
    if not data:
        raise MessageError("empty message: expected a type letter", field="type", offset=0)
    if len(data) > MAX_MESSAGE_LEN:
        raise MessageError(
            f"message of {len(data)} bytes: at most {MAX_MESSAGE_LEN} allowed",
            msg_type=chr(data[0]) if data[0] < 0x80 else None,
            field="length",
            offset=MAX_MESSAGE_LEN,
        )
    bad = None if data.isascii() and b"\x00" not in data else _first_bad_byte(data)
    if bad is not None:
        i, b = bad
        kind = MESSAGE_TYPES.get(chr(data[0])) if data[0] < 0x80 else None
        prefix = f"{kind.NAME}: " if kind else ""
        raise MessageError(
            f"{prefix}byte 0x{b:02x} at offset {i}: only bytes 0x01..0x7f may occur",
            msg_type=kind.TYPE if kind else None,
            field="byte",
            offset=i,
        )
    text = data.decode("ascii")
    cls = MESSAGE_TYPES.get(text[0])
    if cls is None:
        known = "".join(MESSAGE_TYPES)
        raise MessageError(
            f"{text[0]!r} at offset 0 is not a DXP message type (one of {known})",
            field="type",
            offset=0,
        )
    reader = _Reader(text, cls.NAME, strict)
    msg = _PARSERS[cls.TYPE](reader)
    object.__setattr__(msg, "raw", bytes(data))
    object.__setattr__(msg, "warnings", tuple(reader.warnings))
    return msg


# --------------------------------------------------------------------------- encoding


def _name(value: str, msg: str) -> str:
    if len(value) > NAME_LEN:
        raise MessageError(f"{msg}: name {value!r} is longer than {NAME_LEN} characters")
    return value.ljust(NAME_LEN)


def _minutes_text(value: int | float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):03d}"


def _minutes(value: int | float) -> str:
    text = _minutes_text(value)
    if len(text) != 3:
        raise MessageError(f"GAMEREQ: minutes {value!r} does not fit in 3 characters")
    return text


def encode(msg: Message) -> bytes:
    """The exact layer-2 bytes of ``msg`` built from its fields (no framing).

    Raises :class:`MessageError` when a field cannot be written in its layout; the result
    is checked by parsing it back, so ``encode`` never produces what ``parse`` rejects.
    """
    if isinstance(msg, GameRequest):
        text = (
            f"R{msg.version:02d}{_name(msg.name, 'GAMEREQ')}{msg.follower_colour.value}"
            f"{_minutes(msg.minutes)}{msg.moves:03d}"
        )
        if msg.position is None:
            text += "A"
        else:
            to_move = msg.to_move if msg.to_move is not None else Colour.WHITE
            text += "B" + to_move.value + "".join(p.value for p in msg.position)
    elif isinstance(msg, GameAccept):
        text = f"A{_name(msg.name, 'GAMEACC')}{msg.code.value}"
    elif isinstance(msg, Move):
        text = f"M{msg.seconds:04d}{msg.from_square:02d}{msg.to_square:02d}{len(msg.captured):02d}"
        text += "".join(f"{sq:02d}" for sq in msg.captured)
    elif isinstance(msg, GameEnd):
        text = f"E{msg.reason.value}{msg.stop.value}"
    elif isinstance(msg, Chat):
        text = f"C{msg.text}"
    elif isinstance(msg, BackRequest):
        text = f"B{msg.move:03d}{msg.to_move.value}"
    elif isinstance(msg, BackAccept):
        text = f"K{msg.code.value}"
    else:
        raise MessageError(f"cannot encode {type(msg).__name__}")
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        raise MessageError(f"{msg.NAME}: only ASCII characters can be sent") from None
    parse(data, strict=not msg.warnings and not isinstance(getattr(msg, "minutes", 0), float))
    return data


def escape(data: bytes) -> str:
    """Printable form of raw bytes for logs: ASCII as is, anything else as ``\\xNN``."""
    return "".join(
        chr(b) if 0x20 <= b < 0x7F and b != 0x5C else ("\\\\" if b == 0x5C else f"\\x{b:02x}")
        for b in data
    )
