"""`referee competition add|list`: the competitions of one arena (service/competitions.py).

An arena's directory is its default competition; each other one is a tournament directory of its
own under ``DIR/competitions/NAME`` with its own settings (players per table, variant, time
control, sandbox), entrants, season, ladder and site, all served by the arena's one ``referee
serve`` (docs/organisers/seasons.md, "Several competitions on one server"), which serves one
added while it runs within seconds, and says what it serves in ``DIR/serving.json``.

On an arena whose store is on PostgreSQL, a competition's store is a schema of the arena's
database (``competition_NAME``), which every host of the arena shares; `competition move` moves
one made on SQLite before this into it.

Exit codes: 0 done, 2 bad usage (a name that is none, one that exists, a directory that is no
arena, a competition being served that `move` is asked to move), 4 the host (a store that cannot
be read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from take5_arena.cli import options
from take5_arena.cli.terminal import field
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.service.competitions import (
    DEFAULT,
    Serving,
    add_competition,
    arena_database,
    competition_directory,
    competition_names,
    move_to_database,
    read_serving,
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
    beside the others: one running now within a few seconds, without a restart; authors enter it
    with `--competition NAME`."""
    try:
        made = add_competition(directory, name, settings)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None
    with Store(made, readonly=True) as store:
        chosen = TournamentSettings.from_json(store.settings.get())
        where = "" if store.schema is None else f", its store schema {store.schema} of the database"
    click.echo(f"competition {name}: {_describe(chosen)}; its directory {field(str(made))}{where}")
    serving = read_serving(directory)
    if serving is not None:
        click.echo(
            f"the referee serving {field(str(directory))} (pid {serving.pid}) serves competition "
            f"{name} within a few seconds (`referee competition list` says when it does)"
        )


@competition.command("move")
@click.argument("name")
@options.tournament_dir(exists=True)
def competition_move(name: str, directory: Path) -> None:
    """Move competition NAME, kept in its own SQLite file, into the PostgreSQL database of the
    arena in DIR (schema competition_NAME), so that every host of the arena shares it. Stop the
    server first; copy the competition's folder to the other hosts after."""
    try:
        copied = move_to_database(directory, name)
    except ServiceError as error:
        raise click.UsageError(str(error)) from None
    click.echo(
        f"competition {name}: {copied} games moved into the arena's database (schema "
        f"competition_{name}); its SQLite file is kept aside as tournament.sqlite.moved-*"
    )


def _describe(settings: TournamentSettings) -> str:
    game = settings.game
    return f"tables of {game.players}, {game.variant.value} variant, sandbox {settings.sandbox}"


@competition.command("list")
@options.tournament_dir(exists=True)
@options.as_json("the competitions")
def competition_list(directory: Path, as_json: bool) -> None:
    """The arena's competitions: the default one (DIR itself) first, then the others by name."""
    serving = read_serving(directory)
    if serving is not None and not as_json:
        click.echo(f"being served by the referee of pid {serving.pid}:")
    doc = []
    shared = arena_database(directory) is not None
    for name in [DEFAULT, *competition_names(directory)]:
        where, problem, schema = competition_directory(directory, name), "", None
        try:
            with Store(where, readonly=True) as store:
                settings = TournamentSettings.from_json(store.settings.get())
                entrants = sum(1 for active in store.versions.entrant_states().values() if active)
                backend = "sqlite" if store.url is None else "postgresql"
                schema = store.schema
        except StoreError as error:
            if name == DEFAULT:
                raise
            settings, entrants, problem = None, 0, str(error)  # the others are still listed
            backend = None
        why = None if serving is None else _served(serving, name)
        row = {
            "name": name,
            "directory": str(where),
            "players": None if settings is None else settings.game.players,
            "variant": None if settings is None else settings.game.variant.value,
            "active_entrants": entrants,
            "store": backend,
            "schema": schema,
            "served": None if serving is None else why is None,
            "not_served_because": why,
        }
        doc.append(row)
        if as_json:
            continue
        shown = name or "(default)"
        what = f"cannot be read: {field(problem)}" if settings is None else _describe(settings)
        note = "" if why is None or settings is None else f" [not served yet: {field(why)}]"
        if shared and name != DEFAULT and backend == "sqlite":  # one host's only: say so
            note += f" [on SQLite: `referee competition move {name}` shares it]"
        click.echo(f"{shown:<16} {what}, {entrants} active entrants: {field(str(where))}{note}")
    if as_json:
        click.echo(json.dumps(doc, indent=1))


def _served(serving: Serving, name: str) -> str | None:
    """None if the running server serves competition ``name``, else why not (yet)."""
    if name == DEFAULT or name in serving.served:
        return None
    return serving.waiting.get(name, "the server has not looked yet (it looks every few seconds)")
