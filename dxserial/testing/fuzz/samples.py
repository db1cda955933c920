"""What the fuzz targets start from: real messages (tests/data and a few built in) and
hypothesis strategies that build each DXP message by its fields."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

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

# ================================================================== real messages


def find_spec_dir() -> Path:
    """tests/data of the source checkout (absent from an installed package: the messages
    built in below are used alone then)."""
    return Path(__file__).resolve().parents[3] / "tests" / "data"


_FALLBACK = (
    b"R01Scan 2.0                        Z001075A",
    b"R01DXP Client                      W002075B"
    b"Wzzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww",
    b"AScan 2.0                        0",
    b"M0000342900",
    b"M001205250422122320",
    b"E20",
    b"Chello",
    b"B005Z",
    b"K0",
)


def real_messages() -> tuple[bytes, ...]:
    """Every message of vectors.json and the Scan game (plus a few built in), no repeats."""
    found: list[bytes] = []
    spec = find_spec_dir()
    if spec.is_dir():
        vectors = json.loads((spec / "vectors.json").read_text())
        found += [v["message"].encode("latin-1") for v in vectors]
        for line in (spec / "scan-vs-scan-game.jsonl").read_text().splitlines():
            if line.strip():
                found.append(json.loads(line)["message"].encode("latin-1"))
    found += _FALLBACK
    return tuple(dict.fromkeys(found))


SEEDS = real_messages()

# ================================================================== messages by fields

_NAME_CHARS = string.ascii_letters + string.digits + " .-_()"
_names = st.text(_NAME_CHARS, min_size=1, max_size=32).map(str.rstrip).filter(
    lambda s: bool(s) and not s.startswith(" ")
)
colours = st.sampled_from(Colour)
_squares = st.integers(1, 50)


_positions = st.one_of(
    st.just("zzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww"),
    st.text("ewWzZ", min_size=50, max_size=50),
)


@st.composite
def game_requests(draw: st.DrawFn) -> GameRequest:
    form_b = draw(st.booleans())
    return GameRequest(
        version=draw(st.sampled_from([1, 1, 1, 2, 99])),
        name=draw(_names),
        follower_colour=draw(colours),
        minutes=draw(st.integers(0, 999)),
        moves=draw(st.integers(0, 999)),
        to_move=draw(colours) if form_b else None,
        position=tuple(Piece(c) for c in draw(_positions)) if form_b else None,
    )


_capture_lists = st.lists(_squares, unique=True, max_size=20)


@st.composite
def moves(draw: st.DrawFn) -> Move:
    src = draw(_squares)
    dst = draw(_squares)
    captured = [sq for sq in draw(_capture_lists) if sq not in (src, dst)]
    return Move(
        seconds=draw(st.integers(0, 9999)), from_square=src, to_square=dst, captured=tuple(captured)
    )


def game_accepts(codes: st.SearchStrategy[AcceptCode] | None = None) -> st.SearchStrategy[Any]:
    codes = st.sampled_from(AcceptCode) if codes is None else codes
    return st.builds(GameAccept, name=_names, code=codes)


def game_ends(reasons: st.SearchStrategy[EndReason] | None = None) -> st.SearchStrategy[Any]:
    reasons = st.sampled_from(EndReason) if reasons is None else reasons
    return st.builds(GameEnd, reason=reasons, stop=st.sampled_from(StopCode))


def back_requests(numbers: st.SearchStrategy[int] | None = None) -> st.SearchStrategy[Any]:
    numbers = st.integers(1, 999) if numbers is None else numbers
    return st.builds(BackRequest, move=numbers, to_move=colours)


chats = st.builds(Chat, text=st.text(st.characters(min_codepoint=1, max_codepoint=127),
                                     min_size=1, max_size=126))
back_accepts = st.builds(BackAccept, code=st.sampled_from(BackCode))

any_message: st.SearchStrategy[Message] = st.one_of(
    game_requests(), game_accepts(), moves(), game_ends(), chats, back_requests(), back_accepts
)


def with_raw(msg: Message) -> Message:
    """The message as it arrives from a peer: parsed from its bytes, ``raw`` set."""
    return parse(encode(msg))
