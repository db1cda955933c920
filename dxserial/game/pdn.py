"""PDN text and files: records written atomically, and read back.

A record is written to a temporary file in the same directory, synced, then renamed into
place, because a bridge may be killed at any moment and a half-written game file is worse
than none.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from dxserial.draughts import START_FEN, FenError, Position
from dxserial.files import write_atomic
from dxserial.game.record import (
    GAME_TYPE,
    MAX_LINE,
    RESULTS,
    GameRecord,
    PdnError,
    PlyClock,
    RecordedMove,
    RecordError,
    _now,
)
from dxserial.game.thinking import eval_command, parse_eval, without_eval
from dxserial.protocol.messages import Colour

__all__ = [
    "clock_commands",
    "clock_prose",
    "compact_fen",
    "hms",
    "parse_pdn",
    "pdn_filename",
    "read_pdn",
    "to_pdn",
    "write_pdn",
]

# --------------------------------------------------------------------------- writing


def _tag_value(text: str) -> str:
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean.replace("\\", "\\\\").replace('"', '\\"')


#: A result token standing alone: readers that split games on results must not meet one
#: inside a comment (pydraughts does so line by line), so a comment quotes it.
_LONE_RESULT = re.compile(r"(?<![\w/.:-])(1/2-1/2|1-0|0-1|2-0|0-2|1-1|0-0|\*)(?![\w/.:-])")


def _comment_text(text: str) -> str:
    """A comment's text as other readers can skip it: no braces, no lone result, and
    parentheses only in pairs (pydraughts drops ``(...)`` before it drops comments)."""
    clean = text.replace("{", "(").replace("}", ")")
    depth = 0
    for ch in clean:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            break
    if depth:
        clean = clean.replace("(", "[").replace(")", "]")
    return _LONE_RESULT.sub(r'"\1"', clean)


def _comment_words(text: str) -> list[str]:
    """A comment as tokens for wrapping; long words are split."""
    words = _comment_text(text).split() or ["-"]
    out: list[str] = []
    for word in words:
        while len(word) > MAX_LINE - 2:
            out.append(word[: MAX_LINE - 2])
            word = word[MAX_LINE - 2 :]
        out.append(word)
    out[0] = "{" + out[0]
    out[-1] = out[-1] + "}"
    return out


def _wrap(tokens: list[str]) -> list[str]:
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > MAX_LINE:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


#: Seconds between an engine's MOVE seconds and the director's charge that are only the
#: report's whole seconds and the line's margin: no ``[%emt]`` for those.
EMT_AFTER = 1.5


def hms(seconds: float) -> str:
    """Whole seconds as ``h:mm:ss`` (PGN's clock commands; rounded as lidraughts does)."""
    s = int(max(0.0, seconds) + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def clock_commands(record: GameRecord, ply: int) -> str:
    """The embedded commands after ``ply``: the director's clock in lidraughts' form
    (``[%clock w0:04:58 B0:05:00]``, both sides' time left, the mover in lower case), once a
    numbered move (after Black's move, or the game's last), since the clock that did not
    run still shows what it showed; and ``[%emt]``, the time the mover's MOVE said it used,
    where that is more than :data:`EMT_AFTER` from what the director charged."""
    parts: list[str] = []
    thinking = record.thinking.get(ply)
    if thinking is not None and 0 < ply <= record.plies:
        said = eval_command(thinking, record.moves[ply - 1].colour is Colour.WHITE)
        parts += [said] if said else []
    reading = record.clocks.get(ply)
    if reading is not None:
        last = ply == record.plies or ply + 1 not in record.clocks
        if reading.mover is Colour.BLACK or last:
            w, b = ("w", "B") if reading.mover is Colour.WHITE else ("W", "b")
            parts.append(f"[%clock {w}{hms(reading.white)} {b}{hms(reading.black)}]")
        if abs(reading.reported - reading.charged) > EMT_AFTER:
            parts.append(f"[%emt {hms(reading.reported)}]")
    return "{" + " ".join(parts) + "}" if parts else ""


def _command_tokens(commands: str) -> list[str]:
    """``{[%eval ..] [%pv ..] [%clock ..]}`` as tokens to wrap: each command whole, but
    a long one (a long PV) word by word."""
    if len(commands) <= MAX_LINE:
        return [commands]
    out: list[str] = []
    for command in re.findall(r"\[%[^\]]*\]", commands):
        out.extend([command] if len(command) <= MAX_LINE // 2 else command.split())
    out[0], out[-1] = "{" + out[0], out[-1] + "}"
    return out


def clock_prose(reading: PlyClock) -> str:
    """The annotated form's comment beside a move: the director's clock, and the engine's."""
    left = max(0.0, reading.left(reading.mover))
    return (f"clock: {reading.charged:.2f} s, {left:.1f} s left; "
            f"engine says {reading.reported} s")


def to_pdn(record: GameRecord, *, annotated: bool = False) -> str:
    """The record as one PDN game: tags, then movetext in lines of at most 80 characters.

    Movetext as the draughts programs write it: a number before White's moves only (and
    before a first move by Black), the director's clock as embedded commands, comments only
    for what no tag says (violations, the bridge's own actions).  ``annotated``: the
    referee's notes too and the clock as prose instead of commands, for people
    (docs/pdn.md).  Tag lines are not wrapped (PDN cannot split a tag); only a FEN tag of a
    crowded position can pass 80 characters, and ranges keep most FENs short.
    """
    result = record.result if record.result in RESULTS else "*"
    date = record.date or (record.started.strftime("%Y.%m.%d") if record.started else "????.??.??")
    tags: list[tuple[str, str]] = [
        ("Event", record.event),
        ("Site", record.site),
        ("Date", date),
        ("Round", record.round),
        ("White", record.white),
        ("Black", record.black),
        ("Result", result),
        ("GameType", GAME_TYPE),
    ]
    if record.custom_start:
        tags.append(("FEN", compact_fen(record.start_position)))
    if record.termination:
        tags.append(("Termination", record.termination))
    known = {name for name, _ in tags} | {"FEN", "Termination"}
    tags.extend((k, v) for k, v in record.tags.items() if k not in known)
    head = [f'[{name} "{_tag_value(value)}"]' for name, value in tags]

    tokens: list[str] = []
    last = record.plies
    for ply in range(0, last + 1):
        if ply:
            move = record.moves[ply - 1]
            if move.colour is Colour.WHITE:
                tokens.append(f"{move.move_number}. {move.text}")
            elif ply == 1:
                tokens.append(f"{move.move_number}... {move.text}")
            else:
                tokens.append(move.text)
        texts = list(record.comments.get(ply, []))
        if annotated:
            texts += record.notes.get(ply, [])
            if ply in record.clocks:
                texts.append(clock_prose(record.clocks[ply]))
        if ply == last:
            for source in (record.comments, record.notes) if annotated else (record.comments,):
                texts += [t for k, v in sorted(source.items()) if k > last for t in v]
        for text in texts:
            tokens.extend(_comment_words(text))
        if annotated and ply in record.thinking and 0 < ply <= last:
            said = eval_command(record.thinking[ply], record.moves[ply - 1].colour is Colour.WHITE)
            texts.append(f"engine: {said}")
        commands = "" if annotated else clock_commands(record, ply)
        if commands:
            tokens.extend(_command_tokens(commands))
    tokens.append(result)
    return "\n".join([*head, "", *_wrap(tokens)]) + "\n"


def compact_fen(position: Position) -> str:
    """PDN FEN with ranges for runs of three or more men (``W:W31-50:B1-20``): shorter tags."""

    def field_of(men: str, king: str) -> str:
        items: list[str] = []
        run: list[int] = []

        def flush() -> None:
            if len(run) >= 3:
                items.append(f"{run[0]}-{run[-1]}")
            else:
                items.extend(str(sq) for sq in run)
            run.clear()

        for sq in range(1, 51):
            value = position.piece_at(sq).value
            if value == men:
                run.append(sq)
                continue
            flush()
            if value == king:
                items.append(f"K{sq}")
        flush()
        return ",".join(items)

    side = "W" if position.turn is Colour.WHITE else "B"
    return f"{side}:W{field_of('w', 'W')}:B{field_of('z', 'Z')}"


def _safe_name(name: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9+]+", "_", name).strip("_")
    return clean[:32] or "unknown"


def pdn_filename(record: GameRecord) -> str:
    """``YYYYMMDD-HHMMSS-White-vs-Black-g<N>.pdn``, safe on any file system."""
    started = record.started or _now()
    return (
        f"{started:%Y%m%d-%H%M%S}-{_safe_name(record.white)}-vs-{_safe_name(record.black)}"
        f"-g{record.game_number}.pdn"
    )


def write_pdn(
    record: GameRecord, directory: Path | str, *, mode: int = 0o600, annotated: bool = False
) -> Path:
    """Write ``record`` to a new file in ``directory`` (created if needed); return its path.

    Atomic: the text goes to a temporary file in the same directory, is synced, then
    renamed into place, so readers and crashes only ever see a whole file.  An existing
    file of the same name is never overwritten (``-2``, ``-3``... is added).
    """
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        base = pdn_filename(record)
        target = folder / base
        n = 1
        while target.exists():
            n += 1
            target = folder / f"{base[:-4]}-{n}.pdn"
    except OSError as exc:
        raise RecordError(f"cannot write game record in {folder}: {exc.strerror}") from None
    text = to_pdn(record, annotated=annotated)
    write_atomic(target, text, what="game record", mode=mode, error=RecordError)
    return target


# --------------------------------------------------------------------------- reading

_TOKEN = re.compile(
    r"""
      \[\s*(?P<tag>[A-Za-z0-9_]+)\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*\]
    | \{(?P<comment>[^}]*)\}
    | ;(?P<line_comment>[^\n]*)
    | (?P<open>\()
    | (?P<close>\))
    | (?P<result>(?:2-0|0-2|1-1|0-0|1-0|0-1|1/2-1/2|\*)(?![\w/-]))
    | (?P<number>\d+\.+)
    | (?P<move>\d{1,2}(?:[-x:]\d{1,2})+)[!?+\#]*
    | (?P<nag>\$\d+)
    | (?P<other>\S+)
    """,
    re.VERBOSE,
)
_RESULT_MAP = {"1-0": "2-0", "0-1": "0-2", "1/2-1/2": "1-1", "0-0": "*"}


class _GameBuilder:
    """Collects one game's tokens; ``finish`` turns them into a record."""

    def __init__(self) -> None:
        self.tags: dict[str, str] = {}
        self.moves: list[str] = []
        self.comments: dict[int, list[str]] = {}
        self.result: str | None = None
        self.line = 0

    @property
    def empty(self) -> bool:
        return not (self.tags or self.moves or self.comments or self.result)

    def finish(self) -> GameRecord:
        tags = dict(self.tags)
        fen = tags.pop("FEN", "").strip() or START_FEN
        try:
            start = Position.from_fen(fen)
        except FenError as exc:
            raise PdnError(f"game at line {self.line}: {exc}") from None
        result = self.result or tags.get("Result", "*")
        result = _RESULT_MAP.get(result, result)
        record = GameRecord(
            white=tags.pop("White", "?"),
            black=tags.pop("Black", "?"),
            event=tags.pop("Event", "?"),
            site=tags.pop("Site", "?"),
            date=tags.pop("Date", ""),
            round=tags.pop("Round", "?"),
            start_fen=fen if start != Position.start() else START_FEN,
            result=result if result in RESULTS else "*",
            termination=tags.pop("Termination", ""),
            comments=self.comments,
        )
        rnd = record.round
        record.game_number = int(rnd) if rnd.isdigit() else 1
        tags.pop("Result", None)
        tags.pop("GameType", None)
        record.tags = tags
        colour = start.turn
        number = 1
        for ply, texts in self.comments.items():  # an engine's thinking beside its move
            if not 0 < ply <= len(self.moves):
                continue
            white_moved = (colour is Colour.WHITE) == (ply % 2 == 1)
            for text in texts:
                thinking = parse_eval(text, white_moved)
                if thinking is not None:
                    record.thinking[ply] = thinking
            if ply in record.thinking:  # kept as thinking, not again as comments
                texts[:] = [t for t in map(without_eval, texts) if t]
        for ply in [k for k, texts in self.comments.items() if not texts]:
            del self.comments[ply]
        for text in self.moves:
            record.moves.append(RecordedMove(text=text, colour=colour, move_number=number))
            if colour is Colour.BLACK:
                number += 1
            colour = colour.other
        return record


def parse_pdn(text: str, *, source: str = "PDN") -> list[GameRecord]:
    """Every game in ``text``: tags, movetext, comments, results; variations are skipped.

    Moves are kept as text (a replay checks them); anything that is not a tag, move,
    move number, comment, NAG or result is an error naming its line.
    """
    games: list[GameRecord] = []
    game = _GameBuilder()
    depth = 0
    starts = [0, *(m.end() for m in re.finditer(r"\n", text))]
    # PDN escape lines (``%`` in the first column) carry no game data.
    text = re.sub(r"(?m)^%[^\n]*", lambda m: " " * len(m.group()), text)
    for match in _TOKEN.finditer(text):
        kind = "tag" if match["tag"] is not None else match.lastgroup
        line = bisect.bisect_right(starts, match.start())
        if kind in ("line_comment", "nag", "number"):
            continue
        if kind == "open":
            depth += 1
        elif kind == "close":
            if depth == 0:
                raise PdnError(f"{source}: line {line}: ')' without '('")
            depth -= 1
        elif depth:
            continue
        elif kind in ("tag", "comment", "move", "result"):
            game = _take(games, game, kind, match, line)
        else:
            raise PdnError(
                f"{source}: line {line}: {match.group()[:20]!r} is not a PDN tag, move,"
                " move number, comment or result"
            )
    if depth:
        raise PdnError(f"{source}: a '(' variation is not closed")
    if not game.empty:
        games.append(game.finish())
    return games


def _take(
    games: list[GameRecord], game: _GameBuilder, kind: str, match: re.Match[str], line: int
) -> _GameBuilder:
    """One tag, comment, move or result into ``game``; the builder to go on with (a new one
    when this token finished the game or starts the next)."""
    if (kind == "tag" and (game.moves or game.result)) or (kind == "move" and game.result):
        games.append(game.finish())
        game = _GameBuilder()
    if game.empty:
        game.line = line
    if kind == "tag":
        game.tags[match["tag"]] = re.sub(r"\\(.)", r"\1", match["value"])
    elif kind == "comment":
        game.comments.setdefault(len(game.moves), []).append(" ".join(match["comment"].split()))
    elif kind == "move":
        game.moves.append(match["move"])
    else:
        game.result = match["result"]
        games.append(game.finish())
        game = _GameBuilder()
    return game


def read_pdn(path: Path | str) -> list[GameRecord]:
    """The games of a PDN file (UTF-8, or Latin-1 as older tools write)."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise RecordError(f"cannot read {file}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_pdn(text, source=str(file))
