"""Several competitions on one arena: ``DIR/competitions/NAME/``, each a whole tournament directory.

Why directories: a competition's settings (players per table, variant, time control, sandbox), its
entrants, deal key, season, ladder, store and site are exactly a tournament directory's, so each
extra competition is one, under the arena's own directory, and every command that takes
``--tournament`` works on it as it is (``referee season open --tournament DIR/competitions/duel``).
The arena's directory itself stays the default competition (the empty name), so stores, commands
and clients from before competitions keep working unchanged. What is shared is the arena's: the
accounts (authors, tokens, bot names: a name is its author's in every competition) and the server.

A competition's name is stricter than a bot's: 1-32 lowercase ASCII letters, digits and ``-``,
starting with a letter or digit. It becomes a folder name, a route (``/c/NAME/`` of the site) and
a word in a request, so it has no ``.`` (no ``..``), no ``/``, no case to fold and no other script
(no look-alike of another name). ``referee competition add`` makes one (cli/competition.py);
``referee serve`` runs every competition it finds, at its start and while it runs
(take5_arena/service/serve.py).

Where a competition's data lives: beside the arena's. An arena on SQLite gives each competition its
``tournament.sqlite`` in its folder; an arena on PostgreSQL (``DIR/store.url``) gives each one a
schema of the arena's database, ``competition_NAME`` (:func:`competition_schema`), named by the
competition's own ``store.url`` (the URL, and a line ``schema competition_NAME``), so that every
referee and web process of the arena, on any host, reads and writes the one store of each
competition. A schema, not a column: every statement of the store is written once for a whole
store, and a schema keeps it so (the connection's ``search_path``: take5_arena/referee/store/
postgres.py), with a write lock, a backup, a verification and a removal of its own, exactly as a
competition on SQLite has its own file. A competition made before this, on SQLite in an arena on
PostgreSQL, keeps its file until :func:`move_to_database` moves it (``referee competition move``).

Why a competition is made elsewhere and renamed into place: a running server looks for new
competitions every few seconds, and must never see one half made (a store without its settings
yet would be served with the defaults). What the server serves it writes into ``DIR/serving.json``
(:func:`write_serving`), so that ``referee competition list`` can say so (:func:`read_serving`).
On PostgreSQL the store is made the same way: in a schema of a name no competition has, renamed
to ``competition_NAME`` once whole (one statement, which fails if another host made that
competition first).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from take5_arena.referee.store import DB_NAME, URL_NAME, Store
from take5_arena.referee.store.postgres import drop_schema, rename_schema
from take5_arena.referee.store.store import read_pointer, write_pointer
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.run.lifecycle import run_lock_holder
from take5_arena.service.errors import BadRequestError, NotFoundError

COMPETITIONS = "competitions"
"""The folder of the arena's directory that holds the extra competitions."""

DEFAULT = ""
"""The default competition's name: the arena's directory itself."""

NAME_RULE = "1-32 lowercase ASCII letters, digits or '-', starting with a letter or digit"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,31}", re.ASCII)
SCHEMA_PREFIX = "competition_"
"""The start of the schema of each competition's store in an arena's PostgreSQL database."""


def competition_problem(name: str) -> str | None:
    """None if ``name`` is a valid competition name, else a one-line message saying what is."""
    if _NAME.fullmatch(name):
        return None
    return f"competition name {name[:40]!r}: use {NAME_RULE}"


def competition_schema(name: str) -> str:
    """The schema of competition ``name``'s store in its arena's PostgreSQL database (a valid
    name: no quote, no dot; psycopg quotes it as an identifier all the same)."""
    problem = competition_problem(name)
    if problem is not None:
        raise BadRequestError(problem)
    return SCHEMA_PREFIX + name


def arena_database(root: Path) -> str | None:
    """The URL of the PostgreSQL database the arena in ``root`` keeps its store in (None:
    SQLite), where its new competitions are made."""
    pointer = read_pointer(root)
    return None if pointer is None else pointer[0]


def competition_directory(root: Path, name: str) -> Path:
    """The directory of competition ``name`` of the arena in ``root`` (the default: ``root``);
    a name that is none is a BadRequestError, before any path is made of it."""
    if name == DEFAULT:
        return root
    problem = competition_problem(name)
    if problem is not None:
        raise BadRequestError(problem)
    return root / COMPETITIONS / name


def competition_names(root: Path) -> list[str]:
    """The extra competitions of the arena in ``root``, sorted: the folders of ``competitions/``
    with a valid name and a store (anything else there is not a competition, and is ignored)."""
    folder = root / COMPETITIONS
    if not folder.is_dir():
        return []
    return sorted(
        d.name
        for d in folder.iterdir()
        if competition_problem(d.name) is None
        and not d.is_symlink()
        and d.is_dir()
        and ((d / DB_NAME).exists() or (d / URL_NAME).exists())
    )


def every_directory(root: Path) -> list[Path]:
    """The directories of every competition of the arena in ``root``, the default first: what an
    organiser's withdrawal, ban or revocation applies to (a bot name is the arena's)."""
    return [root, *(root / COMPETITIONS / name for name in competition_names(root))]


def resolve(root: Path, name: str) -> Path:
    """The directory of an existing competition ``name`` (the default: ``root``); an unknown name
    is a NotFoundError naming the competitions there are."""
    directory = competition_directory(root, name)
    if name != DEFAULT and name not in competition_names(root):
        there = ", ".join(["the default", *competition_names(root)])
        raise NotFoundError(f"no competition {name!r} on this arena (it has: {there})")
    return directory


def add_competition(root: Path, name: str, settings: Mapping[str, Any]) -> Path:
    """Make competition ``name`` in the arena ``root`` with ``settings`` (the JSON keys of
    TournamentSettings; None: the default), its store where the arena keeps its own (the
    module's docstring); its directory. An existing one is a BadRequestError: a competition's
    settings are changed as any tournament's, on its own directory."""
    directory = competition_directory(root, name)
    if name == DEFAULT:
        raise BadRequestError(f"give the competition a name: {NAME_RULE}")
    if not (root / DB_NAME).exists() and not (root / URL_NAME).exists():
        raise BadRequestError(f"{root} is no tournament directory: make the arena first")
    exists = BadRequestError(f"competition {name!r} exists already ({directory})")
    if directory.exists():
        raise exists
    url = arena_database(root)
    directory.parent.mkdir(exist_ok=True)
    making = directory.with_name(f".{name}.making-{os.getpid()}")  # no competition's name
    making.mkdir()
    # no competition's schema either (a competition's has SCHEMA_PREFIX)
    staging = None if url is None else f"making_{name}_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        with Store(making, create=True, url=url, schema=staging) as store:
            chosen = TournamentSettings.from_json(store.settings.get()).updated(settings)
            store.settings.set(chosen.to_json())
        if url is not None and staging is not None:
            if not rename_schema(url, staging, competition_schema(name)):
                raise BadRequestError(
                    f"competition {name!r} exists already in the arena's database (schema "
                    f"{competition_schema(name)}, made from another copy of {root}): copy its "
                    "folder from there"
                )
            staging = None
            write_pointer(making, url, competition_schema(name), replace=True)
        try:
            making.rename(directory)  # a folder made meanwhile, with anything in it, stays
        except OSError:
            raise exists from None
    finally:
        shutil.rmtree(making, ignore_errors=True)
        if url is not None and staging is not None:
            drop_schema(url, staging)
    return directory


def move_to_database(root: Path, name: str) -> int:
    """Move competition ``name`` of the arena ``root``, on SQLite (made before competitions went
    to PostgreSQL), into the arena's database, in schema ``competition_NAME``; how many results
    were copied. Under the competition's run lock (a server serving it holds it: stop it first).
    The store is copied in one transaction into a schema of a name no competition has, renamed
    into place, then ``store.url`` names it and the file is set aside as
    ``tournament.sqlite.moved-STAMP`` (never removed); its archives are put into the database
    for every host. A copy cut off leaves the competition on SQLite, as it was."""
    from take5_arena.referee.store.transfer import copy_store
    from take5_arena.referee.tournament.run.lifecycle import run_lock

    directory = resolve(root, name)
    url = arena_database(root)
    if name == DEFAULT or url is None:
        raise BadRequestError(
            "only another competition of an arena on PostgreSQL moves into its database"
        )
    if read_pointer(directory) is not None:
        raise BadRequestError(f"competition {name!r} is in the arena's database already")
    schema = competition_schema(name)
    with run_lock(directory):
        staging: str | None = f"making_{name}_{os.getpid()}_{secrets.token_hex(4)}"
        making = directory / f".database-move-{os.getpid()}"
        making.mkdir()
        try:
            with (
                Store(directory, readonly=True) as source,
                Store(making, create=True, url=url, schema=staging) as target,
            ):
                copied = copy_store(source, target)
            if staging is not None and not rename_schema(url, staging, schema):
                raise BadRequestError(
                    f"the arena's database holds a competition {name!r} already (schema "
                    f"{schema}, made from another copy of {root}): nothing moved"
                )
            staging = None
            write_pointer(directory, url, schema)  # from now on the directory reads the database
        finally:
            shutil.rmtree(making, ignore_errors=True)
            if staging is not None:
                drop_schema(url, staging)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        for side in ("", "-wal", "-shm"):
            old = directory / (DB_NAME + side)
            if old.exists():
                os.replace(old, directory / f"{DB_NAME}.moved-{stamp}{side}")
        with Store(directory) as moved:  # every host of the arena gets the archives
            moved.archives.share(v.artifact for v in moved.versions.all() if v.artifact)
    return copied


SERVING = "serving.json"
"""The file of the arena's directory where ``referee serve`` says which competitions it serves."""


@dataclass(frozen=True)
class Serving:
    """What the server running an arena serves: its pid, the competitions it serves, and those it
    found but could not open yet (each with why: their run lock held by another referee, a damaged
    store), which it tries again."""

    pid: int
    served: tuple[str, ...]
    waiting: Mapping[str, str]


def write_serving(root: Path, served: Sequence[str], waiting: Mapping[str, str]) -> None:
    """Say what this process serves of the arena in ``root`` (replacing the file whole: a reader
    sees the old or the new)."""
    doc = {"pid": os.getpid(), "served": sorted(served), "waiting": dict(sorted(waiting.items()))}
    temporary = root / f".{SERVING}.tmp"
    temporary.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, root / SERVING)


def read_serving(root: Path) -> Serving | None:
    """What the server running the arena in ``root`` serves; None when no server runs it (or one
    from before this file, or a ``referee tournament run`` holding its lock): the file is
    believed only while its pid holds the arena's run lock."""
    holder = run_lock_holder(root)
    if holder is None:
        return None
    try:
        doc = json.loads((root / SERVING).read_text(encoding="utf-8"))
        serving = Serving(
            int(doc["pid"]),
            tuple(str(n) for n in doc["served"]),
            {str(k): str(v) for k, v in doc["waiting"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return serving if str(serving.pid) == holder else None


__all__ = [
    "COMPETITIONS",
    "DEFAULT",
    "NAME_RULE",
    "SCHEMA_PREFIX",
    "SERVING",
    "Serving",
    "add_competition",
    "arena_database",
    "competition_directory",
    "competition_names",
    "competition_problem",
    "competition_schema",
    "every_directory",
    "move_to_database",
    "read_serving",
    "resolve",
    "write_serving",
]
