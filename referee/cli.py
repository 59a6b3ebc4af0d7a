"""The `referee` command: play, check and (with later subcommands) run games between bots.

Exit codes shared by every subcommand: 0 success, 1 the command ran but found a problem (an invalid
record, a failed game), 2 bad usage or input (click's own convention).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from take5 import RandomPlayer, Settings, Take5Error, play_game
from take5.record import MalformedRecord, iter_records, load_record, verify_record

from .transcript import transcript

VARIANTS = click.Choice(["standard", "professional"])
END_RULES = click.Choice(["at-or-above", "above"])


def game_settings(players: int, variant: str, threshold: int, end_rule: str) -> Settings:
    """Settings from command-line options, with the rules' own message on a bad combination."""
    try:
        return Settings(players=players, variant=variant, threshold=threshold, end_rule=end_rule)
    except Take5Error as error:
        raise click.BadParameter(str(error)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="take5-arena")
def main() -> None:
    """take5 arena: a referee for 6 nimmt! (Take 5) bots.

    Start with `referee play` to watch a game of random players, then write a bot
    (see the README) and pit it against others with `referee match`.
    """


@main.command()
@click.option("--players", "-n", default=4, show_default=True, help="Players at the table (2-10; 2-6 professional).")
@click.option("--seed", default=0, show_default=True, help="Seed of the deals: the same seed gives the same game.")
@click.option("--variant", type=VARIANTS, default="standard", show_default=True)
@click.option("--threshold", default=66, show_default=True, help="The game ends when a score reaches this.")
@click.option("--end-rule", type=END_RULES, default="at-or-above", show_default=True,
              help="Whether the game ends at the threshold or only above it.")
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the game record (JSON) to this file.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final standing.")
def play(players: int, seed: int, variant: str, threshold: int, end_rule: str,
         record_path: Path | None, quiet: bool) -> None:
    """Play one game with built-in random players and print its transcript.

    Each random player is seeded from the game seed, so the whole game is reproducible.
    """
    settings = game_settings(players, variant, threshold, end_rule)
    game = play_game([RandomPlayer(seed * 1000 + i) for i in range(players)], settings, seed)
    record = game.record(seats=[{"name": f"random-{i + 1}", "kind": "builtin-random"} for i in range(players)])
    lines = list(transcript(record))
    if quiet:
        lines = lines[lines.index("Final standing:"):]
    click.echo("\n".join(lines))
    if record_path:
        record_path.parent.mkdir(parents=True, exist_ok=True)
        record_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        click.echo(f"\nrecord written to {record_path}")


@main.command()
@click.argument("records", nargs=-1, type=click.Path(path_type=Path))
@click.option("--tournament", "-t", "tournament", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Also check every game recorded in this tournament's store.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the records that fail.")
@click.option("--site", "site", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Check a published site: every record, and its standings recomputed from them.")
def verify(records: tuple[Path, ...], tournament: Path | None, quiet: bool, site: Path | None) -> None:
    """Replay game RECORDS (files or folders of *.json) through the rules.

    Reports the first divergence of each record (round, turn, card, expected vs recorded).
    Exit code 0 when every record is valid, 1 otherwise.
    """
    if site is not None:
        from .publish_cli import verify_site

        if records or tournament is not None:
            raise click.UsageError("--site checks a published site alone: give no records or --tournament")
        verify_site(site)
    if not records and tournament is None:
        raise click.UsageError("name record files or folders, or --tournament DIR, or --site DIR")

    def documents():
        for path in iter_records(list(records)):
            try:
                yield str(path), load_record(path)
            except MalformedRecord as error:
                yield str(path), error
        if tournament is not None:
            from .store import Store, StoreError

            try:
                store = Store(tournament, readonly=True)
            except StoreError as error:
                raise click.UsageError(str(error)) from None
            for game_id, doc in store.records():
                yield f"{tournament}:{game_id}", doc

    failures = 0
    checked = 0
    for name, doc in documents():
        checked += 1
        try:
            if isinstance(doc, MalformedRecord):
                raise doc
            divergence = verify_record(doc)
        except MalformedRecord as error:
            failures += 1
            click.echo(f"{name}: MALFORMED: {error}")
            continue
        if divergence is None:
            if not quiet:
                click.echo(f"{name}: ok")
        else:
            failures += 1
            click.echo(f"{name}: INVALID: {divergence}")
    if checked == 0:
        click.echo("no records found", err=True)
        sys.exit(1)
    if not quiet or failures:
        click.echo(f"{checked - failures} of {checked} records valid")
    sys.exit(1 if failures else 0)


# `referee match`: bots over gRPC (the command lives in referee/match_cli.py).
from .match_cli import match as _match  # noqa: E402

main.add_command(_match)

# `referee build`: a bot folder's Docker image (code in referee/sandbox_cli.py).
from .sandbox_cli import build as _build  # noqa: E402

main.add_command(_build)

# `referee standings` and `referee publish`: the leaderboard (code in referee/publish_cli.py).
from .publish_cli import publish as _publish, standings as _standings  # noqa: E402

main.add_command(_standings)
main.add_command(_publish)


# `referee submit` and `referee tournament run|status`: thin wrappers over referee/tournament.py.
TOURNAMENT_DIR = click.option(
    "--tournament", "-t", "directory", required=True, type=click.Path(file_okay=False, path_type=Path),
    help="The tournament directory (its SQLite store: settings, entrants, games).")


@main.command()
@click.argument("bot_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--name", required=True, help="The entrant's name; submitting again adds a new version.")
@TOURNAMENT_DIR
@click.option("--sandbox", type=click.Choice(["docker", "local"]), default=None,
              help="Validate in this sandbox [default: the tournament's, docker for a new one].")
@click.option("--timeout", type=click.FloatRange(min=0.001), default=None,
              help="Seconds per call in the smoke games [default: the tournament's, 1].")
def submit(bot_dir: Path, name: str, directory: Path, sandbox: str | None, timeout: float | None) -> None:
    """Add the bot in BOT_DIR to a tournament as entrant NAME (or a new version of it).

    The bot is validated first: its image builds (docker), it starts, answers the handshake and
    plays two smoke games against the random example bot within the limits, without a fault.
    A refused bot is reported with the reason and its own stderr (exit code 1). Games of earlier
    versions stay recorded.
    """
    from .tournament import SubmitRefused, TournamentError
    from .tournament import submit as do_submit

    try:
        done = do_submit(directory, bot_dir, name, sandbox=sandbox, timeout=timeout,
                         log=lambda line: click.echo(line, err=True))
    except SubmitRefused as refused:
        click.echo(f"referee submit: REFUSED {name}: {refused.reason}", err=True)
        if refused.stderr.strip():
            click.echo("--- the bot's stderr (last lines) ---", err=True)
            click.echo("\n".join(refused.stderr.rstrip().splitlines()[-30:]), err=True)
        sys.exit(1)
    except TournamentError as error:
        raise click.UsageError(str(error)) from None
    v = done.version
    what = "new version" if done.created else "unchanged (same sources as)"
    click.echo(f"{v.name}: {what} v{v.version} (source {v.source_hash[:12]}"
               f"{', image ' + v.image_id[:19] if v.image_id else ''}); {done.smoke}")


@main.group()
def tournament() -> None:
    """Round-robin tournaments of submitted bots (`referee submit` first)."""


@tournament.command("run")
@TOURNAMENT_DIR
@click.option("--players", "-n", type=click.IntRange(2, 10), help="Players per table (2-10) [4].")
@click.option("--games", "-g", type=click.IntRange(min=1),
              help="Games wanted (whole duplicate sets; a complete round robin in whole cycles) "
                   "[a complete round robin if at most 1,000 tables, else 10 tables per entrant].")
@click.option("--seed", type=int, help="Seed of the schedule and the deals [0].")
@click.option("--variant", type=VARIANTS, help="[standard]")
@click.option("--threshold", type=click.IntRange(min=1), help="The game ends when a score reaches this [66].")
@click.option("--end-rule", type=END_RULES, help="[at-or-above]")
@click.option("--duplicate/--no-duplicate", default=None,
              help="Replay each deal with the hands rotated through every seat [on].")
@click.option("--timeout", type=click.FloatRange(min=0.001), help="Seconds per call (per-call deadline) [1].")
@click.option("--max-faults", type=click.IntRange(min=1), help="Faults in a game before a bot forfeits it [3].")
@click.option("--sandbox", type=click.Choice(["docker", "local"]), help="Where bots run [docker].")
@click.option("--executor", help="auto, local (threads), process, dask:tcp://HOST:8786 or dask:local [auto: "
                                 "threads; processes for local bots at concurrency > 1].")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), help="Tables played at once [CPUs / players].")
@click.option("--memory", help="Docker: memory per bot [256m].")
@click.option("--cpus", type=click.FloatRange(min=0.01), help="Docker: CPUs per bot [1].")
@click.option("--retries", type=click.IntRange(min=0), help="Retries of a game after an infrastructure failure [3].")
@click.option("--dry-run", is_flag=True, help="Print the schedule and play nothing.")
@click.option("--no-progress", is_flag=True, help="No progress bar (logs, scripts).")
def tournament_run(directory: Path, dry_run: bool, no_progress: bool, **options) -> None:
    """Play every scheduled game of the tournament that is not recorded yet.

    Options given are saved in the tournament; the next run without them uses the saved ones.
    Stopped or killed, the same command resumes: games recorded stay, games cut off are replayed
    from their seed. Exit codes: 0 every game recorded; 1 games left unplayed after infrastructure
    failures (run again); 2 bad usage; 130 interrupted.
    """
    from .progress import TournamentProgress, render_summary
    from .store import Store, StoreError
    from .tournament import TournamentError, prepare_run, run_tournament, settings_summary

    try:
        if dry_run:
            with Store(directory, readonly=True) as store:
                settings, versions, schedule = prepare_run(store, options)
            click.echo(settings_summary(settings))
            click.echo(f"entrants: {', '.join(v.key for v in versions)}")
            click.echo(schedule.describe())
            for t in schedule.tables:
                click.echo(f"  table {t.index:>4}  deal {t.deal_seed:>19}  " + "  ".join(t.seats))
            return
        progress = TournamentProgress(enabled=not no_progress)
        report = run_tournament(directory, options, progress=progress)
    except (TournamentError, StoreError) as error:
        raise click.UsageError(str(error)) from None
    with Store(directory, readonly=True) as store:
        render_summary(report, store)
    sys.exit(report.exit_code)


@tournament.command("status")
@TOURNAMENT_DIR
@click.option("--bootstrap", default=100, show_default=True, help="Bootstrap resamples of the rating intervals.")
def tournament_status(directory: Path, bootstrap: int) -> None:
    """Where a running or stopped tournament stands: progress, runs, failures, standings."""
    from .progress import render_status
    from .store import StoreError
    from .tournament import tournament_status as status_of

    try:
        status = status_of(directory)
    except StoreError as error:
        raise click.UsageError(str(error)) from None
    try:
        render_status(status, bootstrap=bootstrap)
    finally:
        status["store"].close()


if __name__ == "__main__":
    main()
