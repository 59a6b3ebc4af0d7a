"""`referee tournament run|status|reveal`: thin wrappers over
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
from take5_arena.cli.settle import run_knockout_stages, run_settled, run_swiss_rounds
from take5_arena.referee import defaults
from take5_arena.referee.errors import RefereeError
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.round_robin import RunReport, prepare_run, run_tournament
from take5_arena.referee.tournament.status import tournament_status as status_of


@click.group()
def tournament() -> None:
    """Round-robin tournaments of submitted bots (`referee submit` first)."""


def _bracket(
    advance: int | None,
    heat_deals: int | None,
    final_deals: int | None,
    seeding: Path | None,
    from_swiss: int | None,
) -> dict[str, Any]:
    """The knockout options given, as run_knockout's ``bracket``."""
    out: dict[str, Any] = {}
    if from_swiss is not None:
        out["from_swiss"] = from_swiss
    if advance is not None:
        out["advance"] = advance
    if heat_deals is not None:
        out["deals"] = heat_deals
    if final_deals is not None:
        out["final_deals"] = final_deals
    if seeding is not None:
        try:
            names = seeding.read_text(encoding="utf-8").split()
        except (OSError, UnicodeDecodeError) as error:
            raise click.BadParameter(
                f"cannot read {seeding}: {error}", param_hint="--seeding"
            ) from None
        out["seeding"] = names
    return out


def _print_run(report: RunReport, directory: Path, *, as_json: bool) -> None:
    """What a round-robin run did, as JSON or as its summary; exits with its code."""
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
                    "smoke_elsewhere": report.smoke_elsewhere,
                    "infra_failures": [
                        {"game_id": g, "kind": k, "detail": d} for g, k, d in report.infra
                    ],
                },
                indent=1,
            )
        )
        sys.exit(report.exit_code)
    if report.smoke_elsewhere:
        click.echo(
            f"note: {len(report.smoke_elsewhere)} entrants were smoke-tested at another shape "
            "than this run's (table size, game or time limits), so a bot that misbehaves only at "
            f"this one was not caught at submit: {', '.join(report.smoke_elsewhere)}; submit them "
            "again to test them at it",
            err=True,
        )
    with Store(directory, readonly=True) as store:
        render_summary(report, store)
    sys.exit(report.exit_code)


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
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["round-robin", "swiss", "knockout"]),
    default="round-robin",
    show_default=True,
    help="swiss: --rounds rounds, each paired by standing from the results before it. "
    "knockout: heats of --players where the top --advance go through, down to one final table.",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    help="--format swiss: how many rounds [required].",
)
@click.option(
    "--advance",
    type=click.IntRange(min=1),
    help="--format knockout: how many of a full heat go through [half of it].",
)
@click.option(
    "--heat-deals",
    type=click.IntRange(1, 100),
    help="--format knockout: deals each heat plays, each in every rotation [1].",
)
@click.option(
    "--final-deals",
    type=click.IntRange(1, 100),
    help="--format knockout: deals the final plays [3].",
)
@click.option(
    "--seeding",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="--format knockout: a file of the names of the bots that play, best seed first, one a "
    "line [every bot, drawn by the seed].",
)
@click.option(
    "--from-swiss",
    type=click.IntRange(min=2),
    metavar="N",
    help="--format knockout: the top N of this tournament's latest finished Swiss play, seeded "
    "in its order.",
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
    fmt: str,
    rounds: int | None,
    advance: int | None,
    heat_deals: int | None,
    final_deals: int | None,
    seeding: Path | None,
    from_swiss: int | None,
    **overrides: Any,
) -> None:
    """Play every scheduled game of the tournament that is not recorded yet.

    Options given are saved in the tournament; the next run without them uses the saved ones.
    Stopped or killed, the same command resumes: games recorded stay, games cut off are replayed
    from their seed. Exit codes: 0 every game recorded; 1 games left unplayed after infrastructure
    failures (run again); 2 bad usage; 130 interrupted.
    """
    try:
        if fmt == "swiss":  # round by round (referee/tournament/swiss.py)
            if until_settled or gauntlet or dry_run:
                raise click.UsageError(
                    "--format swiss pairs each round from the results before it: no --dry-run, "
                    "--until-settled or --gauntlet"
                )
            if rounds is None:
                raise click.UsageError("--format swiss needs --rounds N")
            sys.exit(run_swiss_rounds(directory, overrides, rounds=rounds, quiet=no_progress))
        if rounds is not None:
            raise click.UsageError("--rounds is for --format swiss")
        bracket = _bracket(advance, heat_deals, final_deals, seeding, from_swiss)
        if fmt == "knockout":  # stage by stage (referee/tournament/knockout.py)
            if until_settled or gauntlet or dry_run:
                raise click.UsageError(
                    "--format knockout draws each stage from the results before it: no "
                    "--dry-run, --until-settled or --gauntlet"
                )
            sys.exit(run_knockout_stages(directory, overrides, bracket, quiet=no_progress))
        if bracket:
            raise click.UsageError(
                "--advance, --heat-deals, --final-deals, --seeding and --from-swiss are for "
                "--format knockout"
            )
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
                settings, versions, schedule, dealer = prepare_run(store, overrides, preview=True)
            click.echo(settings.describe())
            click.echo(f"entrants: {', '.join(v.key for v in versions)}")
            click.echo(schedule.describe())
            for t in schedule.tables:  # a secret deal's seed is shown nowhere before it is played
                deal = "secret" if dealer.secret else str(t.deal_seed)
                click.echo(f"  table {t.index:>4}  deal {deal:>19}  " + "  ".join(t.seats))
            return
        progress = TournamentProgress(enabled=not (no_progress or as_json))
        report = run_tournament(directory, overrides, progress=progress)
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    _print_run(report, directory, as_json=as_json)


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


@tournament.command("reveal")
@options.tournament_dir()
@click.option(
    "--abandon-pending",
    is_flag=True,
    help="Give up the games of this season not played yet (revealing would make them predictable).",
)
@options.as_json("the revealed key and the next season's commitment")
def tournament_reveal(directory: Path, abandon_pending: bool, as_json: bool) -> None:
    """Publish the deal key of the season that is over, so that anyone can check its seeds.

    The key's SHA-256 was published from the season's start; `referee verify --tournament` and
    `--site` then check every seed of the season against the key. A new season starts with a new
    secret key (docs/security.md, "Deals")."""
    from take5_arena.referee.store.deals import reveal  # lazy: start-up time
    from take5_arena.referee.tournament.run.lifecycle import run_lock  # lazy: start-up time

    try:
        with run_lock(directory), Store(directory) as store:
            done = reveal(store, abandon=abandon_pending)
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    if as_json:
        doc = {
            "season": done.season,
            "key": done.key,
            "commitment": done.commitment,
            "abandoned": done.abandoned,
            "next_season": done.next.season,
            "next_commitment": done.next.commitment,
        }
        click.echo(json.dumps(doc, indent=1))
        return
    click.echo(f"deal season {done.season}: key {done.key}")
    click.echo(f"  (its SHA-256 {done.commitment} was published from the season's start)")
    if done.abandoned:
        click.echo(f"  {done.abandoned} games of the season not played were given up")
    click.echo(f"deal season {done.next.season} begins: commitment {done.next.commitment}")
