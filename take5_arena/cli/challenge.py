"""``referee challenge``: an author's challenges on an arena (docs/authors/arena.md,
"Challenges"), over the API (AskChallenge, GetChallenge: since 1.2), as the web pages' form asks
for them: one of their bots against bots they name, unrated, in one competition (``--competition``,
else the default), limited per account across the competitions."""

from __future__ import annotations

from pathlib import Path

import click

from take5_arena.cli.service import CA, COMPETITION, INSECURE, SERVER, TOKEN_FILE, _client, _fail
from take5_arena.cli.terminal import field
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.errors import ClientError


@click.command("challenge")
@click.argument("bot", required=False)
@click.argument("opponents", nargs=-1)
@click.option("--show", "show", metavar="ID", help="Show challenge ID instead of asking for one.")
@SERVER
@TOKEN_FILE
@CA
@INSECURE
@COMPETITION
def challenge(
    bot: str | None,
    opponents: tuple[str, ...],
    show: str | None,
    server: str | None,
    token_file: Path | None,
    ca: Path | None,
    insecure: bool,
    competition: str,
) -> None:
    """Ask for an unrated challenge of your BOT against OPPONENTS (one for each other seat of the
    competition's tables), or show one (--show ID): its seats, state and games."""
    if show is None and (bot is None or not opponents):
        raise click.UsageError("give your bot and its opponents, or --show ID")
    if show is not None and bot is not None:
        raise click.UsageError("--show takes no bot or opponents")
    try:
        with _client(server, token_file, ca, insecure, competition=competition) as client:
            if show is not None:
                reply = client.get_challenge(show)
            else:
                reply = client.challenge(bot or "", opponents)
    except ClientError as error:
        _fail(error)
        return
    _say(reply)


def _say(reply: pb.ChallengeResponse) -> None:
    where = f" in {field(reply.competition)}" if reply.competition else ""
    seats = " vs ".join(field(s) for s in reply.seats)
    click.echo(f"{field(reply.challenge_id)}{where}: {seats}: {field(reply.state)} (unrated)")
    click.echo(f"asked {field(reply.created_at)}")
    for game in reply.games:
        click.echo(f"  game {field(game.game_id)}: {field(game.status)}")


__all__ = ["challenge"]
