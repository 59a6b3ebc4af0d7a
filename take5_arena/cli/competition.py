"""`referee competition add|list`: the competitions of one arena (service/competitions.py).

An arena's directory is its default competition; each other one is a tournament directory of its
own under ``DIR/competitions/NAME`` with its own settings (players per table, variant, time
control, sandbox), entrants, season, ladder and site, all served by the arena's one ``referee
serve`` (docs/organisers/seasons.md, "Several competitions on one server").

Exit codes: 0 done, 2 bad usage (a name that is none, one that exists, a directory that is no
arena), 4 the host (a store that cannot be read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from take5_arena.cli import options
from take5_arena.cli.terminal import field
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.run.lifecycle import run_lock_holder
from take5_arena.service.competitions import (
    DEFAULT,
    add_competition,
    competition_directory,
    competition_names,
)
from take5_arena.service.errors import ServiceError


@click.group()
def competition() -> None:
    """Several competitions on one arena, each with its own settings, entrants and ladder."""


@competition.command("add")
@click.argument("name")
@options.tournament_dir(exists=True)
@options.play_settings()
def competition_add(name: str, directory: Path, **settings: Any) -> None:
    """Add competition NAME to the arena in DIR, with its own table size, rules, time control and
    sandbox (the options of `referee tournament run`, saved in it). `referee serve` on DIR runs it
    beside the others from its next start (one running now says so: restart it); authors enter it
    with `--competition NAME`."""
    try:
        made = add_competition(directory, name, settings)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None
    with Store(made, readonly=True) as store:
        chosen = TournamentSettings.from_json(store.settings.get())
    click.echo(f"competition {name}: {_describe(chosen)}; its directory {field(str(made))}")
    serving = run_lock_holder(directory)
    if serving is not None:  # a server reads its competitions when it starts, not while it runs
        click.echo(
            f"restart needed: the referee serving {field(str(directory))} "
            f"(pid {field(serving, 20)}) serves competition {name} from its next start; "
            "stop it (SIGTERM) and start it again"
        )


def _describe(settings: TournamentSettings) -> str:
    game = settings.game
    return f"tables of {game.players}, {game.variant.value} variant, sandbox {settings.sandbox}"


@competition.command("list")
@options.tournament_dir(exists=True)
@options.as_json("the competitions")
def competition_list(directory: Path, as_json: bool) -> None:
    """The arena's competitions: the default one (DIR itself) first, then the others by name."""
    rows = []
    for name in [DEFAULT, *competition_names(directory)]:
        where = competition_directory(directory, name)
        with Store(where, readonly=True) as store:
            settings = TournamentSettings.from_json(store.settings.get())
            entrants = sum(1 for active in store.versions.entrant_states().values() if active)
        rows.append((name, where, settings, entrants))
    if as_json:
        doc = [
            {
                "name": name,
                "directory": str(where),
                "players": settings.game.players,
                "variant": settings.game.variant.value,
                "active_entrants": entrants,
            }
            for name, where, settings, entrants in rows
        ]
        click.echo(json.dumps(doc, indent=1))
        return
    for name, where, settings, entrants in rows:
        shown = name or "(default)"
        click.echo(
            f"{shown:<16} {_describe(settings)}, {entrants} active entrants: {field(str(where))}"
        )
