"""Game records: the recorder, PDN out and back in, atomic files."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

import helpers
import pytest
from helpers import FOL, INI, W, Z, end, move, wire

from dxserial.draughts import Position, parse_pdn_move
from dxserial.game.pdn import compact_fen, parse_pdn, read_pdn, to_pdn, write_pdn
from dxserial.game.record import MAX_LINE, GameRecord, PdnError, Recorder, RecordError
from dxserial.game.referee import Policy, Referee
from dxserial.protocol.dxp_moves import to_dxp_move
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Colour,
    GameAccept,
    Message,
    parse,
)
from dxserial.protocol.session import Role

CLOCK = datetime(2024, 5, 1, 12, 30, 45)


def request(fen: str | None = None, follower: Colour = Z) -> Message:
    return helpers.request(fen, follower=follower, name="Ini")


ACCEPT = wire(GameAccept(name="Fol", code=AcceptCode.ACCEPT))


class Game:
    """A referee and a recorder fed the same stream, as the bridge will do."""

    def __init__(self, policy: Policy = Policy.WARN) -> None:
        self.referee = Referee(policy)
        self.recorder = Recorder(event="Test", site="here", clock=lambda: CLOCK)
        self.finished: list[GameRecord] = []

    def send(self, msg: Message, sender: Role) -> None:
        verdict = self.referee.observe(msg, sender)
        record = self.recorder.observe(msg, sender, verdict)
        if record is not None:
            self.finished.append(record)


def replay(record: GameRecord) -> Position:
    position = Position.from_fen(record.start_fen)
    for m in record.moves:
        position = position.play(parse_pdn_move(position, m.text))
    return position


def scan_records(scan_game: list[dict[str, str]]) -> tuple[Game, Position | None]:
    game = Game()
    final = None
    for item in scan_game:
        game.send(parse(item["message"].encode("ascii")), Role(item["from"]))
        if game.finished and final is None:
            final = game.referee.position
    return game, final


def test_scan_game_round_trip(scan_game: list[dict[str, str]], tmp_path: Path) -> None:
    game, final = scan_records(scan_game)
    assert len(game.finished) == 1
    record = game.finished[0]
    assert (record.white, record.black, record.result) == ("Scan 2.0", "Scan 2.0", "1-1")
    assert record.plies == 150 and record.moves[0].dxp == "M0000342900"
    path = write_pdn(record, tmp_path)
    assert path.name == "20240501-123045-Scan_2_0-vs-Scan_2_0-g1.pdn"
    text = path.read_text()
    assert '[GameType "20"]' in text and '[Result "1-1"]' in text and "[FEN" not in text
    assert '[Date "2024.05.01"]' in text and '[Event "Test"]' in text
    assert text.splitlines()[-1].endswith(" 1-1")
    assert all(len(line) <= MAX_LINE for line in text.splitlines())
    [back] = read_pdn(path)
    assert back.plies == 150 and back.result == "1-1" and back.white == "Scan 2.0"
    assert replay(back) == final
    assert [m.text for m in back.moves] == [m.text for m in record.moves]


def test_second_scan_game_aborted_is_unfinished(scan_game: list[dict[str, str]]) -> None:
    game, _ = scan_records(scan_game)
    current = game.recorder.current
    assert current is not None and current.plies == 2
    assert (current.white, current.black) == ("Scan 2.0", "Scan 2.0")
    record = game.recorder.abort("connection closed")
    assert record is not None and record.result == "*"
    assert record.termination == "connection closed"
    assert game.recorder.abort("again") is None
    assert to_pdn(record).rstrip().endswith("*")
    assert '[Result "*"]' in to_pdn(record)


def test_form_b_start_gets_a_fen_tag(tmp_path: Path) -> None:
    fen = "B:W28,32,33:B12,18,19"
    game = Game()
    game.send(request(fen, follower=W), INI)  # the initiator plays Black
    game.send(ACCEPT, FOL)
    game.send(move(19, 23), INI)
    game.send(move(28, 19, 23), FOL)
    game.send(end("2"), INI)
    game.send(end("0"), FOL)
    [record] = game.finished
    assert (record.white, record.black) == ("Fol", "Ini")
    text = to_pdn(record)
    assert f'[FEN "{fen}"]' in text
    assert "1... 19-23 2. 28x19 1-1" in text
    [back] = read_pdn(write_pdn(record, tmp_path))
    assert Position.from_fen(back.start_fen) == Position.from_fen(fen)
    assert [(m.colour, m.move_number) for m in back.moves] == [(Z, 1), (W, 2)]
    assert replay(back) == game.referee.position


def test_long_form_only_when_needed(tmp_path: Path) -> None:
    fen = "W:WK47:B14,19,29,31,42,1"
    position = Position.from_fen(fen)
    chosen = next(m for m in position.legal_moves() if m.to_square == 36)
    game = Game()
    game.send(request(fen), INI)
    game.send(ACCEPT, FOL)
    game.send(wire(to_dxp_move(chosen)), INI)
    game.send(move(1, 7), FOL)
    [recorded, quiet] = game.recorder.current.moves  # type: ignore[union-attr]
    assert recorded.text == chosen.long_pdn() and recorded.text.count("x") == 4
    assert quiet.text == "1-7"
    record = game.recorder.abort("test")
    assert record is not None
    [back] = read_pdn(write_pdn(record, tmp_path))
    assert replay(back) == game.referee.position


def test_atomic_write_leaves_one_private_file(tmp_path: Path) -> None:
    record = GameRecord(white="A/../b", black="  ", started=CLOCK, game_number=3)
    first = write_pdn(record, tmp_path / "games")
    assert first.name == "20240501-123045-A_b-vs-unknown-g3.pdn"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    second = write_pdn(record, tmp_path / "games", mode=0o644)
    assert second.name.endswith("-g3-2.pdn")  # never overwrites
    assert stat.S_IMODE(second.stat().st_mode) == 0o644
    assert sorted(p.name for p in (tmp_path / "games").iterdir()) == sorted(
        [first.name, second.name]
    )


def test_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(RecordError, match="No space left"):
        write_pdn(GameRecord(started=CLOCK), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_directory_is_a_record_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordError):
        write_pdn(GameRecord(started=CLOCK), blocker / "sub")


@pytest.mark.parametrize("policy", [Policy.WARN, Policy.STRICT])
def test_violation_comment_at_its_ply(policy: Policy) -> None:
    game = Game(policy)
    game.send(request(), INI)
    game.send(ACCEPT, FOL)
    game.send(move(32, 28), INI)
    game.send(move(19, 25), FOL)  # illegal
    record = game.recorder.current
    assert record is not None
    [(ply, text)] = record.violations()
    assert text.startswith("follower (Black): illegal move 19-25: ")
    pdn_text = to_pdn(record)
    assert "{violation: follower (Black): illegal move 19-25:" in pdn_text
    if policy is Policy.WARN:
        assert ply == 2 and record.plies == 2 and not record.moves[1].legal
        assert "record unreliable from ply 2" in " ".join(record.comments[2])
    else:
        assert ply == 1 and record.plies == 1 and "(not played)" in text
    assert all(len(line) <= MAX_LINE for line in pdn_text.splitlines())
    [back] = parse_pdn(pdn_text)
    assert back.violations() == record.violations()


def test_out_of_turn_comment() -> None:
    game = Game()
    game.send(request(), INI)
    game.send(ACCEPT, FOL)
    game.send(move(19, 23), FOL)
    record = game.recorder.current
    assert record is not None and record.plies == 0
    assert record.violations()[0][1].startswith("follower (Black): MOVE 19-23 out of turn")


def test_take_back_truncates_the_record() -> None:
    game = Game()
    game.send(request(), INI)
    game.send(ACCEPT, FOL)
    for m, who in [(move(32, 28), INI), (move(19, 23), FOL), (move(28, 19, 23), INI)]:
        game.send(m, who)
    game.send(wire(BackRequest(move=2, to_move=W)), FOL)
    game.send(wire(BackAccept(code=BackCode.ACCEPTED)), INI)
    record = game.recorder.current
    assert record is not None and [m.text for m in record.moves] == ["32-28", "19-23"]
    assert any("take-back to move 2" in c for c in record.comments[2])


def test_game_decided_on_the_board_then_aborted() -> None:
    game = Game()
    game.send(request("W:W28:B23"), INI)
    game.send(ACCEPT, FOL)
    game.send(move(28, 19, 23), INI)
    record = game.recorder.abort("match runner stopped")
    assert record is not None and record.result == "2-0"
    assert record.termination == "Black has no legal move"


def test_resign_result_and_termination() -> None:
    game = Game()
    game.send(request(), INI)
    game.send(ACCEPT, FOL)
    game.send(end("1"), INI)
    game.send(end("0"), FOL)
    [record] = game.finished
    assert record.result == "0-2" and record.termination == "White (initiator) resigned"
    assert '[Termination "White (initiator) resigned"]' in to_pdn(record)


def test_read_pdn_from_other_tools() -> None:
    text = """% exported by some program
[Event "Club"]
[White "A \\"Ace\\" B"]
[Black "C"]
[GameType "20"]
[Result "2-0"]

1. 32-28 (1. 33-29 {side line} 19-23) 19-23 {main} 2. 28x19! $1 14x23 ; rest of line
3.34-29 1-0

[Event "Second"]
[FEN "W:WK47:B14,19,29,31,42"]
1. 47x38x24x13x36 *
"""
    first, second = parse_pdn(text)
    assert first.white == 'A "Ace" B' and first.event == "Club" and first.result == "2-0"
    assert [m.text for m in first.moves] == ["32-28", "19-23", "28x19", "14x23", "34-29"]
    assert first.comments == {2: ["main"]}
    assert replay(first) is not None
    assert second.start_fen == "W:WK47:B14,19,29,31,42" and second.result == "*"
    assert replay(second).to_fen() == "B:WK36:B14"


@pytest.mark.parametrize(
    "bad", ["1. 32-28 hello 2-0", "[FEN \"X:bad\"] 1. 32-28 *", "1. 32-28 ) *", "1. 32-28 ( 19-23"]
)
def test_unreadable_pdn_is_an_error(bad: str) -> None:
    with pytest.raises(PdnError):
        parse_pdn(bad)


def test_missing_file_is_a_record_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read"):
        read_pdn(tmp_path / "nope.pdn")


def test_compact_fen_uses_ranges() -> None:
    assert compact_fen(Position.start()) == "W:W31-50:B1-20"
    assert compact_fen(Position.from_fen("B:WK1,2,3,5:B10,11,12,K13")) == "B:WK1,2,3,5:B10-12,K13"


def test_long_comments_are_wrapped() -> None:
    record = GameRecord(started=CLOCK)
    record.add_comment("word " * 60 + "x" * 200)
    text = to_pdn(record)
    assert all(len(line) <= MAX_LINE for line in text.splitlines())
    [back] = parse_pdn(text)
    assert back.comments[0][0].startswith("word word")
