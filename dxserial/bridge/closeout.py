"""What the bridge says on behalf of an engine that left, so the other one is not stranded.

An engine that vanishes mid-game leaves the other engine waiting for a MOVE, a GAMEACC or
a GAMEEND answer that will never come.  The bridge then speaks for the departed engine,
with the mildest message that brings the dialogue back to idle (stop code 0, so the
engine that stayed is ready for the next game):

* it owes a GAMEACC: ``A`` code 2 (refuse this game, a next one may follow);
* it owes a BACKACC: ``K1`` (take-back not supported), then carry on;
* it is to move: GAMEEND reason 0, stop code 0;
* it owes the answer to a GAMEEND: GAMEEND reason 0, stop code 0.

When the engine that stayed is the one to move (or owes an answer) the bridge waits for
it; its message is for the departed engine and is not delivered to anyone.
"""

from __future__ import annotations

from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    EndReason,
    GameAccept,
    GameEnd,
    Message,
    StopCode,
)
from dxserial.protocol.session import Dialogue, Phase, Role

#: The name the bridge gives in a GAMEACC it sends on a departed follower's behalf.
BRIDGE_NAME = "dxserial bridge"


class Wait:
    """The engine that stayed owes the next message."""


class Done:
    """Nothing is under way any more."""


WAIT = Wait()
DONE = Done()


def next_step(dialogue: Dialogue, departed: Role) -> Message | Wait | Done:
    """The message to send for ``departed`` now, or whether to wait or stop."""
    phase = dialogue.phase
    if phase in (Phase.IDLE, Phase.STOPPED):
        return DONE
    owes = dialogue.awaiting is departed
    if phase is Phase.REQUESTED:
        return GameAccept(name=BRIDGE_NAME, code=AcceptCode.REFUSE_THIS_GAME) if owes else WAIT
    if phase is Phase.BACK_REQUESTED:
        return BackAccept(code=BackCode.NOT_SUPPORTED) if owes else WAIT
    if phase is Phase.ENDING:
        return GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE) if owes else WAIT
    if dialogue.turn_role() is departed:
        return GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    return WAIT


__all__ = ["BRIDGE_NAME", "DONE", "WAIT", "Done", "Wait", "next_step"]
