"""`referee standings` and `referee publish`: thin wrappers over take5_arena.standings (the games
of a tournament or of record files) and take5_arena.leaderboard (ratings, the site).

Exit codes as everywhere: 0 success, 1 nothing to rate (no complete games) or a store whose
results table does not follow from its records (refused: nothing is printed or published), 2 bad
usage or input.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from take5_arena.cli import options
from take5_arena.cli.terminal import field
from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.markdown import standings_text
from take5_arena.leaderboard.publish import same_author, standings_document
from take5_arena.leaderboard.site_build import PublishReport, write_site
from take5_arena.leaderboard.site_versions import is_versioned, publish_versioned
from take5_arena.standings import (
    Games,
    SourceError,
    UnverifiedStoreError,
    load_record_files,
    load_tournament,
)


def _source_options(command: Any) -> Any:
    command = click.option(
        "--records",
        "records",
        multiple=True,
        type=click.Path(exists=True, path_type=Path),
        help="Game record files or folders of them (instead of a tournament); repeatable.",
    )(command)
    command = click.option(
        "--tournament",
        "-t",
        "tournament",
        type=click.Path(file_okay=False, path_type=Path),
        help="The tournament directory (its store: every recorded game; a folder of records works "
        "too).",
    )(command)
    return options.bootstrap()(command)


def _load(tournament: Path | None, records: tuple[Path, ...]) -> Games:
    if (tournament is None) == (not records):
        raise click.UsageError("give either --tournament DIR or --records PATH (not both)")
    try:
        games = (
            load_tournament(tournament) if tournament is not None else load_record_files(records)
        )
    except UnverifiedStoreError as error:  # the store answers, but not for its records: exit 1
        click.echo(f"referee: {field(str(error), 2000)}", err=True)
        sys.exit(1)
    except SourceError as error:
        raise click.BadParameter(str(error), param_hint="--tournament") from None
    for problem in games.problems:
        click.echo(f"skipped {field(problem, 1000)}", err=True)
    for gid, unrated in games.unrated.items():
        click.echo(f"not rated: {field(gid, 200)}: {field(unrated.reason, 1000)}", err=True)
    if not games.results:
        click.echo("no complete games to rate", err=True)
        sys.exit(1)
    return games


@click.command()
@_source_options
@options.as_json("standings.json (docs/standings-format.md) instead of the table")
def standings(
    tournament: Path | None,
    records: tuple[Path, ...],
    bootstrap: int,
    bootstrap_seed: int,
    as_json: bool,
) -> None:
    """Print the standings of a tournament (or of game records).

    Ratings are a Bradley-Terry fit on the Elo scale with 95% intervals
    (docs/organisers/standings.md).
    """
    games = _load(tournament, records)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=bootstrap_seed)
    if as_json:
        doc = standings_document(
            table,
            games.results,
            title=games.title,
            deals=games.deals,
            shared_tables=games.shared_tables,
            owners=games.owners,
        )
        click.echo(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        click.echo(games.title)
        click.echo()
        click.echo(standings_text(table, games.owners), nl=False)
        if games.shared_tables:
            shared = same_author(games.shared_tables)
            authors = ", ".join(f"{field(a)} {n}" for a, n in shared["authors"].items())
            click.echo(
                f"note: {shared['games']} games seated two bots of one author at a table (the "
                "schedule did not keep them apart: too few authors in the pool, or the rule "
                f"off): {authors}"
            )


@click.command()
@_source_options
@click.option(
    "--out",
    "-o",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the site into (created; a site already there gets what the new games "
    "add).",
)
@click.option("--title", help="Title of the site (default: from the tournament).")
@click.option(
    "--timestamp/--no-timestamp",
    default=True,
    show_default=True,
    help="Show the time of publication (without it, the same games give identical files).",
)
@click.option(
    "--with-logs",
    is_flag=True,
    help="Show the bots' log lines (kept in the records) beside each turn of the replays.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Write every file again (by default a site already in --out gets only the new games).",
)
@options.as_json("what was published")
def publish(
    tournament: Path | None,
    records: tuple[Path, ...],
    bootstrap: int,
    bootstrap_seed: int,
    out: Path,
    title: str | None,
    timestamp: bool,
    with_logs: bool,
    full: bool,
    as_json: bool,
) -> None:
    """Publish the standings as a static site: index.html, a page per bot, replays of every game,
    standings.json, standings.md and a manifest (`referee verify --site` checks it). The site opens
    from disk or any static host; it needs no server and no network. Publishing again into the
    same folder writes only what the new games change."""
    games = _load(tournament, records)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=bootstrap_seed)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if timestamp else None

    def write(folder: Path) -> PublishReport:
        return write_site(
            folder,
            games,
            table,
            title=title or games.title,
            generated_at=when,
            with_logs=with_logs,
            full=full,
        )

    try:
        # a live site (`referee serve`'s) gets a new version and is switched to it at once
        report = publish_versioned(out, write) if is_versioned(out) else write(out)
    except OSError as error:
        raise click.BadParameter(f"cannot write the site: {error}", param_hint="--out") from None
    except (ValueError, sqlite3.Error) as error:  # a stored record that does not parse, ...
        click.echo(
            f"cannot publish: a record could not be read: {field(str(error), 1000)}", err=True
        )
        sys.exit(1)
    index = out / "index.html"
    if as_json:
        click.echo(
            json.dumps(
                {
                    "games": len(games.results),
                    "bots": len(table.rows),
                    "out": str(out),
                    "index": str(index),
                    "standings_json": str(out / "standings.json"),
                    "standings_md": str(out / "standings.md"),
                    "replays": report.games,
                    "replays_written": report.written,
                    "incremental": report.incremental,
                },
                indent=1,
            )
        )
        return
    how = (
        f"{report.written} replays written (the rest kept)"
        if report.incremental
        else "every file written"
    )
    click.echo(
        f"published {len(games.results)} rated games ({report.games} with replays; {how}), "
        f"{len(table.rows)} bots: {out}/"
    )
    click.echo(f"  standings: {out / 'standings.md'}, {out / 'standings.json'}")
    click.echo(f"  open {index.resolve().as_uri()}")
