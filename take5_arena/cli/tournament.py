"""`referee tournament run` and `referee tournament status`: thin wrappers over
take5_arena/referee/tournament/ (the schedule, the run loop, the adaptive run) and the progress and
summaries of cli/progress.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from take5_arena.cli import options
from take5_arena.cli.progress import TournamentProgress, render_status, render_summary
from take5_arena.cli.settle import run_settled
from take5_arena.referee import defaults
from take5_arena.referee.errors import RefereeError
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.run import prepare_run, run_tournament
from take5_arena.referee.tournament.status import tournament_status as status_of


@click.group()
def tournament() -> None:
    """Round-robin tournaments of submitted bots (`referee submit` first)."""


@tournament.command("run")
@options.tournament_dir()
@click.option(
    "--games",
    "-g",
    type=click.IntRange(min=1),
    help="Games wanted (whole duplicate sets; a complete round robin in whole cycles) "
    "[a complete round robin if at most 1,000 tables, else 10 tables per entrant].",
)
@options.seed(stored=True, help="Seed of the schedule and the deals.")
@click.option(
    "--duplicate/--no-duplicate",
    default=None,
    help="Replay each deal with the hands rotated through every seat [on].",
)
@options.play_settings()
@click.option("--dry-run", is_flag=True, help="Print the schedule and play nothing.")
@click.option("--no-progress", is_flag=True, help="No progress bar (logs, scripts).")
@options.as_json("what the run did (no progress bar)")
@click.option(
    "--until-settled",
    is_flag=True,
    help="Instead of a fixed schedule, play tables where neighbours' order is least settled "
    "until every neighbour pair's LOS reaches --confidence or --budget is spent.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True),
    default=defaults.SETTLE_CONFIDENCE,
    show_default=True,
    help="--until-settled: the LOS at which a pair counts as settled.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    help=f"--until-settled: most games [{defaults.SETTLE_BUDGET_PER_ENTRANT} per entrant].",
)
@click.option(
    "--gauntlet",
    metavar="NAME",
    help="Play entrant NAME against the pool until its place is settled (implies --until-settled).",
)
def tournament_run(
    directory: Path,
    dry_run: bool,
    no_progress: bool,
    as_json: bool,
    until_settled: bool,
    confidence: float,
    budget: int | None,
    gauntlet: str | None,
    **overrides: Any,
) -> None:
    """Play every scheduled game of the tournament that is not recorded yet.

    Options given are saved in the tournament; the next run without them uses the saved ones.
    Stopped or killed, the same command resumes: games recorded stay, games cut off are replayed
    from their seed. Exit codes: 0 every game recorded; 1 games left unplayed after infrastructure
    failures (run again); 2 bad usage; 130 interrupted.
    """
    try:
        if until_settled or gauntlet:  # adaptive scheduling (referee/tournament/settle.py)
            if dry_run:
                raise click.UsageError(
                    "--dry-run shows a fixed schedule; adaptive tables depend on the results"
                )
            sys.exit(
                run_settled(
                    directory,
                    overrides,
                    confidence=confidence,
                    budget=budget,
                    gauntlet=gauntlet,
                    quiet=no_progress,
                )
            )
        if dry_run:
            with Store(directory, readonly=True) as store:
                settings, versions, schedule = prepare_run(store, overrides)
            click.echo(settings.describe())
            click.echo(f"entrants: {', '.join(v.key for v in versions)}")
            click.echo(schedule.describe())
            for t in schedule.tables:
                click.echo(f"  table {t.index:>4}  deal {t.deal_seed:>19}  " + "  ".join(t.seats))
            return
        progress = TournamentProgress(enabled=not (no_progress or as_json))
        report = run_tournament(directory, overrides, progress=progress)
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    if as_json:
        click.echo(
            json.dumps(
                {
                    "schedule_id": report.schedule_id,
                    "total": report.total,
                    "recorded": report.done,
                    "played": report.played,
                    "unplayed": report.unplayed,
                    "interrupted": report.interrupted,
                    "seconds": round(report.seconds, 3),
                    "exit_code": report.exit_code,
                    "infra_failures": [
                        {"game_id": g, "kind": k, "detail": d} for g, k, d in report.infra
                    ],
                },
                indent=1,
            )
        )
        sys.exit(report.exit_code)
    with Store(directory, readonly=True) as store:
        render_summary(report, store)
    sys.exit(report.exit_code)


@tournament.command("status")
@options.tournament_dir()
@options.bootstrap()
@options.as_json("the status")
def tournament_status(directory: Path, bootstrap: int, bootstrap_seed: int, as_json: bool) -> None:
    """Where a running or stopped tournament stands: progress, runs, failures, standings."""
    try:
        status = status_of(directory)
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    if as_json:
        click.echo(json.dumps(status, indent=1, default=str))
        return
    render_status(status, bootstrap=bootstrap, seed=bootstrap_seed)
