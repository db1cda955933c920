"""Every key of a rig file, with what it means: ``dxserial serve --keys``.

A line's keys are the bridge's settings (``dxserial bridge --config`` takes the same names),
each described where :class:`~dxserial.bridge.settings.BridgeConfig` declares it, so a
bridge setting added later is a key, described, at once; :data:`EXTRA` are the line's own.
"""

from __future__ import annotations

from dxserial.bridge.settings import BridgeConfig
from dxserial.setting import Setting, declared

#: Top-level key -> (example value as TOML, what it means).
TOP: dict[str, tuple[str, str]] = {
    "web": ('"127.0.0.1:8080"', "one live page of every line (needs dxserial[web]; --web wins)"),
    "web_allow": ('["192.168.1.0/24"]', "with web: networks whose browsers may connect"),
    "status": ('"/run/dxserial/lab.sock"', "the status socket (default: the runtime folder)"),
}

#: Keys of a line that are not the bridge's settings: the daemon's own.
EXTRA = (
    Setting("serial_number", example='"A1B2C3D4"',
            about="instead of port: the USB adapter with this serial number"),
    Setting("trace", example='"/var/log/dxserial/{line}.jsonl"',
            about="a JSON line per message and event"),
)
#: Every key of a [lines.NAME] table (and of [defaults], but for the port and the address),
#: in the order --keys shows them: each of the line's own after the key it goes with.
LINE_SETTINGS: dict[str, Setting] = {}
for _one in declared(BridgeConfig):
    LINE_SETTINGS[_one.key] = _one
    _after = {"port": EXTRA[0], "pdn_notes": EXTRA[1]}.get(_one.key)
    if _after is not None:
        LINE_SETTINGS[_after.key] = _after
#: Key -> (example value as TOML, what it means).
LINE: dict[str, tuple[str, str]] = {
    key: (one.toml_example, one.meaning) for key, one in LINE_SETTINGS.items()
}

#: Keys described ahead of the bridge setting they map onto (none now).
AHEAD: frozenset[str] = frozenset()
#: Keys only a line may have: what makes it this line.
OWN = frozenset({"port", "serial_number", "listen", "connect"})
#: Shown commented out in the example: each excludes another, or is rarely wanted.
#: The example must start as copied on a plain install: no folder that needs root (pdn).
COMMENTED = frozenset({
    "serial_number", "connect", "dtr", "rts", "trace", "allow", "block_console", "state_dir",
    "max_pending", "reopen_interval", "reconnect_interval", "shutdown_grace", "pdn",
})
#: Top-level keys shown commented out: web needs the dxserial[web] extra.
TOP_COMMENTED = frozenset({"web", "web_allow", "status"})


def about(key: str) -> tuple[str, str]:
    """The example and meaning of a line key."""
    return LINE.get(key, ("...", "a bridge setting (dxserial bridge --help)"))


def example(line_keys: list[str] | None = None) -> str:
    """A commented rig file with every key (``line_keys``: those the reader takes)."""
    keys = line_keys if line_keys is not None else list(LINE)
    table = {key: about(key) for key in keys}
    width = max(len(f"{k} = {v}") for t in (TOP, table) for k, (v, _) in t.items()) + 2

    def lines(entries: dict[str, tuple[str, str]], commented: frozenset[str]) -> list[str]:
        return [
            f"{'# ' if k in commented else ''}{f'{k} = {v}'.ljust(width)}  # {meaning}"
            for k, (v, meaning) in entries.items()
        ]

    return "\n".join([
        "# A rig file (TOML): every serial line of this host, bridged by `dxserial serve`.",
        *lines(TOP, TOP_COMMENTED), "",
        "[defaults]                     # optional: any line key but port, serial_number, "
        "listen, connect",
        'referee = "warn"', "",
        "[lines.NAME]                   # one table per line; NAME: letters, digits, - and _",
        *lines(table, COMMENTED),
    ])


__all__ = ["AHEAD", "COMMENTED", "EXTRA", "LINE", "LINE_SETTINGS", "OWN", "TOP", "about",
           "example"]
