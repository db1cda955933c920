"""A tournament file, read and checked (sans I/O but for an ``openings_file``): its keys,
its engines (an endpoint or a command each) and its openings (FEN or PDN moves).
``dxserial tournament --keys`` describes every key (:mod:`~dxserial.tournament.keys`);
:mod:`~dxserial.tournament.event` schedules and scores what the file describes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dxserial.config import unknown_key
from dxserial.draughts import FenError, Position
from dxserial.draughts.notation import parse_pdn_move
from dxserial.errors import ConfigError, DxSerialError
from dxserial.game.adjudication import Adjudication
from dxserial.game.arbiter import ArbiterSettings
from dxserial.processes.command import (
    KINDS,
    EngineCommand,
    check_endpoint_text,
    parse_engine_command,
)
from dxserial.setting import Setting
from dxserial.tomltext import parse_toml
from dxserial.tournament import ballots
from dxserial.tournament.hub_time import HubTime
from dxserial.tournament.keys import ENDPOINT_KEYS, ENGINE, FILE_KEYS, PLACEMENT
from dxserial.tournament.sprt import SprtConfig, parse_sprt
from dxserial.transports.endpoints import EndpointKind, LinkKind, parse_engine_endpoint

__all__ = [
    "KEYS_HINT",
    "KNOWN_KEYS",
    "PLACEMENT_KEYS",
    "SPRT_ROUNDS",
    "EngineEntry",
    "Opening",
    "TournamentSpec",
    "check_cluster",
    "check_scores",
    "engine_entry",
    "parse_opening",
]

_BY_KEY = {one.key: one for one in FILE_KEYS}
#: Each key's default, written once (in :data:`~dxserial.tournament.keys.FILE_KEYS`).
_D: dict[str, Any] = {one.key: one.default for one in FILE_KEYS}
#: Every top-level key the reader takes (``dxserial tournament --keys`` describes each).
KNOWN_KEYS = frozenset({*_BY_KEY, "engines"})
KEYS_HINT = "dxserial tournament --keys lists them"
#: Keys of any engine table that say where its games may run on a cluster (worker resources).
PLACEMENT_KEYS = frozenset(one.key for one in PLACEMENT)


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
    or the command that runs it (see :mod:`dxserial.processes.command`)."""

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
    event: str = _D["event"]
    format: str = _D["format"]
    gauntlet: str | None = None
    rounds: int = _D["rounds"]
    minutes: int = _D["minutes"]
    #: The director's move limit (``max_moves``; ``moves`` is its old name).
    moves: int = _D["max_moves"]
    #: The GAMEREQ's moves for ``minutes`` (None: the move limit).
    time_moves: int | None = None
    pdn_notes: bool = _D["pdn_notes"]
    move_timeout: float = _D["move_timeout"]
    connect_timeout: float = _D["connect_timeout"]
    pdn: Path = Path(_D["pdn"])
    openings: tuple[Opening, ...] = (Opening("", None),)
    concurrency: int = _D["concurrency"]
    arbiter: ArbiterSettings = field(default_factory=ArbiterSettings)
    on_unreachable: str = _D["on_unreachable"]
    sprt: SprtConfig | None = None
    #: ``tcp://SCHEDULER:PORT`` of a Dask scheduler: games are tasks on its workers.
    cluster: str | None = None
    #: Fischer increment or time per move (Hub engines only; ``minutes`` without them).
    hub_time: HubTime = field(default_factory=HubTime)
    #: Games ended on the engines' scores (engines that report them only).
    adjudication: Adjudication = field(default_factory=Adjudication)
    #: The order the openings were put in (already applied to ``openings``).
    opening_order: ballots.BallotOrder = field(default_factory=ballots.BallotOrder)

    @classmethod
    def from_toml(
        cls, text: str, *, source: str = "tournament file", base: Path | None = None
    ) -> TournamentSpec:
        """Read and check a tournament file; ``pdn`` is relative to ``base`` (the file's folder)."""
        return cls.from_dict(parse_toml(text, source), source=source, base=base)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, source: str = "tournament file", base: Path | None = None
    ) -> TournamentSpec:
        values = _values(data, source)
        engines = _engines(data, source, base)
        fmt = values["format"]
        gauntlet = values["gauntlet"]
        if fmt == "gauntlet" and gauntlet not in {e.name for e in engines}:
            raise ConfigError(
                f"{source}: format 'gauntlet' needs gauntlet = the name of one of the engines"
            )
        sprt = parse_sprt(data["sprt"], source) if "sprt" in data else None
        if sprt is not None and len(engines) != 2:
            raise ConfigError(f"{source}: sprt needs exactly two engines (A is the first listed)")
        rounds = SPRT_ROUNDS if sprt is not None and "rounds" not in data else values["rounds"]
        openings, order = _openings(values, data, source, base)
        timing = HubTime.checked(data, engines, source)
        engines = [timing.told(e) for e in engines]
        judged = Adjudication.checked(data, lambda key: f"{source}: {key}")
        if judged.on:
            check_scores(engines, judged, source)
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
            rounds=rounds,
            minutes=values["minutes"],
            moves=values["max_moves"],
            time_moves=values["time_moves"],
            pdn_notes=values["pdn_notes"],
            move_timeout=float(values["move_timeout"]),
            connect_timeout=float(values["connect_timeout"]),
            pdn=pdn,
            openings=openings,
            concurrency=values["concurrency"],
            arbiter=ArbiterSettings.checked(data, lambda key: f"{source}: {key}"),
            on_unreachable=values["on_unreachable"],
            sprt=sprt,
            cluster=cluster,
            opening_order=order,
            adjudication=judged,
            hub_time=timing,
        )

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.engines]


#: With sprt and no rounds given: at most this many rounds (the test stops long before).
SPRT_ROUNDS = 1000


def _values(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Every top-level key's value, checked by its declaration; a missing key: its default."""
    for key in data:
        if key not in KNOWN_KEYS:
            raise unknown_key(source, key, KNOWN_KEYS, KEYS_HINT, word="setting")
    if "moves" in data:  # the old name, which meant the same
        if "max_moves" in data:
            raise ConfigError(f"{source}: moves is the old name of max_moves: give only max_moves")
        data = {k if k != "moves" else "max_moves": v for k, v in data.items()}
    return {one.key: _checked(one, data[one.key], source) if one.key in data else one.default
            for one in FILE_KEYS}


def _checked(one: Setting, value: Any, source: str) -> Any:
    """One value against its declaration (kind, choices, bounds), in the file's words."""
    where = f"{source}: {one.key}"
    if one.choices and value not in one.choices:
        raise ConfigError(f"{where}: {value!r} is not {' or '.join(map(repr, one.choices))}")
    if one.kind is bool and not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false")
    if one.kind is int and (not isinstance(value, int) or isinstance(value, bool)
                            or not one.minimum <= value <= one.maximum):  # type: ignore[operator]
        raise ConfigError(f"{where} must be a whole number {one.minimum:g}..{one.maximum:g}, "
                          f"not {value!r}")
    if one.kind is float and one.above and (
        not isinstance(value, int | float) or isinstance(value, bool) or not value > 0
    ):
        raise ConfigError(f"{where} must be a number of seconds > 0")
    return value


def _engines(data: dict[str, Any], source: str, base: Path | None) -> list[EngineEntry]:
    tables = data.get("engines")
    if not isinstance(tables, dict) or len(tables) < 2:
        raise ConfigError(f"{source}: needs at least two [engines.NAME] tables with an endpoint")
    return [engine_entry(str(n), e, source, base) for n, e in tables.items()]


def _openings(
    values: dict[str, Any], data: dict[str, Any], source: str, base: Path | None
) -> tuple[tuple[Opening, ...], ballots.BallotOrder]:
    """``openings`` (a list, or a ballot set's name) and the lines of ``openings_file``, in
    the order the file asks for, each read (the normal start: none)."""
    texts = values["openings"]
    if isinstance(texts, str):
        texts = ballots.named_openings(texts, source)
    if not isinstance(texts, list | tuple) or not all(isinstance(o, str) for o in texts):
        raise ConfigError(
            f'{source}: openings must be a list of strings (FEN or PDN moves) or "2-move"'
        )
    texts = list(texts)
    if values["openings_file"] is not None:
        texts = [*texts, *_openings_file(values["openings_file"], source, base)]
    order = ballots.BallotOrder.from_dict(data, source)
    if texts:
        texts = ballots.ordered(texts, order, source)
    elif order != ballots.BallotOrder():
        raise ConfigError(f"{source}: openings_order/openings_start need openings")
    return tuple(parse_opening(o) for o in texts) or (Opening("", None),), order


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


def check_scores(engines: list[EngineEntry], judged: Adjudication, source: str) -> None:
    """Adjudication needs every game's two engines to report scores: every pairing here
    has each engine in it, so every engine must (only a Hub engine does)."""
    for engine in engines:
        if engine.command is None or not KINDS[engine.command.speaks].reports_thinking:
            raise ConfigError(
                f"{source}: {' and '.join(judged.keys())}: engine {engine.name!r} reports no "
                f'scores (only an engine with speaks = "hub" does; DXP carries none), so its '
                "games cannot be adjudicated"
            )


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
    where = f"{source}: engine {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f'{where} needs endpoint = "..." or command = [...] with speaks')
    for key in entry:
        if key not in ENGINE:
            raise unknown_key(where, key, ENGINE, KEYS_HINT, word="setting")
    placed = _placement(name, entry, source)
    entry = {k: v for k, v in entry.items() if k not in PLACEMENT_KEYS}
    if "command" in entry or "speaks" in entry:
        if "endpoint" in entry:
            raise ConfigError(f"{where}: give endpoint or command, not both")
        return EngineEntry(name, "", command=parse_engine_command(
            name, entry, source=source, base=base), **placed)
    if not isinstance(entry.get("endpoint"), str):
        raise ConfigError(f'{where} needs endpoint = "..." or command = [...] with speaks')
    extra = sorted(set(entry) - {one.key for one in ENDPOINT_KEYS})
    if extra:
        raise ConfigError(f"{where}: {', '.join(extra)} go(es) with command = [...], not with "
                          "an endpoint")
    _check_endpoint(entry["endpoint"], where)
    link, baud = (_line_value(one, entry.get(one.key), where) for one in ENDPOINT_KEYS[1:])
    return EngineEntry(name, entry["endpoint"], link, baud, **placed)


def _check_endpoint(text: str, where: str) -> None:
    typo = check_endpoint_text(text)
    if typo is not None:
        raise ConfigError(f"{where}: {typo}")
    try:
        parse_engine_endpoint(text)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _line_value(one: Setting, value: Any, where: str) -> Any:
    """A table's ``link`` or ``baud``, checked by its declaration (None: not given)."""
    if value is None:
        return None
    if one.choices and value not in one.choices:
        raise ConfigError(f"{where}: {one.key} {value!r} is not "
                          f"{' or '.join(map(repr, one.choices))}")
    if one.kind is int and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ConfigError(f"{where}: {one.key} must be a whole number > 0")
    return value
