"""The online copy of a SQLite database: one consistent snapshot of a file that may be in use.

Below the store (which copies itself before it migrates) and the backups
(take5_arena/referee/store/backup.py, take5_arena/service/backup.py), so that neither imports the
other: this module knows SQLite files, not tournaments.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .base import StoreError

#: Copied files are the organiser's alone: a store holds every bot's output, the accounts hold
#: token hashes.
FILE_MODE = 0o600


class BackupError(StoreError):
    """A backup cannot be made or restored (a bad path, a damaged copy, not a backup)."""


@dataclass(frozen=True)
class CopiedFile:
    """One file of a backup: its path relative to the backup, its size and SHA-256 (hex)."""

    path: str
    bytes: int
    sha256: str


def online_copy(source: Path, target: Path) -> CopiedFile:
    """Copy the SQLite database ``source`` to the new file ``target`` with the online backup API.

    The source is opened read-only and may be written to meanwhile; the copy is one consistent
    snapshot, switched to a rollback journal (a single self-contained file), checked with
    ``PRAGMA integrity_check``, fsync'd and made readable by its owner only. ``target.name`` is the
    path the manifest records.
    """
    if not source.is_file():
        raise BackupError(f"{source}: no such database")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    os.close(fd)
    try:
        src = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error as error:
        raise BackupError(f"{source}: cannot be opened ({error})") from None
    try:
        dst = sqlite3.connect(str(target), isolation_level=None)
        try:
            src.execute("PRAGMA busy_timeout = 30000")
            src.backup(dst)  # pages=-1: all in one step, one read transaction
            dst.execute("PRAGMA journal_mode = DELETE")
            problem = integrity_check(dst)
        finally:
            dst.close()
    except sqlite3.Error as error:
        raise BackupError(f"{source}: cannot be copied ({error})") from None
    finally:
        src.close()
    if problem:
        raise BackupError(f"{source}: the copy fails SQLite's integrity check: {problem}")
    return describe_copy(target, target.name)


def upgrade_backup_path(path: Path, version: int, n: int = 1) -> Path:
    """Where the copy of a store of schema ``version`` is kept before it is migrated:
    ``tournament.schema-v2.sqlite`` beside ``tournament.sqlite`` (``-2``, ... if that exists)."""
    suffix = "" if n == 1 else f"-{n}"
    return path.with_name(f"{path.stem}.schema-v{version}{suffix}{path.suffix}")


def copy_before_migration(path: Path, version: int) -> Path:
    """Copy the database ``path`` of schema ``version``, as the older release left it, to
    ``NAME.schema-vN.sqlite`` beside it (`upgrade_backup_path`; ``-2``, ... when an earlier
    attempt's copy is there, which is kept as it is) with `online_copy`; the copy's path. The
    store and the arena's accounts both do this before they migrate."""
    target = upgrade_backup_path(path, version)
    n = 1
    while target.exists():
        n += 1
        target = upgrade_backup_path(path, version, n)
    online_copy(path, target)
    return target


def integrity_check(db: sqlite3.Connection) -> str | None:
    rows = [row[0] for row in db.execute("PRAGMA integrity_check")]
    return None if rows == ["ok"] else "; ".join(str(r) for r in rows[:3])


def describe_copy(path: Path, name: str) -> CopiedFile:
    """fsync ``path`` and describe it (its size and SHA-256, read back from the disk)."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        os.fsync(f.fileno())
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return CopiedFile(name, size, digest.hexdigest())


__all__ = [
    "FILE_MODE",
    "BackupError",
    "CopiedFile",
    "copy_before_migration",
    "describe_copy",
    "integrity_check",
    "online_copy",
    "upgrade_backup_path",
]
