"""``dxserial tournament FILE``: N engines play a round robin or a gauntlet, dxserial referees."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP, configure_logging
from dxserial.cli.display import run_watched, stdout_progress
from dxserial.cli.options import (
    END_BYTE,
    START_BYTE,
    allow_option,
    baud_option,
    echo_timeout_option,
    link_option,
    link_options,
    max_attempts_option,
    web_option,
)
from dxserial.engine.player import DEFAULT_NAME, check_name
from dxserial.errors import ConfigError
from dxserial.tournament.runner import Tournament, load_spec
from dxserial.tournament.spec import check_cluster


def _print_keys(value: bool) -> None:
    if value:
        from dxserial.tournament.keys import example

        typer.echo(example())
        raise typer.Exit()


@app.command("tournament")
def tournament_command(
    file: Path = typer.Argument(
        ..., metavar="FILE", help="The tournament file (TOML; --keys shows every key)."
    ),
    keys: bool = typer.Option(
        False, "--keys", is_eager=True, callback=_print_keys,
        help="Print every key of the tournament file, with an example, and exit.",
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Continue the tournament whose state is in the pdn folder."
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        help="Games at the same time (default: the file's, else 1); an endpoint engine plays "
        "one at a time, an engine dxserial runs gets its own process for each game. On a "
        "cluster: at most this many games in flight (default: the workers' threads and "
        "one waiting on each worker).",
        show_default=False,
    ),
    cluster: str | None = typer.Option(
        None,
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="Play the games as tasks on the workers of this Dask scheduler (else the file's "
        "cluster key; needs dxserial[cluster], see docs/cluster.md).",
        show_default=False,
    ),
    web: str | None = web_option(),
    allow: list[str] = allow_option(),
    link: str = link_option(),
    baud: int = baud_option(),
    echo_timeout: float = echo_timeout_option(None),
    max_attempts: int = max_attempts_option(None),
    name: str = typer.Option(DEFAULT_NAME, "--name", help="Initiator name sent in GAMEREQs."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help=VERBOSE_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Play a round robin or a gauntlet between engines listed in a TOML file.

    Every pairing plays each opening with both colours; games between different pairs run
    at the same time with --concurrency. A crosstable with Elo, a PDN file per game and one
    for the whole event are written; the state is saved after every game, so --resume goes
    on after a crash without replaying finished games. An engine is an endpoint or a
    command (speaks = dxp-server, dxp-client or dosbox) that dxserial starts, watches and
    restarts; with sprt = { elo0, elo1, alpha, beta } two engines play game pairs until the
    SPRT decides. With --cluster (or cluster = "tcp://HOST:PORT") the games are tasks on
    the workers of a Dask scheduler. Exit 0 when every game was played (or the SPRT
    decided); 1 when it stopped early, an engine could not be started, or no game was played.
    """
    configure_logging(verbose, quiet)
    spec = load_spec(file)
    if concurrency is not None and concurrency < 1:
        raise ConfigError("--concurrency must be >= 1")
    start, end = START_BYTE.typer_default, END_BYTE.typer_default  # no options: the defaults
    options = link_options(
        link, baud, start, end, echo_timeout, max_attempts, spec.connect_timeout
    )
    address = check_cluster(cluster, "--cluster") if cluster is not None else spec.cluster
    tournament: Tournament
    if address is not None:
        from dxserial.cluster.runner import ClusterTournament

        tournament = ClusterTournament(
            spec,
            options,
            address=address,
            progress=stdout_progress(),
            resume=resume,
            concurrency=concurrency,
            name=check_name(name),
            log_messages=verbose >= 1,
        )
    else:
        tournament = Tournament(
            spec,
            options,
            progress=stdout_progress(),
            resume=resume,
            concurrency=concurrency,
            name=check_name(name),
            log_messages=verbose >= 1,
        )
    completed = runtime.run(
        run_watched(tournament.run, tournament.stop, web=web, allow=allow,
                    say=tournament.progress.line, title=tournament.spec.event,
                    watch=tournament.watchers.append)
    )
    sys.stdout.flush()
    if not completed:
        done, total = len(tournament.state.games), len(tournament.schedule.games)
        if tournament.stopped:
            print(f"dxserial: error: {tournament.stopped}", file=sys.stderr)
            raise typer.Exit(1)
        print(
            f"dxserial: error: tournament stopped after {done} of {total} game(s); "
            f"continue with: dxserial tournament {file} --resume",
            file=sys.stderr,
        )
        raise typer.Exit(1)


