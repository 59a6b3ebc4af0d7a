"""``referee prune``: remove the uploads, validated folders and cached archives nothing needs.

Exit codes: 0 done (or, with --dry-run, listed); 2 bad usage (not a tournament, nothing to prune
named); 130 interrupted.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from take5_arena.cli import options
from take5_arena.referee.artifacts import Pruned, cache_dir, prune_cache
from take5_arena.service.prune import MIN_AGE_SECONDS, prune_arena

DEFAULT_DAYS = 14.0


@click.command()
@options.tournament_dir(required=False)
@click.option(
    "--cache",
    "cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also prune this worker's cache of unpacked archives [$TAKE5_ARTIFACT_CACHE].",
)
@click.option("--worker-cache", is_flag=True, help="Prune this host's cache where it is now.")
@click.option(
    "--older-than",
    "days",
    type=click.FloatRange(min=0),
    default=DEFAULT_DAYS,
    show_default=True,
    help="Days since a file was written (a cache entry: last used); at least an hour.",
)
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@options.as_json("what was (or would be) removed")
def prune(
    directory: Path | None,
    cache: Path | None,
    worker_cache: bool,
    days: float,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Remove what an arena keeps that nothing needs any more: uploads of finished submissions,
    the folders they were validated from, and (--cache / --worker-cache) a worker's unpacked
    archives not used for a while. Games play the archives in DIR/artifacts, which are kept, as are
    the store and the accounts (docs/operations.md, "Disk use and pruning")."""
    if worker_cache:
        cache = cache or cache_dir()
    if directory is None and cache is None:
        raise click.UsageError("give -t DIR, --cache DIR or --worker-cache")
    seconds = days * 86400
    removed: list[Pruned] = []
    if directory is not None:
        removed += prune_arena(directory, seconds, dry_run=dry_run)
    if cache is not None:
        removed += prune_cache(cache, max(seconds, MIN_AGE_SECONDS), dry_run=dry_run)
    total = sum(p.bytes for p in removed)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "dry_run": dry_run,
                    "bytes": total,
                    "removed": [{"path": str(p.path), "bytes": p.bytes} for p in removed],
                },
                indent=1,
            )
        )
        return
    for p in removed:
        click.echo(f"{'would remove' if dry_run else 'removed'} {p.path} ({p.bytes / 1e6:.2f} MB)")
    click.echo(
        f"{'would free' if dry_run else 'freed'} {total / 1e6:.1f} MB in {len(removed)} "
        f"{'entry' if len(removed) == 1 else 'entries'}"
    )
