"""Hub protocol version 2 (Scan 3.x and the Hub GUI), sans-I/O: lines in, lines out.

A Hub line is ``command arg=value arg="quoted value" flag ...``.  :func:`parse_line` turns
one line into a :class:`HubLine` (or raises :class:`HubError` naming what is wrong, never
anything else), :func:`format_line` writes one back, quoting values that need it.  The
typed helpers read the lines whose arguments mean something to us: ``pos`` (a position
of 51 characters and a list of moves), ``level`` and ``done``.

Positions are ``W`` or ``B`` (side to move) followed by 50 of ``w b W B e``; moves are
``32-28`` and ``28x19x23`` (from, to, then the captured squares in any order), which is a
DXP MOVE's from, to and captured fields one to one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dxserial.draughts import IllegalMoveError, LegalMove, Position, RulesError
from dxserial.errors import ProtocolError
from dxserial.protocol.dxp_moves import match_dxp_move, to_dxp_move
from dxserial.protocol.messages import Colour, Move

__all__ = [
    "HubError",
    "HubLine",
    "Level",
    "PosCommand",
    "format_hub_move",
    "format_line",
    "format_position",
    "hub_move_of_dxp",
    "info_line",
    "line",
    "parse_done",
    "parse_hub_move",
    "parse_level",
    "parse_line",
    "parse_pos",
    "parse_position",
    "pos_line",
    "say_seconds",
    "split_hub_move",
    "to_dxp",
]

#: Longest line either side reads; a longer one is garbage, not a reason to grow memory.
MAX_LINE = 64 * 1024

_TOKEN = re.compile(r'\s*([^\s="]+)(?:=(?:"([^"]*)"|([^\s"]*)))?')
_NEEDS_QUOTES = re.compile(r'[\s="]|^$')
_SQUARE_CHARS = {"w": "w", "b": "z", "W": "W", "B": "Z", "e": "e"}
_HUB_CHARS = {dxp: hub for hub, dxp in _SQUARE_CHARS.items()}
_MOVE = re.compile(r"(\d{1,2})([-x])(\d{1,2})((?:x\d{1,2})*)")


class HubError(ProtocolError):
    """A Hub line that cannot be read, or whose arguments make no sense."""


@dataclass(frozen=True)
class HubLine:
    """One line: the command and its arguments in order (a flag's value is ``""``)."""

    command: str
    args: tuple[tuple[str, str], ...] = ()

    def get(self, name: str, default: str | None = None) -> str | None:
        for key, value in self.args:
            if key == name:
                return value
        return default

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.args)

    @property
    def first(self) -> str | None:
        """The first argument's name (``go think``: ``think``)."""
        return self.args[0][0] if self.args else None

    def __str__(self) -> str:
        return format_line(self)


def line(command: str, *flags: str, **args: object) -> HubLine:
    """Build a line: ``line("done", move="32-28")``; ``_`` in a keyword becomes ``-``."""
    items = [(flag, "") for flag in flags]
    items += [(key.replace("_", "-"), _text(value)) for key, value in args.items()]
    return HubLine(command, tuple(items))


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if math.isfinite(value) else "0"
    return str(value)


def parse_line(text: str) -> HubLine:
    """Read one line; :class:`HubError` if it is empty, too long or badly quoted."""
    body = text.strip()
    if not body:
        raise HubError("empty line")
    if len(body) > MAX_LINE:
        raise HubError(f"line of more than {MAX_LINE} characters")
    if any(ord(c) < 0x20 and c != "\t" for c in body):
        raise HubError(f"control character in line {_show(body)}")
    command, _, rest = body.partition(" ")
    if not re.fullmatch(r"[A-Za-z][\w-]*", command):
        raise HubError(f"{_show(body)}: {command!r} is not a Hub command")
    args: list[tuple[str, str]] = []
    pos = 0
    rest = rest.rstrip()
    while pos < len(rest):
        match = _TOKEN.match(rest, pos)
        if match is None or match.end() == pos:
            raise HubError(f"{_show(body)}: cannot read the arguments from {rest[pos:]!r}")
        pos = match.end()
        if pos < len(rest) and not rest[pos].isspace():
            where = rest[match.start() :]
            raise HubError(f"{_show(body)}: cannot read the arguments from {where!r}")
        quoted, plain = match[2], match[3]
        args.append((match[1], quoted if quoted is not None else plain or ""))
    return HubLine(command, tuple(args))


def format_line(hub: HubLine) -> str:
    """The line as sent (no newline): values with blanks, ``=`` or nothing are quoted."""
    parts = [hub.command]
    for key, value in hub.args:
        if value == "":
            parts.append(key)
            continue
        clean = value.replace('"', "'").replace("\n", " ")
        parts.append(f'{key}="{clean}"' if _NEEDS_QUOTES.search(clean) else f"{key}={clean}")
    return " ".join(parts)


def _show(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


# --------------------------------------------------------------------------- positions


def parse_position(text: str) -> Position:
    """A Hub position (``W`` or ``B`` then 50 of ``wbWBe``) as a :class:`Position`."""
    if len(text) != 51:
        raise HubError(f"position {_show(text)}: {len(text)} characters, not 51 (W|B + 50)")
    side = text[0]
    if side not in "WB":
        raise HubError(f"position {_show(text)}: starts with {side!r}, not W or B")
    try:
        pieces = "".join(_SQUARE_CHARS[c] for c in text[1:])
    except KeyError as exc:
        raise HubError(f"position {_show(text)}: {exc.args[0]!r} is not one of w b W B e") from None
    try:
        return Position.from_dxp(pieces, Colour.WHITE if side == "W" else Colour.BLACK)
    except RulesError as exc:
        raise HubError(f"position {_show(text)}: {exc}") from None


def format_position(position: Position) -> str:
    side = "W" if position.turn is Colour.WHITE else "B"
    return side + "".join(_HUB_CHARS[c] for c in position.to_dxp_position())


# --------------------------------------------------------------------------- moves


def split_hub_move(text: str) -> tuple[int, int, tuple[int, ...]]:
    """``28x19x23`` -> (28, 19, (23,)); :class:`HubError` if it is not a Hub move."""
    match = _MOVE.fullmatch(text.strip())
    if match is None or (match[2] == "-" and match[4]):
        raise HubError(f"{_show(text)} is not a Hub move such as 32-28 or 28x19x23")
    captured = tuple(int(sq) for sq in match[4].split("x")[1:])
    if match[2] == "x" and not captured:
        raise HubError(f"{_show(text)}: a capture lists its captured squares (28x19x23)")
    return int(match[1]), int(match[3]), captured


def parse_hub_move(position: Position, text: str) -> LegalMove:
    """The legal move of ``position`` that Hub ``text`` names; :class:`HubError` if none."""
    msg = to_dxp(text)
    try:
        return match_dxp_move(position, msg)
    except IllegalMoveError as exc:
        raise HubError(f"{exc} (position {position.to_fen()})") from None


def format_hub_move(move: LegalMove) -> str:
    """``32-28`` or ``28x19x23`` (captured squares ascending, as in our DXP MOVEs)."""
    return hub_move_of_dxp(to_dxp_move(move))


def hub_move_of_dxp(msg: Move) -> str:
    """A DXP MOVE in Hub notation (captured squares as sent)."""
    if not msg.captured:
        return f"{msg.from_square}-{msg.to_square}"
    return "x".join(str(sq) for sq in (msg.from_square, msg.to_square, *msg.captured))


def to_dxp(text: str, seconds: int = 0) -> Move:
    """A Hub move as the DXP MOVE with the same from, to and captured fields."""
    frm, to, captured = split_hub_move(text)
    return Move(seconds=seconds, from_square=frm, to_square=to, captured=captured)


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class PosCommand:
    """``pos``: where the game started, the moves since, and where it stands now."""

    start: Position
    moves: tuple[LegalMove, ...] = ()
    positions: tuple[Position, ...] = field(default=())  # after each move

    @property
    def position(self) -> Position:
        return self.positions[-1] if self.positions else self.start


def parse_pos(hub: HubLine) -> PosCommand:
    """Read ``pos pos=... [moves="..."]``, every move checked on the board."""
    text = hub.get("pos")
    if text is None:
        raise HubError(f"{_show(format_line(hub))}: pos= is missing")
    start = parse_position(text)
    board = start
    moves: list[LegalMove] = []
    positions: list[Position] = []
    for word in (hub.get("moves") or "").split():
        move = parse_hub_move(board, word)
        board = board.play(move)
        moves.append(move)
        positions.append(board)
    return PosCommand(start, tuple(moves), tuple(positions))


def pos_line(start: Position, moves: Iterable[LegalMove] = ()) -> HubLine:
    items = [("pos", format_position(start))]
    words = " ".join(format_hub_move(m) for m in moves)
    if words:
        items.append(("moves", words))
    return HubLine("pos", tuple(items))


@dataclass(frozen=True)
class Level:
    """``level``: one of depth, nodes, move-time, a clock (time, moves, inc), or infinite."""

    depth: int | None = None
    nodes: int | None = None
    move_time: float | None = None
    time: float | None = None
    moves: int | None = None
    inc: float = 0.0
    infinite: bool = False

    def to_line(self) -> HubLine:
        if self.infinite:
            return line("level", "infinite")
        if self.depth is not None:
            return line("level", depth=self.depth)
        if self.nodes is not None:
            return line("level", nodes=self.nodes)
        if self.move_time is not None:
            return line("level", move_time=self.move_time)
        args: dict[str, object] = {}
        if self.moves:
            args["moves"] = self.moves
        args["time"] = self.time if self.time is not None else 0.0
        if self.inc:
            args["inc"] = self.inc
        return line("level", **args)

    def budget(self) -> float | None:
        """Seconds one move may take (``None``: no bound but depth or stop)."""
        if self.move_time is not None:
            return self.move_time
        if self.time is None:
            return None
        share = self.time / max(2, self.moves or 30)
        return max(0.05, min(share + self.inc, self.time / 2 + self.inc))


def _number(hub: HubLine, name: str, kind: type[float] | type[int]) -> float | int | None:
    raw = hub.get(name)
    if raw is None:
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise HubError(f"{_show(format_line(hub))}: {name}={raw!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise HubError(f"{_show(format_line(hub))}: {name}={raw!r} must be >= 0")
    return value


def parse_level(hub: HubLine) -> Level:
    """Read a ``level`` line (unknown arguments are ignored, as the protocol asks)."""
    if hub.has("infinite"):
        return Level(infinite=True)
    depth = _number(hub, "depth", int)
    nodes = _number(hub, "nodes", int)
    move_time = _number(hub, "move-time", float)
    time = _number(hub, "time", float)
    moves = _number(hub, "moves", int)
    inc = _number(hub, "inc", float) or 0.0
    if depth is None and nodes is None and move_time is None and time is None:
        raise HubError(
            f"{_show(format_line(hub))}: no depth=, nodes=, move-time=, time= or infinite"
        )
    return Level(
        depth=None if depth is None else int(depth),
        nodes=None if nodes is None or depth is not None else int(nodes),
        move_time=move_time,
        time=time,
        moves=None if moves is None else int(moves),
        inc=float(inc),
    )


def parse_done(hub: HubLine) -> tuple[str, str | None]:
    """``done move=... [ponder=...]`` -> (move text, ponder text or None)."""
    move = hub.get("move")
    if not move:
        raise HubError(f"{_show(format_line(hub))}: done without move=")
    return move, hub.get("ponder") or None


def info_line(fields: Mapping[str, object]) -> HubLine:
    """An ``info`` line; text fields lose ``=`` and ``"`` (some clients split on them)."""
    items = tuple(
        (key, _text(value).replace("=", ":").replace('"', "'")) for key, value in fields.items()
    )
    return HubLine("info", items)


def say_seconds(value: float) -> str:
    """A Hub wait or clock for people: "60 s" (not 59.9996), "2.5 s", "0.25 s"."""
    value = max(0.0, value)
    if value >= 10:
        text = f"{value:.0f}"
    elif value >= 1:
        text = f"{value:.1f}".removesuffix(".0")
    else:
        text = f"{value:.2g}"
    return f"{text} s"
