"""Short form of the line soak (bench/line_soak.py, issue 36): one line on a vpair, the
strict engine on its serial end, a round of each fault: noise on the idle line and between
games, the cable pulled for less and for more than --serial-grace mid-game, the bridge
SIGKILLed mid-game and started again.

The strict engine must refuse nothing (no message its state forbids reached it), every
game record must replay legally, and every message delivered must have been sent by an
engine or announced by the bridge.  ``python3 bench/line_soak.py --lines 3 --minutes 4``
is the long form, with two lines of look-alike port names sharing one state folder.
"""

from __future__ import annotations

import line_soak  # bench/line_soak.py (bench/ is on pytest's pythonpath)
import pytest

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(300)  # about 45 s idle; a loaded machine takes longer
def test_one_line_lives_through_noise_replugs_and_a_kill() -> None:
    plan = ("noise", "long unplug", "short unplug", "kill", "plain")
    (result,) = line_soak.line_soak(1, plan=plan, lookalike=False, grace=2.0)
    summary = line_soak.table([result], 0)
    assert result.rounds == {e: plan.count(e) for e in plan}, summary
    assert not result.refusals, summary
    assert not result.phantoms, summary
    assert not result.problems, summary
    assert result.records >= 6 and result.legal == result.records, summary
    assert result.by_bridge["E00"] >= 1, summary  # the end of a game, for an engine that left
