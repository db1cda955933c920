"""A small draughts player: alpha-beta over material, enough to be a sparring partner.

The built-in engine uses it to answer a DXP peer in tests and demos, so it must be
quick in CPython and reproducible: the search runs on the bare ints of the move
generator (no :class:`Position` objects inside the tree), a side whose capture is forced
is searched on through the captures (so a depth-2 search does not stop in the middle
of an exchange), and ties between equally good moves are broken by a caller's seeded
``random.Random``, or by the lowest move when no rng is given.

The search deepens one ply at a time up to the depth asked for, so it can be cut short and
still answer: past a ``deadline`` it plays the best move of the deepest finished pass (a
player's clock must never run out because a search went deep), and when ``cancel`` is set
it raises :class:`SearchCancelled` (the engine is leaving; no move is wanted).  Both are
looked at every few thousand nodes and between passes, so a stop takes milliseconds.
A search that is not cut short gives exactly the move of a plain ``depth``-ply search.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from dxserial.draughts import LegalMove, Position
from dxserial.draughts.geometry import BIT, squares_of
from dxserial.draughts.movegen import RawMove, generate, play
from dxserial.protocol.messages import Colour

__all__ = [
    "DEFAULT_DEPTH",
    "KING",
    "MAN",
    "MAX_DEPTH",
    "SearchCancelled",
    "Thought",
    "choose_move",
    "evaluate",
    "search",
    "think",
]

DEFAULT_DEPTH = 4
#: Deepest search the commands accept.  Measured in CPython on a 2020 laptop core: depth 8
#: takes up to ~8 s a move in the middle game, and each ply costs 3-5 times the last, so
#: depth 10 is already minutes without the clock's bound; beyond it only the clock decides.
MAX_DEPTH = 10
_CHECK_EVERY = 2048  # nodes between looks at the cancel flag and the clock
MAN = 100
KING = 300
ADVANCE = 2  # per row a man has walked towards the crown; small beside a man's worth
WIN = 1_000_000  # a side with no legal move has lost; minus the plies to get there
_MAX_CAPTURE_PLIES = 12  # forced-capture extension past the nominal depth, as a safety net

# Rows advanced for a man on each square: White walks up (square 46 is row 9 -> 0 rows).
_WHITE_ADVANCE = tuple(0 if sq == 0 else 9 - (sq - 1) // 5 for sq in range(51))
_BLACK_ADVANCE = tuple(0 if sq == 0 else (sq - 1) // 5 for sq in range(51))


def _material(pieces: int, kings: int, advance: tuple[int, ...]) -> int:
    men = pieces & ~kings
    score = KING * bin(pieces & kings).count("1") + MAN * bin(men).count("1")
    return score + ADVANCE * sum(advance[sq] for sq in squares_of(men))


def _score(own: int, opp: int, kings: int, white: bool) -> int:
    """Material and advancement of the side to move minus the opponent's."""
    if white:
        return _material(own, kings, _WHITE_ADVANCE) - _material(opp, kings, _BLACK_ADVANCE)
    return _material(own, kings, _BLACK_ADVANCE) - _material(opp, kings, _WHITE_ADVANCE)


def evaluate(position: Position) -> int:
    """Static score from the side to move's point of view (100 = one man)."""
    white = position.turn is Colour.WHITE
    own, opp = (position.white, position.black) if white else (position.black, position.white)
    return _score(own, opp, position.kings, white)


class SearchCancelled(Exception):
    """The search was cancelled (the engine is stopping); there is no move."""


class _OutOfTime(Exception):
    """Internal: the deadline passed in the middle of a pass."""


class _Limits:
    """The cancel flag and the deadline, looked at every :data:`_CHECK_EVERY` nodes."""

    def __init__(
        self,
        cancel: threading.Event | None,
        deadline: float | None,
        clock: Callable[[], float],
    ) -> None:
        self.cancel = cancel
        self.deadline = deadline
        self.clock = clock
        self.nodes = 0

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise SearchCancelled("search cancelled")
        if self.deadline is not None and self.clock() >= self.deadline:
            raise _OutOfTime

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes % _CHECK_EVERY == 0:
            self.check()


def _negamax(
    own: int,
    opp: int,
    kings: int,
    white: bool,
    depth: int,
    alpha: int,
    beta: int,
    ply: int,
    limits: _Limits | None = None,
) -> int:
    if limits is not None:
        limits.tick()
    moves = generate(own, opp, kings, white)
    if not moves:
        return -WIN + ply
    forced = bool(moves[0][2])
    if depth <= 0 and (not forced or depth <= -_MAX_CAPTURE_PLIES):
        return _score(own, opp, kings, white)
    best = -WIN - 1
    for raw in moves:
        new_own, new_opp, new_kings = play(own, opp, kings, white, raw)
        value = -_negamax(
            new_opp, new_own, new_kings, not white, depth - 1, -beta, -alpha, ply + 1, limits
        )
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    return best


def search(position: Position, depth: int = DEFAULT_DEPTH) -> list[tuple[LegalMove, int]]:
    """Every legal move with its exact score at ``depth`` (plies), best first.

    Slower than :func:`choose_move` (no pruning between root moves); for tests and for
    showing the engine's opinion.
    """
    out: list[tuple[LegalMove, int]] = []
    for move in position.legal_moves():
        after = position.play(move)
        value = -_position_value(after, depth - 1, -WIN - 1, WIN + 1, 1)
        out.append((move, value))
    out.sort(key=lambda item: (-item[1], item[0].from_square, item[0].to_square))
    return out


def _position_value(position: Position, depth: int, alpha: int, beta: int, ply: int) -> int:
    white = position.turn is Colour.WHITE
    own, opp = (position.white, position.black) if white else (position.black, position.white)
    return _negamax(own, opp, position.kings, white, depth, alpha, beta, ply)


@dataclass(frozen=True)
class Thought:
    """A search's answer: the move, its score (the mover's side, 100 a man) and the depth
    of the deepest finished pass (0: the move was forced or no pass finished)."""

    move: LegalMove | None
    score: int | None = None
    depth: int = 0


def choose_move(
    position: Position,
    depth: int = DEFAULT_DEPTH,
    rng: random.Random | None = None,
    *,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> LegalMove | None:
    """The move to play in ``position`` after a ``depth``-ply search, or ``None`` if the
    side to move has no legal move (it has lost).

    A single legal move (often a forced capture) is played at once.  Among moves with the
    best score, ``rng`` picks one (seed it for reproducible games); without it the one
    with the lowest (from, to) is taken.  Past ``deadline`` (read on ``clock``) the best
    move of the deepest finished pass is played; a set ``cancel`` raises
    :class:`SearchCancelled`.
    """
    return think(position, depth, rng, cancel=cancel, deadline=deadline, clock=clock).move


def think(
    position: Position,
    depth: int = DEFAULT_DEPTH,
    rng: random.Random | None = None,
    *,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Thought:
    """:func:`choose_move` with the score and depth it found (for a Hub engine's ``info``)."""
    moves = sorted(
        position.legal_moves(), key=lambda m: (m.from_square, m.to_square, sorted(m.captured))
    )
    if len(moves) <= 1:
        return Thought(moves[0] if moves else None)
    limits = _Limits(cancel, deadline, clock)
    ties = [moves[0]]  # if not even one pass finishes in time: the lowest move
    score: int | None = None
    reached = 0
    for nominal in range(1, depth + 1):
        try:
            score, ties = _root_pass(position, moves, nominal, limits)
            reached = nominal
        except _OutOfTime:
            break
        if nominal < depth:
            try:
                limits.check()
            except _OutOfTime:
                break
    return Thought(rng.choice(ties) if rng is not None else ties[0], score, reached)


def _root_pass(
    position: Position, moves: list[LegalMove], depth: int, limits: _Limits
) -> tuple[int, list[LegalMove]]:
    """The best score at ``depth`` plies and the moves with it, in ``moves`` order."""
    white = position.turn is Colour.WHITE
    own, opp = (position.white, position.black) if white else (position.black, position.white)
    best = -WIN - 1
    ties: list[LegalMove] = []
    for move in moves:
        taken = sum(BIT[sq] for sq in move.captured)
        raw: RawMove = (move.from_square, move.to_square, taken, move.route)
        new_own, new_opp, kings = play(own, opp, position.kings, white, raw)
        # Window (best - 1, +inf): a move scoring ``best`` exactly is seen as a tie.
        value = -_negamax(
            new_opp, new_own, kings, not white, depth - 1, -WIN - 1, 1 - best, 1, limits
        )
        if value > best:
            best, ties = value, [move]
        elif value == best:
            ties.append(move)
    return best, ties
