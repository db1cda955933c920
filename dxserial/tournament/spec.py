"""A tournament file, read and checked (sans I/O but for an ``openings_file``): its keys,
its engines (an endpoint or a command each) and its openings (FEN or PDN moves).
``dxserial tournament --keys`` describes every key (:mod:`~dxserial.tournament.keys`);
:mod:`~dxserial.tournament.event` schedules and scores what the file describes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dxserial.draughts import FenError, Position
from dxserial.draughts.notation import parse_pdn_move
from dxserial.errors import ConfigError, DxSerialError
from dxserial.game.arbiter import ArbiterSettings
from dxserial.hosting.command import (
    EngineCommand,
    check_endpoint_text,
    parse_engine_command,
)
from dxserial.tournament.sprt import SprtConfig, parse_sprt
from dxserial.transports.endpoints import EndpointKind, LinkKind, parse_engine_endpoint

__all__ = [
    "KNOWN_KEYS",
    "PLACEMENT_KEYS",
    "SPRT_ROUNDS",
    "EngineEntry",
    "Opening",
    "TournamentSpec",
    "check_cluster",
    "engine_entry",
    "parse_opening",
]

_DEFAULTS: dict[str, Any] = {
    "event": "dxserial tournament",
    "format": "round-robin",
    "rounds": 1,
    "minutes": 5,
    "max_moves": 75,
    "move_timeout": 60.0,
    "connect_timeout": 30.0,
    "pdn": "games",
    "openings": [],
    "concurrency": 1,
    "on_unreachable": "stop",
}
_ARBITER_KEYS = set(ArbiterSettings.KEYS)  # draw_rules, on_false_claim, time_control, ...
#: Every top-level key the reader takes (``dxserial tournament --keys`` describes each).
KNOWN_KEYS = frozenset({
    *_DEFAULTS, *_ARBITER_KEYS, "engines", "gauntlet", "sprt", "openings_file", "moves",
    "time_moves", "pdn_notes", "cluster",
})
#: Keys of any engine table that say where its games may run on a cluster (worker resources).
PLACEMENT_KEYS = frozenset({"worker", "resources"})


@dataclass(frozen=True)
class Opening:
    """A start position: ``text`` as written, the position it leads to (None: normal start)."""

    text: str
    position: Position | None


def parse_opening(text: str) -> Opening:
    """A FEN (``W:W31-50:B1-20``) or a PDN move list from the start (``1. 32-28 18-23``)."""
    raw = " ".join(text.split())
    if not raw:
        return Opening("", None)
    if ":" in raw and raw[0] in "WBwb":
        try:
            return Opening(raw, Position.from_fen(raw))
        except FenError as exc:
            raise ConfigError(f"opening {raw!r}: {exc}") from None
    position = Position.start()
    for token in raw.split():
        if token.rstrip(".").isdigit() or token in ("*",):
            continue
        try:
            position = position.play(parse_pdn_move(position, token))
        except DxSerialError as exc:
            raise ConfigError(f"opening {raw!r}: move {token!r}: {exc}") from None
    return Opening(raw, position)


@dataclass(frozen=True)
class EngineEntry:
    """One engine of the file: its name and its endpoint, as ``dxserial match`` takes it,
    or the command that runs it (see :mod:`dxserial.hosting.command`)."""

    name: str
    endpoint: str
    link: LinkKind | None = None
    baud: int | None = None
    command: EngineCommand | None = None
    #: On a cluster: the worker (its ``--name``) that alone may play this engine's games.
    worker: str | None = None
    #: On a cluster: worker resources each of its games holds (``dask worker --resources``).
    resources: tuple[tuple[str, float], ...] = ()

    @property
    def bound(self) -> bool:
        """Tied to a host (a worker name or a resource): its games run only there."""
        return self.worker is not None or bool(self.resources)


@dataclass(frozen=True)
class TournamentSpec:
    """A tournament file, checked."""

    engines: tuple[EngineEntry, ...]
    event: str = "dxserial tournament"
    format: str = "round-robin"
    gauntlet: str | None = None
    rounds: int = 1
    minutes: int = 5
    #: The director's move limit (``max_moves``; ``moves`` is its old name).
    moves: int = 75
    #: The GAMEREQ's moves for ``minutes`` (None: the move limit).
    time_moves: int | None = None
    pdn_notes: bool = False
    move_timeout: float = 60.0
    connect_timeout: float = 30.0
    pdn: Path = Path("games")
    openings: tuple[Opening, ...] = (Opening("", None),)
    concurrency: int = 1
    arbiter: ArbiterSettings = field(default_factory=ArbiterSettings)
    on_unreachable: str = "stop"
    sprt: SprtConfig | None = None
    #: ``tcp://SCHEDULER:PORT`` of a Dask scheduler: games are tasks on its workers.
    cluster: str | None = None

    @classmethod
    def from_toml(
        cls, text: str, *, source: str = "tournament file", base: Path | None = None
    ) -> TournamentSpec:
        """Read and check a tournament file; ``pdn`` is relative to ``base`` (the file's folder)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        return cls.from_dict(data, source=source, base=base)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, source: str = "tournament file", base: Path | None = None
    ) -> TournamentSpec:
        unknown = sorted(set(data) - KNOWN_KEYS)
        if unknown:
            raise ConfigError(
                f"{source}: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(KNOWN_KEYS))}"
            )
        if "moves" in data:  # the old name, which meant the same
            if "max_moves" in data:
                raise ConfigError(
                    f"{source}: moves is the old name of max_moves: give only max_moves"
                )
            data = {k if k != "moves" else "max_moves": v for k, v in data.items()}
        values = {**_DEFAULTS, **data}
        sprt = parse_sprt(data["sprt"], source) if "sprt" in data else None
        if sprt is not None and "rounds" not in data:
            values["rounds"] = SPRT_ROUNDS
        engines_raw = data.get("engines")
        if not isinstance(engines_raw, dict) or len(engines_raw) < 2:
            raise ConfigError(
                f"{source}: needs at least two [engines.NAME] tables with an endpoint"
            )
        engines = [engine_entry(str(n), e, source, base) for n, e in engines_raw.items()]
        if values["on_unreachable"] not in ("stop", "forfeit"):
            raise ConfigError(f"{source}: on_unreachable must be 'stop' or 'forfeit'")
        fmt = values["format"]
        gauntlet = data.get("gauntlet")
        if fmt not in ("round-robin", "gauntlet"):
            raise ConfigError(f"{source}: format {fmt!r} is not 'round-robin' or 'gauntlet'")
        if fmt == "gauntlet" and gauntlet not in {e.name for e in engines}:
            raise ConfigError(
                f"{source}: format 'gauntlet' needs gauntlet = the name of one of the engines"
            )
        ints = {k: values[k] for k in ("rounds", "minutes", "max_moves", "concurrency")}
        if "time_moves" in data:
            ints["time_moves"] = data["time_moves"]
        for key, value in ints.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{source}: {key} must be a whole number >= 0, not {value!r}")
        if (
            ints["rounds"] < 1
            or ints["concurrency"] < 1
            or max(ints["max_moves"], ints["minutes"], ints.get("time_moves", 0)) > 999
        ):
            raise ConfigError(
                f"{source}: rounds and concurrency must be >= 1; max_moves, time_moves and"
                " minutes 0..999"
            )
        if not isinstance(data.get("pdn_notes", False), bool):
            raise ConfigError(f"{source}: pdn_notes must be true or false")
        for key in ("move_timeout", "connect_timeout"):
            if not isinstance(values[key], int | float) or not values[key] > 0:
                raise ConfigError(f"{source}: {key} must be a number of seconds > 0")
        openings_raw = values["openings"]
        if not isinstance(openings_raw, list) or not all(isinstance(o, str) for o in openings_raw):
            raise ConfigError(f"{source}: openings must be a list of strings (FEN or PDN moves)")
        if "openings_file" in data:
            openings_raw = [*openings_raw, *_openings_file(data["openings_file"], source, base)]
        openings = tuple(parse_opening(o) for o in openings_raw) or (Opening("", None),)
        if sprt is not None and len(engines) != 2:
            raise ConfigError(f"{source}: sprt needs exactly two engines (A is the first listed)")
        cluster = data.get("cluster")
        if cluster is not None:
            cluster = check_cluster(cluster, source)
            for engine in engines:
                _check_placed(engine, source)
        pdn = Path(str(values["pdn"]))
        if base is not None and not pdn.is_absolute():
            pdn = base / pdn
        return cls(
            engines=tuple(engines),
            event=str(values["event"]),
            format=fmt,
            gauntlet=gauntlet if fmt == "gauntlet" else None,
            rounds=ints["rounds"],
            minutes=ints["minutes"],
            moves=ints["max_moves"],
            time_moves=ints.get("time_moves"),
            pdn_notes=bool(data.get("pdn_notes", False)),
            move_timeout=float(values["move_timeout"]),
            connect_timeout=float(values["connect_timeout"]),
            pdn=pdn,
            openings=openings,
            concurrency=ints["concurrency"],
            arbiter=ArbiterSettings.checked(data, lambda key: f"{source}: {key}"),
            on_unreachable=values["on_unreachable"],
            sprt=sprt,
            cluster=cluster,
        )

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.engines]


#: With sprt and no rounds given: at most this many rounds (the test stops long before).
SPRT_ROUNDS = 1000


def _openings_file(name: Any, source: str, base: Path | None) -> list[str]:
    """One opening a line (FEN or PDN moves); blank lines and ``#`` comments skipped."""
    from dxserial.files import read_text

    path = Path(str(name))
    if base is not None and not path.is_absolute():
        path = base / path
    text = read_text(path, "openings file", "one FEN or PDN move list a line")
    lines = [line.strip() for line in text.splitlines()]
    found = [line for line in lines if line and not line.startswith("#")]
    if not found:
        raise ConfigError(f"{source}: openings_file {path} has no opening in it")
    return found


def check_cluster(value: Any, source: str) -> str:
    """``cluster = "tcp://HOST:PORT"``: a Dask scheduler's address, checked for its form."""
    text = value.strip() if isinstance(value, str) else ""
    host, sep, port = text.removeprefix("tcp://").rpartition(":")
    if not text.startswith("tcp://") or not sep or not host or not port.isdigit():
        raise ConfigError(
            f'{source}: cluster must be a Dask scheduler\'s address, cluster = '
            f'"tcp://HOST:PORT" (dask scheduler prints it), not {value!r}'
        )
    return text


def _check_placed(engine: EngineEntry, source: str) -> None:
    """On a cluster, an engine on a serial line or listening for its peer is on one host:
    its table must say which (a worker or a resource), or its games would go anywhere."""
    if engine.command is not None or engine.bound:
        return
    if parse_engine_endpoint(engine.endpoint).kind is not EndpointKind.TCP:
        raise ConfigError(
            f"{source}: engine {engine.name!r}: endpoint {engine.endpoint} is on one host: "
            'say which with worker = "NAME" or resources = { serial = 1 } (see docs/cluster.md)'
        )


def _placement(name: str, entry: dict[str, Any], source: str) -> dict[str, Any]:
    """``worker`` and ``resources`` of an engine table, checked, as EngineEntry fields."""
    where = f"{source}: engine {name!r}"
    worker = entry.get("worker")
    if worker is not None and (not isinstance(worker, str) or not worker.strip()):
        raise ConfigError(f'{where}: worker must be a worker\'s name, worker = "lab-pc-3"')
    raw = entry.get("resources", {})
    if not isinstance(raw, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in raw.values()
    ):
        raise ConfigError(
            f"{where}: resources must be a table of amounts > 0, resources = {{ serial = 1 }}"
        )
    resources = tuple(sorted((str(k), float(v)) for k, v in raw.items()))
    return {"worker": worker.strip() if worker else None, "resources": resources}


def engine_entry(name: str, entry: Any, source: str, base: Path | None) -> EngineEntry:
    """One ``[engines.NAME]`` table: an endpoint, or a command (``command``/``speaks``);
    either may say where on a cluster its games run (``worker``, ``resources``)."""
    placed: dict[str, Any] = {}
    if isinstance(entry, dict):
        placed = _placement(name, entry, source)
        entry = {k: v for k, v in entry.items() if k not in PLACEMENT_KEYS}
    if isinstance(entry, dict) and ("command" in entry or "speaks" in entry):
        if "endpoint" in entry:
            raise ConfigError(f"{source}: engine {name!r}: give endpoint or command, not both")
        return EngineEntry(name, "", command=parse_engine_command(
            name, entry, source=source, base=base), **placed)
    if not isinstance(entry, dict) or not isinstance(entry.get("endpoint"), str):
        raise ConfigError(
            f'{source}: engine {name!r} needs endpoint = "..." or command = [...] with speaks'
        )
    extra = sorted(set(entry) - {"endpoint", "link", "baud"})
    if extra:
        raise ConfigError(f"{source}: engine {name!r}: unknown setting(s) {', '.join(extra)}")
    typo = check_endpoint_text(entry["endpoint"])
    if typo is not None:
        raise ConfigError(f"{source}: engine {name!r}: {typo}")
    try:
        parse_engine_endpoint(entry["endpoint"])
    except ConfigError as exc:
        raise ConfigError(f"{source}: engine {name!r}: {exc}") from None
    link, baud = entry.get("link"), entry.get("baud")
    if link is not None and link not in ("nulmodem", "nul"):
        raise ConfigError(f"{source}: engine {name!r}: link {link!r} is not 'nulmodem' or 'nul'")
    if baud is not None and (not isinstance(baud, int) or isinstance(baud, bool) or baud <= 0):
        raise ConfigError(f"{source}: engine {name!r}: baud must be a whole number > 0")
    return EngineEntry(name, entry["endpoint"], link, baud, **placed)
