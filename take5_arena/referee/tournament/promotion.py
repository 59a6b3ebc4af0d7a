"""The next season's divisions entered (``referee season divisions ... --enter``): each bot of
division N's list put into division N's directory, by `referee submit`'s own path
(:func:`~take5_arena.referee.tournament.submission.submit`), from the archive of the version it
played with last season; each active entrant of a division's directory that is not on its list
withdrawn from it (its games stay recorded).

Why submit, and not a row copied from one store to another: the next division may play at another
table size, time control or sandbox, and a version is an entrant of a directory only once it has
passed that directory's validation (its smoke games, by that directory's rules). A bot already
entered there with the same archive stays as it is. A newcomer (in no division's directory) has
no archive to enter: the organiser submits it (it is named in the report).

Nothing is entered unless every directory is ready for a new season: none may have a season that
is not closed (open, frozen or over: its entrants are that season's), which would mix the seasons.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..artifacts import ArtifactError, materialize
from ..store import EntrantVersion, Store, has_store
from .errors import TournamentError
from .season import season_of
from .submission import submit


@dataclass(frozen=True)
class Entry:
    """What became of one bot in one division's directory."""

    division: int
    bot: str
    done: str
    """``entered`` (a new version there), ``stays`` (already there with this archive),
    ``withdrawn`` (left this division), ``refused: ...`` (failed this directory's validation),
    or why it was not entered (one line)."""


def season_problem(directory: Path) -> str | None:
    """Why ``directory`` is not ready for a new season's entries (a season not closed), or None
    (never had a season, its last one closed, or no tournament yet: submit makes one)."""
    if not has_store(directory):
        return None
    with Store(directory, readonly=True) as store:
        season = season_of(store)
    if season is None or season.closed_at is not None:
        return None
    return (
        f"{directory}: season {season.number} is not closed (`referee season close`): "
        "not ready for the next season's entries"
    )


def enter_divisions(
    sources: Sequence[Path],
    divisions: Sequence[Sequence[str]],
    targets: Sequence[Path],
    *,
    log: Callable[[str], None] = lambda _line: None,
) -> list[Entry]:
    """Enter ``divisions[i]`` into ``targets[i]`` from the versions the bots played in
    ``sources`` (last season's division directories); TournamentError, nothing entered, when a
    target is not ready (:func:`season_problem`). SubmitRefusedError and SubmitDeferredError of a
    bot are reported in its :class:`Entry` and the others go on."""
    from .errors import SubmitDeferredError, SubmitRefusedError

    if len(targets) != len(divisions):
        raise TournamentError(f"{len(divisions)} divisions but {len(targets)} directories")
    for target in targets:
        problem = season_problem(target)
        if problem is not None:
            raise TournamentError(problem)
    played = _versions(sources)
    entries: list[Entry] = []
    for d, (target, bots) in enumerate(zip(targets, divisions, strict=True), 1):
        there = _current(target)
        for bot in bots:
            found = played.get(bot)
            if found is None:
                done = "not entered: in no division's directory (a newcomer: `referee submit`)"
            elif found[1].artifact is None:
                done = "not entered: submitted before archives (`referee submit` its folder)"
            elif there.get(bot) == found[1].artifact:
                done = "stays"
            else:
                try:
                    done = _enter(found[0], found[1], target, log)
                except SubmitRefusedError as error:
                    done = f"refused: {error.reason}"
                except SubmitDeferredError as error:
                    done = f"not entered, the host failed (enter it again later): {error.reason}"
            entries.append(Entry(d, bot, done))
        listed = set(bots)
        if has_store(target):
            with Store(target) as store:
                left = sorted(set(there) - listed)
                entries += [Entry(d, n, "withdrawn") for n in left if store.versions.withdraw(n)]
    return entries


def _versions(sources: Sequence[Path]) -> dict[str, tuple[Path, EntrantVersion]]:
    """Each bot's current version and the directory it played in (the first that has it)."""
    found: dict[str, tuple[Path, EntrantVersion]] = {}
    for source in sources:
        with Store(source, readonly=True) as store:
            for version in store.versions.current():
                found.setdefault(version.name, (source, version))
    return found


def _current(directory: Path) -> dict[str, str | None]:
    """The active entrants of ``directory`` and the archive each plays (none yet: empty)."""
    if not has_store(directory):
        return {}
    with Store(directory, readonly=True) as store:
        return {v.name: v.artifact for v in store.versions.current()}


def _enter(source: Path, version: EntrantVersion, target: Path, log: Callable[[str], None]) -> str:
    """``version``'s archive, unpacked from ``source``'s store, submitted to ``target``."""
    assert version.artifact is not None
    with tempfile.TemporaryDirectory(prefix="take5-divisions-") as scratch:
        try:
            with Store(source, readonly=True) as store:
                artifact = store.archives.get(version.artifact)
            folder = materialize(artifact.digest, artifact.data, Path(scratch))
        except ArtifactError as error:
            return f"not entered: its archive cannot be read ({error})"
        done = submit(target, folder, version.name, author=version.author, log=log)
    return "entered" if done.created else "stays"


__all__ = ["Entry", "enter_divisions", "season_problem"]
