"""Fuzz targets for the sans-I/O core: only dxserial's own errors may come out.

Everything a peer controls passes through four pieces of code, and each gets a
property-based target (hypothesis): ``parser``, ``framer``, ``nulmodem``,
``nulmodem-channel`` and ``dialogue`` (:data:`TARGETS`), one module each.  Bugs found in
code the targets do not own are listed in :data:`KNOWN_BUGS` and pinned by
``xfail(strict=True)`` tests.  This package imports hypothesis, a test extra: only tests
and bench import it.  What each target checks and how to run them longer: docs/fuzz.md.
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
