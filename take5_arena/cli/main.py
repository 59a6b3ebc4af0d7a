"""The `referee` command: play, check, match, submit, run tournaments, rate and publish.

Exit codes shared by every subcommand: 0 success, 1 the command ran but found a problem (an invalid
record, a failed game), 2 bad usage or input (click's own convention), 3 a bot was rejected, 130
interrupted. Ctrl-C (or SIGTERM) at any moment ends the command with 130 and one line, never a
traceback: take5_arena/cli/entry.py, the entry point, handles both from its first line.

Start-up time matters (bench/startup.py): this module imports only click and the light parts of the
lower layers; a subcommand imports what it needs (gRPC, numpy, scipy, rich, Docker) inside its
function, which is why several imports below sit in function bodies.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import click

from take5 import RandomPlayer, Settings, Take5Error, play_game
from take5.record import Judgement, RecordFile, Verdict, iter_records, judge_file
from take5.rules import EndRule, Variant
from take5_arena.cli import entry, options
from take5_arena.cli.terminal import field
from take5_arena.cli.transcript import transcript
from take5_arena.errors import ArenaError
from take5_arena.referee import defaults
from take5_arena.referee.errors import RefereeError


def game_settings(players: int, variant: str, threshold: int, end_rule: str) -> Settings:
    """Settings from command-line options, with the rules' own message on a bad combination."""
    try:
        return Settings(
            players=players,
            variant=Variant(variant),
            threshold=threshold,
            end_rule=EndRule(end_rule),
        )
    except Take5Error as error:
        raise click.BadParameter(str(error)) from None


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


class ArenaGroup(click.Group):
    """click's group, with one way out for Ctrl-C (exit 130, one line) and for the platform's own
    errors (a one-line message, exit 2), whatever the subcommand."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,  # type: ignore[override]
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        if signal.getsignal(signal.SIGINT) is entry.quiet_exit:  # started by the entry point
            # While a command runs, both signals unwind through the code that stops bots and
            # closes stores; a command with its own SIGTERM semantics (serve, tournament run)
            # installs them inside.
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, _interrupt)
        try:
            try:
                code = super().main(args, prog_name, complete_var, False, **extra)
            except click.exceptions.Exit as done:
                code = done.exit_code
            except click.ClickException as error:
                error.show()
                code = error.exit_code
            except (click.Abort, KeyboardInterrupt):
                click.echo("\ninterrupted", err=True)
                code = 130
            except ArenaError as error:  # the platform's errors (take5_arena/errors.py): one line
                click.echo(f"referee: {field(error)}", err=True)
                code = 2
        except KeyboardInterrupt:  # a second Ctrl-C while reporting the first
            code = 130
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(defaults.VERSION, prog_name="referee")
def main() -> None:
    """take5 arena: a referee for 6 nimmt! (Take 5) bots.

    Start with `referee play` to watch a game of random players, then write a bot
    (see the README) and pit it against others with `referee match`.
    """


@main.command()
@options.players()
@options.seed()
@options.game_rules()
@click.option(
    "--record",
    "record_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the game record (JSON) to this file.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the final standing.")
@options.as_json("the game record")
def play(
    players: int,
    seed: int,
    variant: str,
    threshold: int,
    end_rule: str,
    record_path: Path | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Play one game with built-in random players and print its transcript.

    Each random player is seeded from the game seed, so the whole game is reproducible.
    """
    settings = game_settings(players, variant, threshold, end_rule)
    try:
        output = (
            RecordFile(record_path) if record_path else None
        )  # a bad path fails before the game
    except Take5Error as error:
        raise click.BadParameter(str(error), param_hint="'--record'") from None
    try:
        game = play_game([RandomPlayer(seed * 1000 + i) for i in range(players)], settings, seed)
        record = game.record(
            seats=[{"name": f"random-{i + 1}", "kind": "builtin-random"} for i in range(players)]
        )
        if as_json:
            click.echo(json.dumps(record, indent=1))
        else:
            lines = list(transcript(record))
            if quiet:
                lines = lines[lines.index("Final standing:") :]
            click.echo("\n".join(lines))
        if output:
            try:
                written = output.write(record)
            except Take5Error as error:
                click.echo(f"referee play: {error}", err=True)
                sys.exit(1)
            if not as_json:
                click.echo(f"\nrecord written to {written}")
    finally:
        if output:
            output.discard()


@main.command()
@click.argument("records", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--tournament",
    "-t",
    "tournament",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Also check every game recorded in this tournament's store.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the records that fail.")
@click.option(
    "--site",
    "site",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Check a published site: every record, and its standings recomputed from them.",
)
@options.as_json("one result per record")
def verify(
    records: tuple[Path, ...],
    tournament: Path | None,
    quiet: bool,
    site: Path | None,
    as_json: bool,
) -> None:
    """Replay game RECORDS (files or folders of *.json) through the rules.

    Reports the first divergence of each record (round, turn, card, expected vs recorded).
    Exit code 0 when every record is valid, 1 otherwise. With --site DIR: check a published site
    (every record re-verified, its standings recomputed from exactly those records).
    """
    if site is not None:
        from take5_arena.cli.publish import verify_site  # lazy: start-up time (module docstring)

        if records or tournament is not None:
            raise click.UsageError(
                "--site checks a published site alone: give no records or --tournament"
            )
        verify_site(site)
    if not records and tournament is None:
        raise click.UsageError("name record files or folders, or --tournament DIR, or --site DIR")

    def judgements() -> Iterator[tuple[str, Judgement]]:
        for path in iter_records(list(records)):
            yield str(path), judge_file(path)
        if tournament is not None:
            # lazy: start-up time (module docstring)
            from take5_arena.referee.store import StoreError
            from take5_arena.referee.store.verify import stored_judgements

            try:
                for game_id, judgement in stored_judgements(tournament):
                    yield f"{tournament}:{game_id}", judgement
            except StoreError as error:
                raise click.UsageError(str(error)) from None

    results: list[dict[str, str]] = []
    for name, judgement in judgements():
        status = "ok" if judgement.verdict is Verdict.VALID else judgement.verdict.value.lower()
        results.append({"record": name, "status": status, "detail": judgement.reason})
        if not as_json:  # a record is hostile too: what it says is escaped before it is printed
            if status != "ok":
                click.echo(
                    f"{field(name, 1000)}: {status.upper()}: {field(judgement.reason, 2000)}"
                )
            elif not quiet:
                click.echo(f"{field(name, 1000)}: ok")
    failures = sum(1 for r in results if r["status"] != "ok")
    if as_json:
        click.echo(
            json.dumps(
                {"checked": len(results), "valid": len(results) - failures, "records": results},
                indent=1,
            )
        )
    elif not results:
        click.echo("no records found", err=True)
    elif not quiet or failures:
        click.echo(f"{len(results) - failures} of {len(results)} records valid")
    sys.exit(1 if failures or not results else 0)


# `referee match`: bots over gRPC (the command lives in take5_arena/cli/match.py).
from take5_arena.cli.match import match as _match

main.add_command(_match)

# `referee replay`: step through a recorded game in the terminal (take5_arena/cli/replay.py).
from take5_arena.cli.replay import replay as _replay

main.add_command(_replay)

# `referee build`: a bot folder's Docker image (take5_arena/cli/build.py).
from take5_arena.cli.build import build as _build

main.add_command(_build)

# `referee standings` and `referee publish`: the leaderboard (code in take5_arena/cli/publish.py).
from take5_arena.cli.publish import publish as _publish
from take5_arena.cli.publish import standings as _standings

main.add_command(_standings)
main.add_command(_publish)


# `referee submit` and `referee tournament run|status`: thin wrappers over take5_arena/referee/tournament/.


@main.command()
@click.argument("bot_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--name", required=True, help="The entrant's name; submitting again adds a new version."
)
@options.tournament_dir()
@options.sandbox(default=None)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.001),
    default=None,
    help=f"Seconds per call in the smoke games [the tournament's; {defaults.TIMEOUT:g} for a new one].",
)
@options.as_json("the entrant version")
def submit(
    bot_dir: Path,
    name: str,
    directory: Path,
    sandbox: str | None,
    timeout: float | None,
    as_json: bool,
) -> None:
    """Add the bot in BOT_DIR to a tournament as entrant NAME (or a new version of it).

    The bot is validated first: its image builds (docker), it starts, answers the handshake and
    plays two smoke games against the random example bot within the limits, without a fault.
    A refused bot is reported with the reason and its own stderr (exit code 1). Games of earlier
    versions stay recorded.
    """
    # lazy: start-up time (module docstring)
    from take5_arena.cli.terminal import block
    from take5_arena.referee.tournament.errors import SubmitRefusedError
    from take5_arena.referee.tournament.submission import submit as do_submit

    try:
        done = do_submit(
            directory,
            bot_dir,
            name,
            sandbox=sandbox,
            timeout=timeout,
            log=lambda line: click.echo(line, err=True),
        )
    except SubmitRefusedError as refused:
        click.echo(
            f"referee submit: REFUSED {field(name)}: {field(refused.reason, 2000)}", err=True
        )
        if refused.stderr.strip():
            click.echo("--- the bot's stderr (last lines) ---", err=True)
            click.echo("\n".join(block(refused.stderr).rstrip().splitlines()[-30:]), err=True)
        sys.exit(1)
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


@main.group()
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
    # lazy: start-up time (module docstring)
    from take5_arena.cli.progress import TournamentProgress, render_summary
    from take5_arena.referee.store import Store
    from take5_arena.referee.tournament.run import prepare_run, run_tournament

    try:
        if (
            until_settled or gauntlet
        ):  # adaptive scheduling (take5_arena/referee/tournament/settle.py)
            if dry_run:
                raise click.UsageError(
                    "--dry-run shows a fixed schedule; adaptive tables depend on the results"
                )
            from take5_arena.cli.settle import run_settled  # lazy: start-up time (module docstring)

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
    # lazy: start-up time
    from take5_arena.cli.progress import render_status
    from take5_arena.referee.tournament.status import tournament_status as status_of

    try:
        status = status_of(directory)
    except RefereeError as error:
        raise click.UsageError(str(error)) from None
    if as_json:
        click.echo(json.dumps(status, indent=1, default=str))
        return
    render_status(status, bootstrap=bootstrap, seed=bootstrap_seed)


# `referee serve`, `authors`, `submit --server`, `my-bots`, `withdraw`, ...: the arena service
# (take5_arena/cli/service.py); registered last, since it gives `submit` its remote form.
from take5_arena.cli.service import register as _register_service

_register_service(main)
