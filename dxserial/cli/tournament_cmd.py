"""``dxserial tournament FILE``: N engines play a round robin or a gauntlet, dxserial referees."""

from __future__ import annotations

import inspect
import sys
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.cli.display import run_watched, stdout_progress
from dxserial.cli.options import checked_link_options, parameters
from dxserial.cli.tournament_settings import SETTINGS
from dxserial.setting import checked
from dxserial.tournament.runner import Tournament, load_spec


def tournament_command(**given: Any) -> None:
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
    configure_logging(given["verbose"], given["quiet"])
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    file = values["file"]
    spec = load_spec(file)
    options = checked_link_options(values, spec.connect_timeout)
    address = values["cluster"] if values["cluster"] is not None else spec.cluster
    how = dict(progress=stdout_progress(), resume=values["resume"],
               concurrency=values["concurrency"], name=values["name"],
               log_messages=values["verbose"] >= 1)
    tournament: Tournament
    if address is not None:
        from dxserial.cluster.runner import ClusterTournament

        tournament = ClusterTournament(spec, options, address=address, **how)
    else:
        tournament = Tournament(spec, options, **how)
    completed = runtime.run(
        run_watched(tournament.run, tournament.stop, web=values["web"], allow=values["allow"] or [],
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


tournament_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("tournament")(tournament_command)
