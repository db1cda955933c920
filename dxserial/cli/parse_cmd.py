"""``dxserial parse``: show what a DXP message says, or why it is not one."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.errors import MessageError
from dxserial.protocol.messages import Message, escape, parse
from dxserial.setting import Setting, checked


def _decode_input(text: str, hex_input: bool) -> bytes:
    if hex_input:
        cleaned = "".join(text.split())
        try:
            data = bytes.fromhex(cleaned)
        except ValueError:
            raise MessageError(f"{text!r} is not hexadecimal") from None
        # A TCP capture ends each message with NUL; accept one trailing NUL.
        return data[:-1] if data.endswith(b"\x00") else data
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        raise MessageError(f"{text!r}: only ASCII characters can occur in DXP") from None


def _describe(msg: Message) -> str:
    parts = [f"{k}={v}" for k, v in msg.fields().items()]
    line = f"{msg.NAME} " + " ".join(parts)
    for warning in msg.warnings:
        line += f"\n  warning: {warning}"
    return line


#: Every setting of ``dxserial parse``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("messages", None, "Messages to parse, e.g. 'M0012061100'. With none, one message "
            "per line of stdin.", many=True, argument=True, optional=True),
    Setting("hex_input", False, "Read each message as hexadecimal bytes (a trailing 00 is "
            "ignored).", kind=bool, flags=("--hex",), show_default=True),
    Setting("as_json", False, "Print one JSON object per message.", kind=bool,
            flags=("--json",), show_default=True),
    Setting("lenient", False, "Accept variants real engines send (e.g. fractional minutes) and "
            "warn about them.", kind=bool, show_default=True),
)


def parse_command(**given: Any) -> None:
    """Parse DXP messages and print their type and fields.

    An invalid message prints a one-line reason; the exit code is then 1.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    messages, hex_input, as_json, lenient = values.values()
    if messages:
        inputs = list(messages)
    else:
        inputs = [line.rstrip("\r\n") for line in sys.stdin if line.strip("\r\n")]
    failed = False
    for text in inputs:
        try:
            data = _decode_input(text, hex_input)
            msg = parse(data, strict=not lenient)
        except MessageError as exc:
            failed = True
            if as_json:
                typer.echo(json.dumps({"input": text, "error": str(exc), "offset": exc.offset}))
            else:
                typer.echo(f"invalid: {escape(text.encode('utf-8', 'replace'))}: {exc}")
            continue
        if as_json:
            record = {"type": msg.NAME, **msg.fields(), "raw": msg.raw.decode("ascii")}
            if msg.warnings:
                record["warnings"] = list(msg.warnings)
            typer.echo(json.dumps(record))
        else:
            typer.echo(_describe(msg))
    if failed:
        raise typer.Exit(1)


parse_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("parse")(parse_command)
