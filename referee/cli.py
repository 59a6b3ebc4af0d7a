"""The `referee` command: play, check and (with later subcommands) run games between bots.

Exit codes shared by every subcommand: 0 success, 1 the command ran but found a problem (an invalid
record, a failed game), 2 bad usage or input (click's own convention).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from take5 import Game, RandomPlayer, Settings, Take5Error, play_game
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
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--quiet", "-q", is_flag=True, help="Print only the records that fail.")
def verify(records: tuple[Path, ...], quiet: bool) -> None:
    """Replay game RECORDS (files or folders of *.json) through the rules.

    Reports the first divergence of each record (round, turn, card, expected vs recorded).
    Exit code 0 when every record is valid, 1 otherwise.
    """
    failures = 0
    checked = 0
    for path in iter_records(list(records)):
        checked += 1
        try:
            divergence = verify_record(load_record(path))
        except MalformedRecord as error:
            failures += 1
            click.echo(f"{path}: MALFORMED: {error}")
            continue
        if divergence is None:
            if not quiet:
                click.echo(f"{path}: ok")
        else:
            failures += 1
            click.echo(f"{path}: INVALID: {divergence}")
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


if __name__ == "__main__":
    main()
