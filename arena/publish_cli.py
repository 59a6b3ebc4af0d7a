"""`referee standings` and `referee publish`: thin wrappers over leaderboard.source/ratings/publish.

Exit codes as everywhere: 0 success, 1 nothing to rate (no complete games), 2 bad usage or input.
The leaderboard (numpy, scipy) is imported inside the commands: `referee --help` starts fast.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import options
from .terminal import field

if TYPE_CHECKING:
    from .source import Games



def _source_options(command: Any) -> Any:
    command = click.option(
        "--records", "records", multiple=True, type=click.Path(exists=True, path_type=Path),
        help="Game record files or folders of them (instead of a tournament); repeatable.",
    )(command)
    command = click.option(
        "--tournament", "-t", "tournament", type=click.Path(file_okay=False, path_type=Path),
        help="The tournament directory (its store: every recorded game; a folder of records works too).",
    )(command)
    return options.bootstrap()(command)


def _load(tournament: Path | None, records: tuple[Path, ...]) -> Games:
    from .source import SourceError, load_record_files, load_tournament  # lazy: numpy and scipy

    if (tournament is None) == (not records):
        raise click.UsageError("give either --tournament DIR or --records PATH (not both)")
    try:
        games = load_tournament(tournament) if tournament is not None else load_record_files(records)
    except SourceError as error:
        raise click.BadParameter(str(error), param_hint="--tournament") from None
    for problem in games.problems:
        click.echo(f"skipped {field(problem, 1000)}", err=True)
    if not games.results:
        click.echo("no complete games to rate", err=True)
        sys.exit(1)
    return games


@click.command()
@_source_options
@options.as_json("standings.json (docs/standings-format.md) instead of the table")
def standings(tournament: Path | None, records: tuple[Path, ...], bootstrap: int, bootstrap_seed: int,
              as_json: bool) -> None:
    """Print the standings of a tournament (or of game records).

    Ratings are a Bradley-Terry fit on the Elo scale with 95% bootstrap intervals; see the README.
    """
    # lazy: the leaderboard needs numpy and scipy, which `referee --help` should not load
    from leaderboard.markdown import standings_text
    from leaderboard.publish import standings_document
    from leaderboard.ratings import compute_standings

    games = _load(tournament, records)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=bootstrap_seed)
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
@options.as_json("what was published")
def publish(tournament: Path | None, records: tuple[Path, ...], bootstrap: int, bootstrap_seed: int, out: Path,
            title: str | None, timestamp: bool, as_json: bool) -> None:
    """Publish the standings as a static site: index.html, a page per bot, replays of every game,
    standings.json and standings.md. The site opens from disk or any static host; it needs no
    server and no network."""
    # lazy: the leaderboard needs numpy and scipy, which `referee --help` should not load
    from leaderboard.publish import publish_site
    from leaderboard.ratings import compute_standings

    games = _load(tournament, records)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=bootstrap_seed)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if timestamp else None
    index = publish_site(out, results=games.results, records=games.records, standings=table,
                         title=title or games.title, generated_at=when)
    if as_json:
        click.echo(json.dumps({"games": len(games.results), "bots": len(table.rows), "out": str(out),
                               "index": str(index), "standings_json": str(out / "standings.json"),
                               "standings_md": str(out / "standings.md")}, indent=1))
        return
    click.echo(f"published {len(games.results)} games, {len(table.rows)} bots: {out}/")
    click.echo(f"  standings: {out / 'standings.md'}, {out / 'standings.json'}")
    click.echo(f"  open {index.resolve().as_uri()}")
