"""``referee prune``: what an arena keeps on disk that nothing needs any more.

An arena keeps every upload in ``arena/uploads/`` and every folder it validated in ``arena/bots/``
(take5_arena/service/intake.py), and each worker keeps the archives it unpacked in its cache
(take5_arena/referee/artifacts.py): none of them is ever read again once a submission is validated,
because games play the archives in ``artifacts/``. What may go, by age (a file's modification time,
a cache entry's last use):

* uploads of finished submissions (the accounts' submissions still to validate keep theirs);
* validated folders, except those of versions that have no archive (submitted before archives:
  they play from their folder);
* a worker's unpacked archives not used for that long (a table carries its seats' archives, so an
  entry removed is unpacked again when needed).

The age also keeps what is being written now (an upload renamed into place just before its row is
committed, a folder being validated). The store, the accounts and ``artifacts/`` are never touched.
A dry run lists what would go and changes nothing.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from take5_arena.referee.artifacts import Pruned, tree_bytes
from take5_arena.referee.store import DB_NAME, Store, StoreError, has_store
from take5_arena.service.authors import ACCOUNTS_NAME, Accounts, unfinished_uploads

#: The shortest age anything is pruned at: an upload is committed, a folder validated, in minutes.
MIN_AGE_SECONDS = 3600.0


def prune_arena(directory: Path, older_than: float, *, dry_run: bool = False) -> list[Pruned]:
    """Remove the uploads and validated folders of the arena at ``directory`` that nothing needs and
    that are older than ``older_than`` seconds (at least :data:`MIN_AGE_SECONDS`)."""
    if not has_store(directory):
        raise StoreError(f"{directory} is not a tournament directory (no {DB_NAME})")
    horizon = time.time() - max(older_than, MIN_AGE_SECONDS)
    arena = directory / "arena"
    with Store(directory, readonly=True) as store:
        shared = store.url is not None
    if shared:  # the accounts are in the store's PostgreSQL database
        accounts = Accounts(directory)
        try:
            keep_uploads = {Path(s.archive_path).name for s in accounts.unfinished_submissions()}
        finally:
            accounts.close()
    elif (directory / ACCOUNTS_NAME).is_file():
        keep_uploads = set(unfinished_uploads(directory / ACCOUNTS_NAME))
    else:
        keep_uploads = set()
    with Store(directory, readonly=True) as store:
        keep_folders = {
            Path(v.bot_dir).resolve() for v in store.versions.all() if not v.artifact and v.bot_dir
        }
    candidates: list[Path] = []
    uploads = arena / "uploads"
    if uploads.is_dir():
        candidates += [
            p
            for p in sorted(uploads.glob("*.tgz"))
            if p.is_file() and not p.is_symlink() and p.name not in keep_uploads
        ]
    bots = arena / "bots"
    if bots.is_dir():
        for name in sorted(bots.iterdir()):
            if name.is_dir() and not name.is_symlink():
                candidates += [
                    f
                    for f in sorted(name.iterdir())
                    if f.is_dir() and not f.is_symlink() and f.resolve() not in keep_folders
                ]
    removed: list[Pruned] = []
    for path in candidates:
        try:
            if path.lstat().st_mtime >= horizon:
                continue
            size = tree_bytes(path)
        except OSError:
            continue
        if not dry_run:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
                try:
                    path.parent.rmdir()  # the bot's folder, once it holds no version
                except OSError:
                    pass
            else:
                path.unlink(missing_ok=True)
        removed.append(Pruned(path, size))
    return removed


__all__ = ["MIN_AGE_SECONDS", "prune_arena"]
