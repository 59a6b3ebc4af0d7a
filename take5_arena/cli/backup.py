"""``referee backup`` and ``referee restore``: a consistent copy of a tournament or an arena, also
while ``referee serve`` writes to it (take5_arena/service/backup.py; docs/operations.md, "Backups").

Exit codes: 0 copied and checked; 1 copied, but the check of the copy found a problem (listed: an
invalid record, an archive that does not match its digest; the copy is kept, it holds what the
source holds); 2 bad usage or input (not a tournament or not a backup, DEST not new, a folder that
cannot be written, a backup whose files differ from its manifest: nothing is written); 130
interrupted (nothing is left behind).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from take5_arena.cli import options
from take5_arena.cli.terminal import field
from take5_arena.service.backup import BackupError, BackupReport
from take5_arena.service.backup import backup as make_backup
from take5_arena.service.backup import restore as make_restore

_PROBLEMS_SHOWN = 20


@click.command()
@click.argument("paths", nargs=-1, metavar="[DIR] DEST", type=click.Path(path_type=Path))
@options.tournament_dir(required=False)
@click.option(
    "--key",
    "key_file",
    type=click.Path(path_type=Path),
    help="The key file the manifest is authenticated with, made if missing "
    "[DIR/secret/backup-key]. Keep a copy apart from the backups: restore needs it.",
)
@options.as_json("what was copied")
def backup(
    paths: tuple[Path, ...], directory: Path | None, key_file: Path | None, as_json: bool
) -> None:
    """Copy the tournament or arena DIR (-t DIR, or the first argument) into the new folder DEST,
    also while `referee serve` or `tournament run` writes to it.

    The databases are copied with SQLite's online backup API (a consistent snapshot, not a file
    copy), with every archive the store plays and the uploads still to validate; the copy is
    checked like `referee verify --tournament` before it is renamed to DEST. Files are readable
    by their owner only. The manifest is authenticated with a key that is not in the backup
    (--key). Restore with `referee restore DEST NEWDIR --key KEYFILE`.
    """
    if directory is None and len(paths) == 2:
        directory, dest = paths
    elif directory is not None and len(paths) == 1:
        (dest,) = paths
    else:
        raise click.UsageError("give the tournament and the backup folder: backup -t DIR DEST")
    _finish(
        _run(lambda: make_backup(directory, dest, key_file=key_file, progress=_say)),
        "backup",
        as_json,
    )


@click.command()
@click.argument("source", metavar="BACKUP", type=click.Path(path_type=Path))
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--key",
    "key_file",
    required=True,
    type=click.Path(path_type=Path),
    help="The backup key the backup was made with (the arena's secret/backup-key, kept apart).",
)
@options.store_url()
@options.as_json("what was restored")
def restore(
    source: Path, directory: Path, key_file: Path, store: str | None, as_json: bool
) -> None:
    """Restore the BACKUP made by `referee backup` into DIR (a new or empty folder).

    The manifest's HMAC is checked with the key (a backup changed since it was made is refused),
    every file against the manifest before anything is written, and the restored tournament like
    `referee verify --tournament`; then `referee serve -t DIR` (or `tournament run`) goes on from
    it, with the key as its backup key. With --store URL every competition's store goes into
    that (new, empty) PostgreSQL database, the default's in place of DIR/tournament.sqlite and
    each other's into its schema competition_NAME.
    """
    _finish(
        _run(
            lambda: make_restore(source, directory, key_file=key_file, store=store, progress=_say)
        ),
        "restore",
        as_json,
    )


def _say(line: str) -> None:
    click.echo(line, err=True)


def _run(action: Callable[[], BackupReport]) -> BackupReport:
    """The action's report; its BackupError goes up to the group, which prints it as one line
    (exit 2), and so does an OSError (a disk that fills, a folder removed meanwhile)."""
    try:
        return action()
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        raise BackupError(f"{where}{error.strerror or error}") from None


def _finish(report: BackupReport, what: str, as_json: bool) -> None:
    for warning in report.warnings:
        click.echo(f"warning: {field(warning, 2000)}", err=True)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "path": str(report.path),
                    "games": report.games,
                    "competitions": report.competitions,
                    "bytes": report.bytes,
                    "files": [f.__dict__ for f in report.files],
                    "problems": report.problems,
                    "warnings": report.warnings,
                },
                indent=1,
            )
        )
    else:
        for problem in report.problems[:_PROBLEMS_SHOWN]:  # may quote a record: escaped
            click.echo(f"{report.path}: {field(problem, 2000)}")
        if len(report.problems) > _PROBLEMS_SHOWN:
            click.echo(f"{report.path}: ... and {len(report.problems) - _PROBLEMS_SHOWN} more")
        click.echo(
            f"{what} in {report.path}: {report.games} games, "
            f"{report.count('artifacts/')} archives, {report.count('arena/uploads/')} uploads "
            f"to validate, {report.bytes / 1e6:.1f} MB"
            + (f", competitions: {', '.join(report.competitions)}" if report.competitions else "")
            + "; "
            + (
                f"CHECK FAILED: {len(report.problems)} problems"
                if report.problems
                else "checked: every record valid, every archive whole"
            )
        )
    sys.exit(1 if report.problems else 0)
