"""PDN as the draughts world reads it: files read by pydraughts' PDNReader and by dxserial,
clocks as embedded commands (and how much they cost), files of before still read, and
``dxserial replay --check`` for scripts."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import helpers
from helpers import FOL, INI, W, end, move, run_in_process, wire
from pdn_check import both_read, pydraughts_games

from dxserial.draughts import Position, parse_pdn_move
from dxserial.game.pdn import read_pdn, to_pdn, write_pdn
from dxserial.game.record import GameRecord, PlyClock, RecordedMove, Recorder
from dxserial.game.referee import Policy, Referee
from dxserial.protocol.messages import AcceptCode, Colour, GameAccept, Message, parse
from dxserial.protocol.session import Role

CLOCK = datetime(2024, 5, 1, 12, 30, 45)
BEFORE = Path(__file__).parent.parent / "data" / "pdn-before-r30"


def recorded(messages: list[tuple[Message, Role]], policy: Policy = Policy.WARN) -> GameRecord:
    """The one finished record of ``messages`` fed to a referee and a recorder."""
    referee, recorder = Referee(policy), Recorder(event="Test", site="here", clock=lambda: CLOCK)
    finished = []
    for msg, sender in messages:
        record = recorder.observe(msg, sender, referee.observe(msg, sender))
        if record is not None:
            finished.append(record)
    if not finished:  # still running
        assert recorder.current is not None
        return recorder.current
    (record,) = finished
    return record


def scan_record(scan_game: list[dict[str, str]]) -> GameRecord:
    """The 75-move Scan-vs-Scan game, with the director's clock as a match keeps it: 5 min
    for 75 moves, each move charged what Scan said it used plus 0.4 s of line."""
    record = recorded([(parse(i["message"].encode()), Role(i["from"])) for i in scan_game][:155])
    assert record.tags["TimeControl"] == "75/60"  # Scan's own GAMEREQ: 1 minute
    record.tags["TimeControl"] = "75/300"
    left = {Colour.WHITE: 300.0, Colour.BLACK: 300.0}
    for ply, played in enumerate(record.moves, 1):
        assert played.dxp is not None
        said = int(played.dxp[1:5])
        left[played.colour] -= said + 0.4
        record.clocks[ply] = PlyClock(
            played.colour, left[Colour.WHITE], left[Colour.BLACK], said + 0.4, said
        )
    return record


def test_a_75_move_game_with_its_clocks(tmp_path: Path, scan_game: list[dict[str, str]]) -> None:
    record = scan_record(scan_game)
    assert record.plies == 150 and record.result == "1-1"
    clocked = to_pdn(record)
    # One reading a numbered move, both clocks, as lidraughts writes them (the side that
    # just moved in lower case); the second of Scan's first 14 moves shows at move 8.
    assert "1. 34-29 20-24 {[%clock W0:05:00 b0:05:00]} 2. 29x20 14x25" in clocked
    assert "8. 42-38 15-20\n{[%clock W0:04:55 b0:04:54]} 9. 44-39" in clocked
    assert "..." not in clocked and "clock:" not in clocked  # no restated numbers, no prose
    # Scan's own seconds agree with the director's to the second: no [%emt] is written.
    assert "%emt" not in clocked
    plain = GameRecord(**{**record.__dict__, "clocks": {}})
    sizes = {"plain": len(to_pdn(plain)), "clocks": len(clocked),
             "annotated": len(to_pdn(record, annotated=True))}
    # Measured: 1387, 3562 and 8534 bytes.  A clock reading costs more than the moves it
    # follows: 15 bytes a ply against the movetext's 8 (see docs/pdn.md).
    assert sizes["clocks"] <= 2.6 * sizes["plain"]
    assert sizes["annotated"] >= 2 * sizes["clocks"]
    for annotated in (False, True):
        path = write_pdn(record, tmp_path / str(annotated), annotated=annotated)
        (game,) = both_read(path)
        assert len(game.moves) == 150 and game.tags["TimeControl"] == "75/300"


def test_an_engine_whose_seconds_disagree_gets_an_emt() -> None:
    record = recorded([
        (helpers.request(name="Ini"), INI),
        (wire(GameAccept(name="Fol", code=AcceptCode.ACCEPT)), FOL),
        (move(32, 28), INI),
        (move(19, 23), FOL),
        (move(28, 19, 23), INI),
    ])
    record.clocks = {
        1: PlyClock(W, 297.6, 300.0, 2.4, 2),  # agrees (within a second): no [%emt]
        2: PlyClock(Colour.BLACK, 297.6, 299.0, 1.0, 95),  # says its total: [%emt]
        3: PlyClock(W, 290.2, 299.0, 7.4, 7),
    }
    text = " ".join(to_pdn(record).split())
    assert ("1. 32-28 19-23 {[%clock W0:04:58 b0:04:59] [%emt 0:01:35]} "
            "2. 28x19 {[%clock w0:04:50 B0:04:59]} *") in text


def test_black_to_move_from_a_fen_with_a_violation(tmp_path: Path) -> None:
    fen = "B:W28,32,33:B12,18,19"
    record = recorded([
        (helpers.request(fen, follower=W, name="Ini"), INI),  # the initiator plays Black
        (wire(GameAccept(name="Fol", code=AcceptCode.ACCEPT)), FOL),
        (move(19, 23), INI),
        (move(19, 23), INI),  # again: a violation, not played
        (move(28, 19, 23), FOL),
        (end("2"), INI),
        (end("0"), FOL),
    ])
    text = to_pdn(record)
    assert f'[FEN "{fen}"]' in text and '[TimeControl "300"]' in text  # 5 min, 000 moves
    assert re.search(r"1\.\.\. 19-23 \{violation: [^}]*\} 2\. 28x19 ", text)
    (game,) = both_read(write_pdn(record, tmp_path), games=1)
    assert game.moves == ["19-23", "28x19"] and game.result == record.result


def test_a_comment_cannot_end_the_game_for_another_reader(tmp_path: Path) -> None:
    """pydraughts splits games on a result token, line by line, comments or not."""
    record = GameRecord(white="A", black="B", started=CLOCK, result="2-0")
    record.moves = [RecordedMove("32-28", W, 1), RecordedMove("19-23", Colour.BLACK, 1)]
    record.add_comment("both said 1-1 then 0-2 (and * too", 1)
    text = to_pdn(record)
    assert '{both said "1-1" then "0-2" [and "*" too}' in text
    (game,) = both_read(write_pdn(record, tmp_path))
    assert game.moves == ["32-28", "19-23"] and game.result == "2-0"
    [back] = read_pdn(write_pdn(record, tmp_path))
    assert back.comments[1] == ['both said "1-1" then "0-2" [and "*" too']


def test_files_written_before_this_change_still_read() -> None:
    files = sorted(BEFORE.glob("*.pdn"))
    assert len(files) == 2
    for path in files:
        (record,) = read_pdn(path)
        position = record.start_position
        for played in record.moves:
            position = position.play(parse_pdn_move(position, played.text))
        assert record.result == "1-1" and record.termination
        assert any(t.startswith("clock: ") for t in record.comments[1])  # the old prose
        out = run_in_process("replay", path, "--check")
        assert out.returncode == 0 and out.stdout.splitlines() == ["1 game, 0 violations"]
    (limit,) = read_pdn(BEFORE / "match-move-limit.pdn")
    assert limit.plies == 60 and limit.tags["TimeControl"] == "30/60"
    (fen,) = read_pdn(BEFORE / "match-fen-5-move-rule.pdn")
    assert fen.plies == 19 and Position.from_fen(fen.start_fen) != Position.start()


def test_replay_check_fails_on_a_violation_or_an_unreadable_file(tmp_path: Path) -> None:
    clean = GameRecord(white="A", black="B", started=CLOCK)
    clean.moves = [RecordedMove("32-28", W, 1)]
    out = run_in_process("replay", write_pdn(clean, tmp_path / "clean"), "--check")
    assert (out.returncode, out.stdout) == (0, "1 game, 0 violations\n")
    bad = GameRecord(white="A", black="B", started=CLOCK)
    bad.moves = [RecordedMove("32-28", W, 1), RecordedMove("32-27", Colour.BLACK, 1)]
    out = run_in_process("replay", write_pdn(bad, tmp_path / "bad"), "--check")
    assert out.returncode == 1
    assert out.stdout.splitlines()[0].startswith("game 1: !! ply 2: Black 32-27: illegal move")
    assert out.stdout.splitlines()[-1] == "1 game, 1 violation"
    broken = tmp_path / "broken.pdn"
    broken.write_text('[Event "x"]\n\n1. 32-28 banana *\n')
    out = run_in_process("replay", broken, "--check")
    assert out.returncode == 1 and "is not a PDN tag, move" in out.stderr


def test_pydraughts_reads_an_event_file_of_several_games(tmp_path: Path) -> None:
    first = GameRecord(white="A", black="B", started=CLOCK, result="2-0", round="1")
    first.moves = [RecordedMove("32-28", W, 1), RecordedMove("19-23", Colour.BLACK, 1)]
    second = GameRecord(white="B", black="A", started=CLOCK, result="1-1", round="2",
                        start_fen="W:W31,32,33,K46:B18,19,K3")
    second.moves = [RecordedMove("31-26", W, 1)]
    path = tmp_path / "event.pdn"
    path.write_text("\n\n".join(to_pdn(r).strip() for r in (first, second)) + "\n")
    games = pydraughts_games(path)
    assert [(g.moves, g.result) for g in games] == [(["32-28", "19-23"], "2-0"),
                                                     (["31-26"], "1-1")]
    both_read(path, games=2)
