"""`referee submit`: a bot into a local tournament (BOT_DIR --name NAME --tournament DIR), or to
an arena over the network (FOLDER --server HOST:PORT, the author's side: cli/service.py).

Exit codes: 0 accepted (or unchanged); 1 refused by the local validation; 2 bad usage; 3 refused by
the arena; 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from take5_arena.cli import options
from take5_arena.cli.service import CA, COMPETITION, INSECURE, SERVER, TOKEN_FILE, remote_submit
from take5_arena.cli.terminal import block, field
from take5_arena.referee import defaults
from take5_arena.referee.errors import RefereeError
from take5_arena.referee.match.results import ExitCode
from take5_arena.referee.tournament.errors import SubmitDeferredError, SubmitRefusedError
from take5_arena.referee.tournament.submission import submit as do_submit
from take5_arena.service.competitions import resolve
from take5_arena.service.errors import ServiceError


def competition_dir(directory: Path, competition: str) -> Path:
    """The local directory of the arena DIR's competition NAME (exit 2 for one it has not)."""
    try:
        return resolve(directory, competition)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None


@click.command()
@click.argument("bot_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--name",
    help="The entrant's name; submitting again adds a new version [remote: the folder's name].",
)
@options.tournament_dir(required=False)
@options.sandbox(default=None)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.001),
    default=None,
    help="Seconds per call in the smoke games "
    f"[the tournament's; {defaults.TIMEOUT:g} for a new one].",
)
@click.option(
    "--author",
    help="Who wrote the bot (local): two bots of one author never share a table when the pool "
    "allows it [remote: the arena's account].",
)
@options.store_url()
@options.as_json("the entrant version")
@SERVER
@TOKEN_FILE
@CA
@INSECURE
@COMPETITION
def submit(
    bot_dir: Path,
    name: str | None,
    directory: Path | None,
    sandbox: str | None,
    timeout: float | None,
    author: str | None,
    store: str | None,
    as_json: bool,
    server: str | None,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    competition: str,
) -> None:
    """Add the bot in BOT_DIR to a tournament as entrant NAME (or a new version of it).

    The bot is validated first: its image builds (docker), it starts, answers the handshake and
    plays smoke games, a table of the tournament's size with house bots (every rotation of one
    secret deal), within the limits, without a fault.
    A refused bot is reported with the reason and its own stderr (exit code 3, as with --server
    and as `referee match` for a bot rejected before play); a bot that could not be validated for
    the host's reasons (no engine, a sandbox that did not start) is reported in one line with exit
    code 4: try again later. Games of earlier versions stay recorded.

    Remote form: `referee submit FOLDER --server HOST:PORT [--name NAME]` sends the folder to an
    arena (token from --token-file or $TAKE5_TOKEN); the bot's name defaults to the folder's name.
    Exit code 3 when the arena refuses the bot. `--competition NAME` enters one of the arena's
    competitions (remote), or the competition DIR/competitions/NAME of the arena DIR (local).
    """
    if server and directory is None:
        if author is not None:
            raise click.UsageError("--author is for a local tournament: an arena knows its authors")
        remote_submit(bot_dir, name, server, token_file, ca, insecure, competition)
        return
    if competition and directory is not None:
        directory = competition_dir(directory, competition)
    if not name or directory is None:
        raise click.UsageError(
            "give --name NAME and --tournament DIR (local), or --server HOST:PORT (remote)"
        )
    try:
        done = do_submit(
            directory,
            bot_dir,
            name,
            sandbox=sandbox,
            timeout=timeout,
            author=author,
            store=store,
            log=lambda line: click.echo(line, err=True),
        )
    except SubmitRefusedError as refused:
        click.echo(
            f"referee submit: REFUSED {field(name)}: {field(refused.reason, 2000)}", err=True
        )
        if refused.stderr.strip():
            click.echo("--- the bot's stderr (last lines) ---", err=True)
            click.echo("\n".join(block(refused.stderr).rstrip().splitlines()[-30:]), err=True)
        sys.exit(ExitCode.REJECTED)
    except SubmitDeferredError as deferred:  # the host's reasons: not a usage error
        click.echo(
            f"referee submit: NOT VALIDATED {field(name)}, the host failed (try again later): "
            f"{field(deferred.reason, 2000)}",
            err=True,
        )
        sys.exit(deferred.exit_code)
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    v = done.version
    if as_json:
        click.echo(
            json.dumps(
                {
                    "name": v.name,
                    "version": v.version,
                    "created": done.created,
                    "kind": v.kind,
                    "source_hash": v.source_hash,
                    "image_id": v.image_id,
                    "artifact": v.artifact,
                    "smoke": done.smoke,
                },
                indent=1,
            )
        )
        return
    what = "new version" if done.created else "unchanged (same sources as)"
    click.echo(
        f"{v.name}: {what} v{v.version} (source {v.source_hash[:12]}"
        f"{', image ' + v.image_id[:19] if v.image_id else ''}); {field(done.smoke, 1000)}"
    )
