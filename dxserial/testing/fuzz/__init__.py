"""Fuzz targets for the sans-I/O core: only dxserial's own errors may come out.

Everything a peer controls passes through four pieces of code; each gets a property-based
target (hypothesis; no extra dependency):

* ``parser``: :func:`~dxserial.protocol.messages.parse` on arbitrary bytes, on near-valid
  messages of each type, on valid messages with one field overwritten (number-like text),
  and on mutations (flipped, replaced, inserted, deleted bytes, splices) of real messages
  from ``tests/data`` (vectors.json and the Scan game), strict and lenient: a message
  that ``encode`` reproduces byte for byte, or a one-line :class:`MessageError`.
* ``framer``: random byte streams (NULs, bytes >= 0x80, overlong runs) in random chunks
  through :class:`NulFramer`: only its two events, ``pending`` within its bound, and exactly
  the frames a plain ``split(b"\\0")`` says are well formed.
* ``nulmodem``: random interleavings of ``send``/``receive_data``/``poll``/``reset`` on one
  :class:`NulModemLink` with random bytes, echoes, times and settings: only its four events,
  only :class:`FramingError` from ``send``, bounded buffers and output, deliveries in the
  order sent, sane deadlines, and every message accounted for once the line falls silent.
* ``nulmodem-channel``: two links joined by lossy, corrupting, stalling lines
  (:class:`~dxserial.testing.lines.LossyLine`, as in test_nulmodem.py), messages sent from
  both ends at random times, random baud, latency, framing bytes and timeouts: every
  message delivered once, in order, received intact modulo adjacent repeats, and the two
  ends fall quiet.
* ``dialogue``: random message sequences from random roles, steered towards the states
  that matter, through :class:`Dialogue`: only :class:`DialogueError` subclasses, the state
  untouched by a refused message, and a few invariants.

Bugs the targets find in code they do not own are listed in :data:`KNOWN_BUGS` and pinned
by ``xfail(strict=True)`` tests of that name in tests/test_fuzz.py (each with its
reproducer), and the targets step around exactly those cases (see :func:`run_channel`);
when a bug is fixed, its test passes unexpectedly, fails, and says which allowance to
remove.

tests/test_fuzz.py runs every target (:data:`TARGETS`) on a short budget (seconds in all);
``python3 bench/fuzz.py --seconds N`` runs each for N seconds.  This module imports
hypothesis, a test extra, at its top: only tests and bench import it, and no other module
of dxserial imports it.
"""

from __future__ import annotations

from dxserial.testing.fuzz.registry import KNOWN_BUGS, TARGETS, Target

# Each target module adds its targets to TARGETS as it is imported, in this order (the
# order above, and bench/fuzz.py's).
# isort: off
from dxserial.testing.fuzz import parser
from dxserial.testing.fuzz import framer
from dxserial.testing.fuzz import nulmodem
from dxserial.testing.fuzz import dialogue
# isort: on

__all__ = ["KNOWN_BUGS", "TARGETS", "Target", "dialogue", "framer", "nulmodem", "parser"]
