"""TOML text parsed within bounds: every file reader (bridge --config, rig, tournament,
``--engines``) goes through :func:`parse_toml`.

``tomllib`` recurses once per nested array or inline table, so a file of a few kilobytes
of ``[[[[...`` ends in a ``RecursionError`` traceback instead of one line.  The text is
measured first (its size, the deepest nesting of its values, strings and comments
skipped), and a file beyond either bound is refused in one line naming it.
"""

from __future__ import annotations

import tomllib
from typing import Any

from dxserial.errors import ConfigError

#: The largest TOML text read (a rig of hundreds of lines is a few tens of kilobytes).
MAX_TOML_BYTES = 1 << 20
#: The deepest nesting of arrays and inline tables in a value (no setting needs more than 3).
MAX_TOML_DEPTH = 32

_OPEN = {"[": "]", "{": "}"}


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """The TOML document in ``text``; :class:`ConfigError` ("SOURCE: ...") for anything
    too large, too deep or not TOML."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_TOML_BYTES:
        raise ConfigError(f"{source}: {size} bytes, more than the {MAX_TOML_BYTES} bytes a "
                          "settings file may have")
    depth, line = nesting(text)
    if depth > MAX_TOML_DEPTH:
        raise ConfigError(f"{source}: line {line}: values nested more than "
                          f"{MAX_TOML_DEPTH} deep (arrays or inline tables): not a settings file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:  # pragma: no cover - the depth bound comes first
        raise ConfigError(f"{source}: nested too deep: not a settings file") from None


def nesting(text: str) -> tuple[int, int]:
    """The deepest nesting of brackets and braces outside strings and comments, and the
    line (1-based) where it is first reached.  Table headers (``[a]``, ``[[a]]``) count as
    1 and 2, well under any bound."""
    depth = deepest = 0
    line = where = 1
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\n":
            line += 1
        elif char == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif char in "\"'":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else char
            start, i = i, _string_end(text, i + len(quote), quote)
            line += text.count("\n", start, i)
            continue
        elif char in _OPEN:
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif char in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest, where


def _string_end(text: str, i: int, quote: str) -> int:
    """The index just after the string that starts at ``i`` (its opening quote read)."""
    escapes = quote[0] == '"'
    n = len(text)
    while i < n:
        if escapes and text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        if len(quote) == 1 and text[i] == "\n":  # an unclosed one-line string: tomllib says
            return i
        i += 1
    return n


__all__ = ["MAX_TOML_BYTES", "MAX_TOML_DEPTH", "nesting", "parse_toml"]
