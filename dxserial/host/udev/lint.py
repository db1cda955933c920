"""Checks a udev rules file: a syntax check of its own, and ``udevadm verify`` where it exists.

``udevadm verify`` only exists from systemd 254 on, so ``dxserial udev check`` follows
udev(7) itself (keys, operators, quoting, labels) and runs udevadm as well when it can.
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# --- the rules checker -------------------------------------------------------------------

_MATCH = frozenset({"==", "!="})
_ASSIGN_SET = frozenset({"=", ":="})
_OPERATORS = ("==", "!=", "+=", "-=", ":=", "=")
_SHOWN = ("==", "!=", "=", "+=", "-=", ":=")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _Key:
    ops: frozenset[str]
    attr: Literal["required", "optional", "none"] = "none"
    attr_values: frozenset[str] | None = None


_KEYS: dict[str, _Key] = {
    # Match keys: compared with == or !=.
    "ACTION": _Key(_MATCH),
    "DEVPATH": _Key(_MATCH),
    "KERNEL": _Key(_MATCH),
    "KERNELS": _Key(_MATCH),
    "SUBSYSTEM": _Key(_MATCH),
    "SUBSYSTEMS": _Key(_MATCH),
    "DRIVER": _Key(_MATCH),
    "DRIVERS": _Key(_MATCH),
    "ATTRS": _Key(_MATCH, "required"),
    "TAGS": _Key(_MATCH),
    "RESULT": _Key(_MATCH),
    "CONST": _Key(_MATCH, "required", frozenset({"arch", "virt"})),
    "TEST": _Key(_MATCH, "optional"),
    # PROGRAM and IMPORT run something and match on its success; udev takes =, += and :=
    # for == with them.
    "PROGRAM": _Key(_MATCH | {"=", "+=", ":="}),
    "IMPORT": _Key(
        _MATCH | {"=", "+=", ":="},
        "required",
        frozenset({"program", "builtin", "file", "db", "cmdline", "parent"}),
    ),
    # Keys that can be matched and assigned.
    "NAME": _Key(_MATCH | _ASSIGN_SET),
    "SYMLINK": _Key(_MATCH | _ASSIGN_SET | {"+=", "-="}),
    "TAG": _Key(_MATCH | _ASSIGN_SET | {"+=", "-="}),
    "ENV": _Key(_MATCH | _ASSIGN_SET | {"+="}, "required"),
    "ATTR": _Key(_MATCH | _ASSIGN_SET, "required"),
    "SYSCTL": _Key(_MATCH | _ASSIGN_SET, "required"),
    # Assignment keys.
    "OWNER": _Key(_ASSIGN_SET),
    "GROUP": _Key(_ASSIGN_SET),
    "MODE": _Key(_ASSIGN_SET),
    "SECLABEL": _Key(_ASSIGN_SET | {"+="}, "required"),
    "RUN": _Key(_ASSIGN_SET | {"+="}, "optional", frozenset({"program", "builtin"})),
    "OPTIONS": _Key(_ASSIGN_SET | {"+="}),
    "LABEL": _Key(frozenset({"="})),
    "GOTO": _Key(frozenset({"="})),
}


@dataclass(frozen=True)
class RuleProblem:
    """One thing wrong in a rules file, at a 1-based line and column."""

    line: int
    column: int
    message: str

    def format(self, filename: str) -> str:
        return f"{filename}:{self.line}: column {self.column}: {self.message}"


@dataclass(frozen=True)
class _Token:
    key: str
    attr: str | None
    op: str
    value: str
    line: int
    column: int


class _Problem(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


def _logical_lines(text: str) -> Iterable[tuple[str, list[tuple[int, int]]]]:
    """Join lines ending in a backslash; map each character back to (line, column)."""
    parts: list[str] = []
    where: list[tuple[int, int]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not parts and raw.lstrip().startswith("#"):
            continue
        continued = raw.endswith("\\")
        body = raw[:-1] if continued else raw
        parts.append(body)
        where.extend((number, column) for column in range(1, len(body) + 1))
        where.append((number, len(body) + 1))  # the line's end, for "expected ..." errors
        if continued:
            continue
        yield " ".join(parts), where
        parts, where = [], []
    if parts:
        yield " ".join(parts), where


def _tokens(line: str) -> list[tuple[int, str, str | None, str, str]]:
    """Split one logical line into (offset, key, attr, operator, value); raise _Problem."""
    found: list[tuple[int, str, str | None, str, str]] = []
    i, end = 0, len(line)
    while True:
        while i < end and line[i] in " \t":
            i += 1
        if i >= end:
            return found
        start = i
        key_match = _KEY_RE.match(line, i)
        if key_match is None:
            raise _Problem(i, f"expected a key, found {line[i]!r}")
        key = key_match.group()
        i = key_match.end()
        attr: str | None = None
        if i < end and line[i] == "{":
            close = line.find("}", i)
            if close < 0:
                raise _Problem(i, f"{key}{{ without a closing }}")
            attr = line[i + 1 : close]
            i = close + 1
        while i < end and line[i] in " \t":
            i += 1
        op = next((o for o in _OPERATORS if line.startswith(o, i)), None)
        if op is None:
            raise _Problem(i, f"expected an operator (==, !=, =, +=, -=, :=) after {key}")
        i += len(op)
        while i < end and line[i] in " \t":
            i += 1
        value_start = i
        if i < end and line[i] == "e" and line.startswith('"', i + 1):
            i += 1
        if i >= end or line[i] != '"':
            raise _Problem(value_start, f"the value of {key} must be in double quotes")
        i += 1
        chars: list[str] = []
        while i < end and line[i] != '"':
            if line[i] == "\\" and i + 1 < end:
                chars.append(line[i : i + 2])
                i += 2
                continue
            chars.append(line[i])
            i += 1
        if i >= end:
            raise _Problem(value_start, f"the value of {key} has no closing quote")
        i += 1
        found.append((start, key, attr, op, "".join(chars)))
        while i < end and line[i] in " \t":
            i += 1
        if i < end:
            if line[i] != ",":
                raise _Problem(i, "expected ',' between two key-operator-value tokens")
            i += 1


def _check_token(token: _Token) -> str | None:
    """The problem with one well-formed token, if any."""
    spec = _KEYS.get(token.key)
    if spec is None:
        close = difflib.get_close_matches(token.key, list(_KEYS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"unknown key {token.key!r}{hint}"
    if spec.attr == "required" and not token.attr:
        return f"{token.key} needs a {{...}} part, e.g. {token.key}{{name}}"
    if spec.attr == "none" and token.attr is not None:
        return f"{token.key} takes no {{...}} part"
    if token.attr and spec.attr_values is not None:
        kind = token.attr.split()[0] if token.attr.split() else ""
        if kind not in spec.attr_values:
            expected = ", ".join(sorted(spec.attr_values))
            return f"{token.key}{{{token.attr}}}: expected one of {expected}"
    if token.key == "TEST" and token.attr and not re.fullmatch(r"[0-7]{1,4}", token.attr):
        return f"TEST{{{token.attr}}}: the part in braces is an octal mode mask"
    if token.op not in spec.ops:
        if spec.ops <= _MATCH:
            return f"{token.key} can only be matched (== or !=), not assigned with {token.op}"
        if not spec.ops & _MATCH and token.op in _MATCH:
            allowed = " or ".join(o for o in _SHOWN if o in spec.ops)
            return f"{token.key} can only be assigned ({allowed}), not matched with {token.op}"
        return f"operator {token.op} is not allowed with {token.key}"
    if (
        token.key == "MODE"
        and not re.search(r"[$%]", token.value)
        and not re.fullmatch(r"[0-7]{3,4}", token.value)
    ):
        return f"MODE {token.value!r} is not an octal mode such as 0660"
    return None


def check_rules(text: str) -> list[RuleProblem]:
    """Syntax problems in a udev rules file: keys, operators, quoting, labels.

    Follows udev(7): a rule is one line (a trailing backslash continues it) of
    comma-separated ``KEY[{attr}]OP"value"`` tokens; match keys take == or !=, assignment
    keys =, +=, -= or :=; every GOTO needs a LABEL after it in the same file.
    """
    problems: list[RuleProblem] = []
    labels_after: dict[str, int] = {}
    gotos: list[_Token] = []
    for line, where in _logical_lines(text):
        if not line.strip():
            continue
        try:
            raw_tokens = _tokens(line)
        except _Problem as exc:
            number, column = where[min(exc.offset, len(where) - 1)]
            problems.append(RuleProblem(number, column, exc.message))
            continue
        for offset, key, attr, op, value in raw_tokens:
            number, column = where[offset]
            token = _Token(key, attr, op, value, number, column)
            message = _check_token(token)
            if message:
                problems.append(RuleProblem(number, column, message))
            elif key == "LABEL":
                labels_after[value] = number
            elif key == "GOTO":
                gotos.append(token)
    for goto in gotos:
        if labels_after.get(goto.value, 0) <= goto.line:
            problems.append(
                RuleProblem(goto.line, goto.column, f'GOTO "{goto.value}" has no LABEL after it')
            )
    return sorted(problems, key=lambda p: (p.line, p.column))


def count_rules(text: str) -> int:
    return sum(1 for line, _ in _logical_lines(text) if line.strip())


# --- udevadm verify ---------------------------------------------------------------------


@dataclass(frozen=True)
class UdevadmResult:
    """``udevadm verify`` on one file. ``ok`` is ``None`` when it could not run."""

    ok: bool | None
    output: str


def udevadm_verify(path: Path) -> UdevadmResult:
    """Run ``udevadm verify FILE`` where this udevadm has it (systemd 254 and later)."""
    exe = shutil.which("udevadm")
    if exe is None:
        return UdevadmResult(None, "udevadm is not installed: skipped")
    try:
        usage = subprocess.run(
            [exe, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
        if not re.search(r"^\s+verify\s", usage.stdout, re.MULTILINE):
            version = subprocess.run(
                [exe, "--version"], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
            return UdevadmResult(
                None, f"udevadm {version or '?'} has no 'verify' command (systemd 254+): skipped"
            )
        result = subprocess.run(
            [exe, "verify", str(path)], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return UdevadmResult(None, f"udevadm could not run: {exc}")
    output = "\n".join(s for s in (result.stdout.strip(), result.stderr.strip()) if s)
    return UdevadmResult(result.returncode == 0, output)
