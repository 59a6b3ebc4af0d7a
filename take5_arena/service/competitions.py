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

Why a competition is made elsewhere and renamed into place: a running server looks for new
competitions every few seconds, and must never see one half made (a store without its settings
yet would be served with the defaults). What the server serves it writes into ``DIR/serving.json``
(:func:`write_serving`), so that ``referee competition list`` can say so (:func:`read_serving`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from take5_arena.referee.store import DB_NAME, Store
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.run.lifecycle import run_lock_holder
from take5_arena.service.errors import BadRequestError, NotFoundError

COMPETITIONS = "competitions"
"""The folder of the arena's directory that holds the extra competitions."""

DEFAULT = ""
"""The default competition's name: the arena's directory itself."""

NAME_RULE = "1-32 lowercase ASCII letters, digits or '-', starting with a letter or digit"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,31}", re.ASCII)
_STORE_URL = "store.url"  # a competition whose store is in PostgreSQL (referee/store/store.py)


def competition_problem(name: str) -> str | None:
    """None if ``name`` is a valid competition name, else a one-line message saying what is."""
    if _NAME.fullmatch(name):
        return None
    return f"competition name {name[:40]!r}: use {NAME_RULE}"


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
        and ((d / DB_NAME).exists() or (d / _STORE_URL).exists())
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
    TournamentSettings; None: the default); its directory. An existing one is a BadRequestError:
    a competition's settings are changed as any tournament's, on its own directory."""
    directory = competition_directory(root, name)
    if name == DEFAULT:
        raise BadRequestError(f"give the competition a name: {NAME_RULE}")
    if not (root / DB_NAME).exists() and not (root / _STORE_URL).exists():
        raise BadRequestError(f"{root} is no tournament directory: make the arena first")
    exists = BadRequestError(f"competition {name!r} exists already ({directory})")
    if directory.exists():
        raise exists
    directory.parent.mkdir(exist_ok=True)
    making = directory.with_name(f".{name}.making-{os.getpid()}")  # no competition's name
    making.mkdir()
    try:
        with Store(making, create=True) as store:
            chosen = TournamentSettings.from_json(store.settings.get()).updated(settings)
            store.settings.set(chosen.to_json())
        try:
            making.rename(directory)  # a folder made meanwhile, with anything in it, stays
        except OSError:
            raise exists from None
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return directory


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
    "SERVING",
    "Serving",
    "add_competition",
    "competition_directory",
    "competition_names",
    "competition_problem",
    "every_directory",
    "read_serving",
    "resolve",
    "write_serving",
]
