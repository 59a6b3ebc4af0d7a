"""`referee standings` and `referee publish`: thin wrappers over leaderboard.source/ratings/publish.

Exit codes as everywhere: 0 success, 1 nothing to rate (no complete games), 2 bad usage or input.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from leaderboard.markdown import standings_text
from leaderboard.publish import publish_site, standings_document
from leaderboard.ratings import compute_standings
from arena.source import Games, SourceError, load_record_files, load_tournament


def _source_options(command):
    command = click.option(
        "--records", "records", multiple=True, type=click.Path(exists=True, path_type=Path),
        help="Game record files or folders of them (instead of a tournament); repeatable.",
    )(command)
    command = click.option(
        "--tournament", "-t", "tournament", type=click.Path(file_okay=False, path_type=Path),
        help="The tournament directory (its store: every recorded game; a folder of records works too).",
    )(command)
    command = click.option(
        "--bootstrap", default=200, show_default=True, type=click.IntRange(min=0),
        help="Bootstrap resamples for the 95% intervals (0: no intervals).",
    )(command)
    command = click.option(
        "--seed", default=0, show_default=True, help="Seed of the bootstrap (same seed, same intervals)."
    )(command)
    return command


def _load(tournament: Path | None, records: tuple[Path, ...]) -> Games:
    if (tournament is None) == (not records):
        raise click.UsageError("give either --tournament DIR or --records PATH (not both)")
    try:
        games = load_tournament(tournament) if tournament is not None else load_record_files(records)
    except SourceError as error:
        raise click.BadParameter(str(error), param_hint="--tournament") from None
    for problem in games.problems:
        click.echo(f"skipped {problem}", err=True)
    if not games.results:
        click.echo("no complete games to rate", err=True)
        sys.exit(1)
    return games


@click.command()
@_source_options
@click.option("--json", "as_json", is_flag=True, help="Print standings.json (docs/standings-format.md) instead of the table.")
def standings(tournament: Path | None, records: tuple[Path, ...], bootstrap: int, seed: int, as_json: bool) -> None:
    """Print the standings of a tournament (or of game records).

    Ratings are a Bradley-Terry fit on the Elo scale with 95% bootstrap intervals; see the README.
    """
    games = _load(tournament, records)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=seed)
    if as_json:
        doc = standings_document(table, games.results, title=games.title)
        click.echo(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        click.echo(games.title)
        click.echo()
        click.echo(standings_text(table), nl=False)


@click.command()
@_source_options
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the site into (created; files of an earlier publication are replaced).")
@click.option("--title", help="Title of the site (default: from the tournament).")
@click.option("--timestamp/--no-timestamp", default=True, show_default=True,
              help="Show the time of publication (without it, the same games give identical files).")
def publish(tournament: Path | None, records: tuple[Path, ...], bootstrap: int, seed: int, out: Path,
            title: str | None, timestamp: bool) -> None:
    """Publish the standings as a static site: index.html, a page per bot, replays of every game,
    standings.json and standings.md. The site opens from disk or any static host; it needs no
    server and no network."""
    games = _load(tournament, records)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=seed)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if timestamp else None
    index = publish_site(out, results=games.results, records=games.records, standings=table,
                         title=title or games.title, generated_at=when)
    click.echo(f"published {len(games.results)} games, {len(table.rows)} bots: {out}/")
    click.echo(f"  standings: {out / 'standings.md'}, {out / 'standings.json'}")
    click.echo(f"  open {index.resolve().as_uri()}")
