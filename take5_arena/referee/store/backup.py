"""A consistent copy of a tournament that may be in play: its store and the archives it plays.

The store is SQLite in WAL mode, so copying ``tournament.sqlite`` as a file can miss the commits
still in ``tournament.sqlite-wal``, or catch the file half-way through a checkpoint. SQLite's online
backup API (:meth:`sqlite3.Connection.backup`) copies the pages of one read transaction instead: a
snapshot of one moment, taken while ``referee serve`` or ``tournament run`` goes on writing (in WAL
mode a reader never blocks the writer). It is copied in a single step, so a commit during the copy
cannot make SQLite start it again.

The archives come after the snapshot. They are content-addressed and written before the version
that names them is committed (take5_arena/referee/tournament/submission.py), so every archive the
snapshot names is on disk by then, and each is checked against its digest as it is copied.

What is copied, and how it is checked, is this module's; the arena's own parts (the accounts, the
uploads still to validate) are added by take5_arena/service/backup.py, which writes the manifest.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from take5.record import Verdict

from ..artifacts import FOLDER as ARTIFACTS
from ..artifacts import ArtifactError, ArtifactStore
from .schema import DB_NAME
from .snapshot import (
    FILE_MODE,
    BackupError,
    CopiedFile,
    copy_before_migration,
    integrity_check,
    online_copy,
)
from .store import Store, has_store, store_url
from .transfer import export_sqlite
from .verify import stored_judgements
from .versions import EntrantVersion

#: Folders of a backup are the organiser's alone, as its files are (FILE_MODE).
DIR_MODE = 0o700


def write_file(path: Path, data: bytes) -> None:
    """A new file, owner-only, durable (a backup is worth nothing half-written)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def make_dir(path: Path) -> None:
    path.mkdir(mode=DIR_MODE, parents=False, exist_ok=True)
    path.chmod(DIR_MODE)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy_tournament(directory: Path, target: Path) -> list[CopiedFile]:
    """The store of the tournament at ``directory`` and every archive it plays, copied into the
    (existing, empty) folder ``target``; paths in the result are relative to ``target``."""
    if not has_store(directory):
        raise BackupError(f"{directory} is not a tournament directory (no {DB_NAME})")
    if store_url(directory) is not None:  # PostgreSQL: one snapshot, into the backup's SQLite
        files = [export_sqlite(directory, target / DB_NAME)]
    else:
        files = [online_copy(directory / DB_NAME, target / DB_NAME)]
    digests = sorted({v.artifact for v in _versions(target) if v.artifact})
    if digests:
        make_dir(target / ARTIFACTS)
    copies = ArtifactStore(target / ARTIFACTS)
    with Store(directory, readonly=True) as source:
        for digest in digests:
            try:  # checked against its digest (from a shared store if this host lacks it)
                data = source.archives.get(digest).data
            except ArtifactError as error:
                raise BackupError(
                    f"the store plays an archive that cannot be copied: {error}"
                ) from None
            path = copies.path(digest)
            write_file(path, data)
            files.append(CopiedFile(path.relative_to(target).as_posix(), len(data), digest[7:]))
    return files


def _versions(directory: Path) -> list[EntrantVersion]:
    with Store(directory, readonly=True) as store:
        return store.versions.all()


def unplayable_versions(directory: Path) -> list[str]:
    """The versions of a tournament that have no archive (submitted before archives existed): they
    play from the folder they were submitted from, which a backup does not hold."""
    with Store(directory, readonly=True) as store:
        return [v.key for v in store.versions.all() if not v.artifact]


def integrity_problem(path: Path) -> str | None:
    """What SQLite's integrity check finds wrong with the database file ``path`` (opened
    read-only), or None."""
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            return integrity_check(db)
        finally:
            db.close()
    except sqlite3.Error as error:
        return str(error)


def check_tournament(directory: Path) -> Iterator[str]:
    """What is wrong with the tournament at ``directory`` as a copy would see it: SQLite's integrity
    check, each archive the store plays (present, its digest), and every recorded game replayed
    through the rules and held to its seats (``referee verify --tournament``). Nothing: it is
    whole. (A PostgreSQL store's pages are its server's to check.)"""
    problem = None if store_url(directory) else integrity_problem(directory / DB_NAME)
    if problem:
        yield f"{DB_NAME}: {problem}"
        return
    with Store(directory, readonly=True) as store:
        for v in store.versions.all():
            if v.artifact:
                try:
                    store.archives.get(v.artifact)
                except ArtifactError as error:
                    yield f"{v.key}: {error}"
    for game_id, judgement in stored_judgements(directory):
        if judgement.verdict is not Verdict.VALID:
            yield f"game {game_id}: {judgement.verdict.value.lower()}: {judgement.reason}"


def games_recorded(directory: Path) -> int:
    with Store(directory, readonly=True) as store:
        return store.results.recorded_count()


__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "BackupError",
    "CopiedFile",
    "check_tournament",
    "copy_before_migration",
    "copy_tournament",
    "fsync_dir",
    "games_recorded",
    "integrity_problem",
    "make_dir",
    "online_copy",
    "unplayable_versions",
    "write_file",
]
