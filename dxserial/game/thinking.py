"""An engine's thinking beside its move: score, depth and principal variation.

Only Hub engines report it (``info score=... depth=... pv=...``); a DXP engine says
nothing of the kind and nothing is made up for it.  A Hub engine reaches the director
through dxserial's own DXP follower (``dxserial engine --hub CMD --tell-thinking``), which
sends the thinking of each move as one CHAT just before the MOVE, in the form
:meth:`Thinking.to_chat` writes (``thinking score=0.35 depth=12 pv=32-28 17-22``); the
director reads such a CHAT only from an engine it started that way (docs/thinking.md).

Scores are the engine's own, from the mover's side, in men (Scan's unit: 1.00 is a man);
the PDN writes them from White's side, as lidraughts and lichess do (``[%eval 0.35,12]``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from dxserial.protocol.messages import MAX_CHAT_TEXT

__all__ = ["CHAT_HEAD", "Thinking", "eval_command", "parse_eval", "without_eval"]

CHAT_HEAD = "thinking"
_EVAL = re.compile(r"\[%eval\s+([+-]?\d+(?:\.\d+)?)(?:,(\d+))?\]")
_PV = re.compile(r"\[%pv\s+([^\]]*)\]")


@dataclass(frozen=True)
class Thinking:
    """What the mover said of its move: ``score`` (its side's view, in men), the ``depth``
    searched, and the ``pv`` (moves as the engine wrote them, its own move first)."""

    score: float | None = None
    depth: int | None = None
    pv: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.score is None and self.depth is None and not self.pv

    def to_chat(self) -> str:
        """The CHAT text; the PV is cut to whole moves so that DXP can carry it."""
        head = [CHAT_HEAD]
        if self.score is not None:
            head.append(f"score={self.score:.2f}")
        if self.depth is not None:
            head.append(f"depth={self.depth}")
        text = " ".join(head)
        pv = list(self.pv)
        while pv and len(f"{text} pv={' '.join(pv)}") > MAX_CHAT_TEXT:
            pv.pop()
        return f"{text} pv={' '.join(pv)}" if pv else text

    @classmethod
    def from_chat(cls, text: str) -> Thinking | None:
        """A CHAT written by :meth:`to_chat`; None if ``text`` is not one."""
        words = text.split()
        if not words or words[0] != CHAT_HEAD:
            return None
        fields: dict[str, str] = {}
        pv: list[str] = []
        for i, word in enumerate(words[1:], 1):
            key, sep, value = word.partition("=")
            if key == "pv" and sep:
                pv = [value, *words[i + 1:]] if value else words[i + 1:]
                break
            if not sep:
                return None
            fields[key] = value
        return cls.from_fields(fields.get("score"), fields.get("depth"), " ".join(pv))

    @classmethod
    def from_fields(cls, score: str | None, depth: str | None, pv: str | None) -> Thinking | None:
        """From a Hub ``info`` line's fields (any may be missing); None if none reads."""
        value: float | None = None
        if score:
            try:
                value = float(score)
            except ValueError:
                value = None
            if value is not None and not math.isfinite(value):
                value = None
        plies: int | None = None
        if depth:
            try:
                plies = int(float(depth))
            except ValueError:
                plies = None
        moves = tuple(m for m in (pv or "").split() if re.fullmatch(r"\d+([-x]\d+)+", m))
        found = cls(value, plies, moves)
        return None if found.empty else found

    def white_score(self, white_moved: bool) -> float | None:
        if self.score is None:
            return None
        return self.score if white_moved else -self.score


def eval_command(thinking: Thinking, white_moved: bool) -> str:
    """``[%eval 0.35,12] [%pv 32-28 17-22]`` (score from White's side); "" if nothing."""
    parts: list[str] = []
    score = thinking.white_score(white_moved)
    if score is not None:
        depth = f",{thinking.depth}" if thinking.depth is not None else ""
        parts.append(f"[%eval {score + 0.0:.2f}{depth}]")
    if thinking.pv:
        parts.append(f"[%pv {' '.join(thinking.pv)}]")
    return " ".join(parts)


def without_eval(comment: str) -> str:
    """``comment`` without the commands :func:`eval_command` writes."""
    return " ".join(_PV.sub(" ", _EVAL.sub(" ", comment)).split())


def parse_eval(comment: str, white_moved: bool) -> Thinking | None:
    """The thinking in a PDN comment written by :func:`eval_command`, or None."""
    found = _EVAL.search(comment)
    pv = _PV.search(comment)
    if found is None and pv is None:
        return None
    score = depth = None
    if found is not None:
        white = float(found[1])
        score = white if white_moved else -white
        depth = int(found[2]) if found[2] else None
    return Thinking(score, depth, tuple(pv[1].split()) if pv else ())
