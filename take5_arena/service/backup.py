"""``referee backup`` and ``referee restore``: an arena (or any tournament) copied while it serves.

A backup is a folder laid out like the tournament directory it was taken from, so that
``referee verify --tournament BACKUP`` reads it as it is::

    take5-backup.json         the manifest: what was copied, each file's size and SHA-256
    accounts.sqlite           the accounts (an arena's; absent for a plain tournament)
    tournament.sqlite         the store
    artifacts/HEX.tar         every archive the store plays
    secret/deal-key-N         the secret deal keys (take5_arena/referee/store/deals.py): without
    secret/deal-root          them no game of their season can be scheduled or checked later
    competitions/NAME/...     each other competition of the arena (take5_arena/service/
                              competitions.py): its store, archives and deal keys, laid out as
                              above, so ``verify --tournament BACKUP/competitions/NAME`` reads it
    arena/uploads/NAME.tgz    the uploads of submissions recorded but not yet validated

The order makes the databases agree without a transaction across them
(docs/architecture.md, "Who owns which data"): the accounts are copied first, then the store. A
submission validated between the two copies is then "validating" in the accounts and has its
version in the store, which the restored arena handles as after any restart (it validates the
submission again and finds the version); the other order could leave an accepted submission whose
version the copy lacks. The same holds for every competition's store, all copied after the
accounts (a submission names its competition; a bot name is the arena's). Each database is one
snapshot taken with SQLite's online backup API (take5_arena/referee/store/backup.py), so ``serve``
goes on writing meanwhile.

The manifest is authenticated: an HMAC-SHA256 of its content under the arena's backup key, which is
never in a backup (``DIR/secret/backup-key``, made at the first backup, or ``backup --key FILE``)
and which ``restore --key FILE`` must be given. The SHA-256 sums alone prove nothing against
someone who can write to the backups: they would edit the accounts (move a bot to another author,
put a token hash of their own in, undo a revocation) or the store and compute the sums again. With
the key elsewhere, any such edit shows as a manifest whose HMAC does not match, and a manifest of
the format before the HMAC is refused as well (it cannot be told from a rewritten one).

The copy is made in a hidden folder beside DEST, checked (each database's integrity, each archive's
digest, every recorded game replayed through the rules: ``referee verify --tournament``), and only
then renamed to DEST: a DEST that exists is a whole backup. A restore checks the manifest's HMAC
and every file against the manifest before it copies anything, checks the result the same way and
renames it into place, with the key it was given as the restored arena's backup key; with a
PostgreSQL database, every competition's store goes there (:func:`_into_database`). The
folders are the owner's alone (0700, files 0600): the store holds every bot's output, the accounts
hold token hashes.

Not in a backup, because a running arena remakes them: ``site/`` (the next publication writes it),
``arena/bots/`` (the folders submissions were validated from; games play the archives) and uploads
already validated (their archive is in ``artifacts/``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from take5_arena.referee.defaults import VERSION
from take5_arena.referee.store import DB_NAME, Store, has_store
from take5_arena.referee.store.backup import (
    BackupError,
    CopiedFile,
    check_tournament,
    copy_tournament,
    fsync_dir,
    games_recorded,
    integrity_problem,
    make_dir,
    online_copy,
    unplayable_versions,
    write_file,
)
from take5_arena.referee.store.deals import ROOT_NAME, SECRET_DIR
from take5_arena.referee.store.postgres import drop_schema, occupied, redacted
from take5_arena.referee.store.snapshot import describe_copy
from take5_arena.referee.store.store import store_url, write_pointer
from take5_arena.referee.store.transfer import import_sqlite
from take5_arena.service.authors import ACCOUNTS_NAME, unfinished_uploads
from take5_arena.service.authors.storage import export_accounts
from take5_arena.service.competitions import (
    COMPETITIONS,
    competition_names,
    competition_schema,
    every_directory,
    move_to_database,
)
from take5_arena.service.errors import ServiceError

MANIFEST = "take5-backup.json"
FORMAT = "take5-backup"
FORMAT_VERSION = 2
"""2: the manifest carries ``key_id`` and ``hmac_sha256`` (1 had neither, and is refused)."""
UPLOADS = "arena/uploads"
KEY_NAME = f"{SECRET_DIR}/backup-key"
"""Where an arena keeps the key its backups' manifests are authenticated with (never backed up)."""
KEY_BYTES = 32
_MAC = "hmac_sha256"
_TOURNAMENT = (
    rf"{re.escape(DB_NAME)}|artifacts/[0-9a-f]{{64}}\.tar"
    rf"|{SECRET_DIR}/(?:deal-key-[0-9]{{1,9}}|{ROOT_NAME})"
)
"""What a backup holds of each competition's directory (the default's and each other's)."""
#: The only paths a backup may hold: a manifest naming anything else is not a backup of ours.
#: A competition's folder name is checked as `competition add` checks it: no '.', no '/'.
_PATHS = re.compile(
    rf"{re.escape(ACCOUNTS_NAME)}|{UPLOADS}/[A-Za-z0-9_-][A-Za-z0-9._-]{{0,127}}\.tgz"
    rf"|(?:{COMPETITIONS}/[a-z0-9][a-z0-9-]{{0,31}}/)?(?:{_TOURNAMENT})"
)
_MANIFEST_LIMIT = 64 << 20
_PREFIX = f"{COMPETITIONS}/"


@dataclass(frozen=True)
class BackupReport:
    """What a backup or a restore did, and what its check found."""

    path: Path
    files: list[CopiedFile]
    games: int
    """Games recorded in the copy, in every competition."""
    problems: list[str] = field(default_factory=list)
    """What the check of the copy found (each line as the check said it; bot text inside)."""
    warnings: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    @property
    def competitions(self) -> list[str]:
        """The names of the competitions besides the default that the copy holds."""
        return sorted({f.path.split("/")[1] for f in self.files if f.path.startswith(_PREFIX)})

    def count(self, prefix: str) -> int:
        return sum(1 for f in self.files if f.path.startswith(prefix))


def backup(
    directory: Path,
    dest: Path,
    *,
    key_file: Path | None = None,
    progress: Callable[[str], None] = lambda _line: None,
) -> BackupReport:
    """Copy the arena or tournament at ``directory`` into the new folder ``dest`` (see the module
    text), its manifest authenticated with the key in ``key_file`` (default: the arena's
    :data:`KEY_NAME`; made if there is none); raises BackupError, with nothing left behind, when it
    cannot."""
    directory = Path(directory)
    if not has_store(directory):
        raise BackupError(f"{directory} is not a tournament directory (no {DB_NAME})")
    key_file = key_file or directory / KEY_NAME
    key = ensure_key(key_file)
    progress(f"the manifest is authenticated with the key in {key_file}: restore needs it")
    work = _work_folder(dest)
    try:
        files: list[CopiedFile] = []
        accounts = directory / ACCOUNTS_NAME
        url = store_url(directory)
        if url is not None:  # an arena on PostgreSQL: its accounts are in the database
            if export_accounts(url, work / ACCOUNTS_NAME):
                progress(f"copied the accounts into {ACCOUNTS_NAME}")
                files.append(describe_copy(work / ACCOUNTS_NAME, ACCOUNTS_NAME))
        # 0 bytes: a first `serve` cut off before it made them (a full disk); nothing to copy
        elif accounts.is_file() and accounts.stat().st_size > 0:
            progress(f"copying {ACCOUNTS_NAME}")
            files.append(online_copy(directory / ACCOUNTS_NAME, work / ACCOUNTS_NAME))
        progress(f"copying {DB_NAME} and the archives it plays")
        files += copy_tournament(directory, work)
        # after the store: a season the copy commits to had its key written before its commitment
        files += _copy_deal_keys(directory, work)
        files += _copy_competitions(directory, work, progress)
        if (work / ACCOUNTS_NAME).exists():
            files += _copy_uploads(directory, work, unfinished_uploads(work / ACCOUNTS_NAME))
        warnings = [
            f"{key} has no archive (submitted before archives): it plays from the folder it was "
            "submitted from, which the backup does not hold"
            for key in unplayable_versions(work)
        ]
        _write_manifest(work, directory, files, key)
        progress("checking the copy (verify --tournament)")
        problems = _check(work)
        games = _games(work)
        fsync_dir(work)
        if dest.exists():
            dest.rmdir()  # empty, checked before the copy
        os.rename(work, dest)
        fsync_dir(dest.parent)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return BackupReport(dest, files, games, problems, warnings)


def restore(
    source: Path,
    directory: Path,
    *,
    key_file: Path,
    store: str | None = None,
    progress: Callable[[str], None] = lambda _line: None,
) -> BackupReport:
    """Restore the backup ``source``, authenticated with the key in ``key_file``, into
    ``directory`` (new, or an empty folder), its store into the new PostgreSQL database ``store``
    when given (else ``directory/tournament.sqlite``); raises BackupError, with nothing written
    there, when the backup is not whole or not as it was made."""
    source = Path(source)
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise BackupError(
            f"{directory} exists and is not an empty folder: restore into a new folder"
        )
    key = load_key(key_file)
    files = read_manifest(source, key)
    work = _work_folder(directory)
    try:
        progress(f"copying {len(files)} files, each checked against the manifest")
        for entry in files:
            _copy_checked(source, work, entry)
        make_dir(work / SECRET_DIR)  # the restored arena's next backups: the same key
        write_file(work / KEY_NAME, key.hex().encode() + b"\n")
        if store is not None:
            _into_database(work, store, progress)
        progress("checking the restored tournament (verify --tournament)")
        problems = _check(work)
        games = _games(work)
        fsync_dir(work)
        if directory.exists():
            directory.rmdir()  # empty, checked above
        os.rename(work, directory)
        fsync_dir(directory.parent)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return BackupReport(directory, files, games, problems)


def _into_database(work: Path, url: str, progress: Callable[[str], None]) -> None:
    """Every store of the restored arena in ``work`` into the new PostgreSQL database ``url``:
    each other competition into its schema by `competition move`'s own copy
    (:func:`~take5_arena.service.competitions.move_to_database`), then the default store, last and
    in one transaction, so that the database holds an arena only once it holds all of it. A
    restore that fails drops the schemas it made; one killed leaves them (and perhaps a
    ``making_*`` schema) beside an empty default store, which no later restore takes
    (:func:`~take5_arena.referee.store.postgres.occupied`) and no directory names."""
    problem = occupied(url)
    if problem is not None:
        raise BackupError(f"{redacted(url)} {problem}: restore into a new database")
    write_pointer(work, url, None)  # where move_to_database puts the competitions
    made: list[str] = []
    try:
        for name in competition_names(work):
            progress(f"copying competition {name} into schema {competition_schema(name)}")
            made.append(competition_schema(name))
            try:
                move_to_database(work, name)
            except ServiceError:
                made.pop()  # refused before its copy, or its schema is another's: not ours
                raise
            for kept in (work / COMPETITIONS / name).glob(f"{DB_NAME}.moved-*"):
                kept.unlink()  # the backup holds it: the restored arena need not
        progress(f"copying the store into {redacted(url)}")
        import_sqlite(work, url)
        with Store(work) as restored:  # every host of the restored arena gets the archives
            restored.archives.share(v.artifact for v in restored.versions.all() if v.artifact)
    except BaseException as error:
        for schema in made:
            drop_schema(url, schema)
        if isinstance(error, ServiceError):
            raise BackupError(str(error)) from None
        raise


def read_manifest(source: Path, key: bytes) -> list[CopiedFile]:
    """The files a backup holds, from its manifest authenticated with ``key``; BackupError when
    ``source`` is not a backup, or not one this key made, or its manifest was changed since."""
    path = source / MANIFEST
    try:
        with path.open("rb") as f:
            raw = f.read(_MANIFEST_LIMIT + 1)
    except FileNotFoundError:
        raise BackupError(f"{source} is not a backup (no {MANIFEST})") from None
    except OSError as error:
        raise BackupError(f"{path}: cannot be read ({error.strerror})") from None
    if len(raw) > _MANIFEST_LIMIT:
        raise BackupError(f"{path}: too large for a manifest")
    try:
        doc: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise BackupError(f"{path}: not a manifest ({type(error).__name__})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BackupError(f"{path}: not a {FORMAT} manifest")
    if doc.get("version") == 1:
        raise BackupError(
            f"{path}: a backup of format version 1 has no authenticated manifest, so it cannot be "
            "told from a rewritten one; restore it with the referee that made it"
        )
    if doc.get("version") != FORMAT_VERSION:
        raise BackupError(
            f"{path}: backup format version {str(doc.get('version'))[:20]!r}; this referee "
            f"restores version {FORMAT_VERSION}"
        )
    if doc.get("key_id") != key_id(key):
        raise BackupError(f"{path}: made with another backup key than the one given (key id)")
    mac = doc.get(_MAC)
    if not isinstance(mac, str) or not hmac.compare_digest(mac, manifest_mac(doc, key)):
        raise BackupError(
            f"{path}: the manifest's HMAC does not match: the backup was changed after it was "
            "made; nothing restored"
        )
    entries = doc.get("files")
    if not isinstance(entries, list):
        raise BackupError(f"{path}: no list of files")
    files: list[CopiedFile] = []
    seen: set[str] = set()
    for entry in entries:
        name = entry.get("path") if isinstance(entry, dict) else None
        size = entry.get("bytes") if isinstance(entry, dict) else None
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _PATHS.fullmatch(name) or name in seen:
            raise BackupError(f"{path}: a file the backup may not hold: {str(name)[:80]!r}")
        if (
            not isinstance(size, int)
            or isinstance(size, bool)
            or size < 0
            or not isinstance(digest, str)
            or not re.fullmatch(r"[0-9a-f]{64}", digest)
        ):
            raise BackupError(f"{path}: {name}: no valid size and SHA-256")
        seen.add(name)
        files.append(CopiedFile(name, size, digest))
    if DB_NAME not in seen:
        raise BackupError(f"{path}: the backup holds no {DB_NAME}")
    return files


def _work_folder(dest: Path) -> Path:
    """A new owner-only folder beside ``dest``, where the copy is made before it is renamed."""
    parent = dest.parent
    if dest.exists() and not dest.is_dir():
        raise BackupError(f"{dest} exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()):
        raise BackupError(f"{dest} exists and is not empty: give a new folder")
    if not parent.is_dir():
        raise BackupError(f"{parent}: no such folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BackupError(f"{parent}: not writable")
    for stale in parent.glob(f".{dest.name}.partial-*"):  # left by a copy that was killed
        shutil.rmtree(stale, ignore_errors=True)
    work = parent / f".{dest.name}.partial-{secrets.token_hex(4)}"
    try:
        work.mkdir(mode=0o700)
    except OSError as error:
        raise BackupError(f"{work}: cannot be created ({error.strerror})") from None
    return work


def _copy_deal_keys(directory: Path, work: Path) -> list[CopiedFile]:
    folder = directory / SECRET_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    copied = []
    for path in sorted(folder.iterdir()):
        relative = f"{SECRET_DIR}/{path.name}"
        if not _PATHS.fullmatch(relative):
            continue  # not a key of ours (a temporary file being written)
        make_dir(work / SECRET_DIR)
        copied.append(_copy_file(path, work / relative, relative))
    return copied


def _copy_competitions(
    directory: Path, work: Path, progress: Callable[[str], None]
) -> list[CopiedFile]:
    """Each other competition of the arena: its store (one snapshot of its own, taken after the
    accounts), the archives it plays and its deal keys, under ``competitions/NAME/``."""
    copied: list[CopiedFile] = []
    for name in competition_names(directory):
        progress(f"copying competition {name}")
        relative = f"{COMPETITIONS}/{name}"
        make_dir(work / COMPETITIONS)
        make_dir(work / relative)
        source = directory / relative
        files = copy_tournament(source, work / relative)
        files += _copy_deal_keys(source, work / relative)
        copied += [CopiedFile(f"{relative}/{f.path}", f.bytes, f.sha256) for f in files]
    return copied


def _copy_uploads(directory: Path, work: Path, names: list[str]) -> list[CopiedFile]:
    copied = []
    for name in names:
        relative = f"{UPLOADS}/{name}"
        if not _PATHS.fullmatch(relative):
            continue  # not an upload of ours: the restored arena reports the submission as gone
        make_dir(work / "arena")
        make_dir(work / UPLOADS)
        try:
            copied.append(_copy_file(directory / relative, work / relative, relative))
        except FileNotFoundError:
            continue  # validated meanwhile: the store copy was taken later, it is done there
    return copied


def _copy_file(source: Path, target: Path, name: str) -> CopiedFile:
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as src:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            raise BackupError(f"{source}: not a regular file")
        data = src.read()
    write_file(target, data)
    return CopiedFile(name, len(data), hashlib.sha256(data).hexdigest())


def _copy_checked(source: Path, work: Path, entry: CopiedFile) -> None:
    """One file of a backup copied into ``work``, refused unless it is what the manifest says."""
    path = source / entry.path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise BackupError(f"{source}: {entry.path} is missing") from None
    except OSError as error:
        raise BackupError(f"{source}: {entry.path}: cannot be read ({error.strerror})") from None
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(src.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size != entry.bytes:
            raise BackupError(f"{source}: {entry.path} is not the file the manifest names")
        data = src.read(entry.bytes + 1)
    if len(data) != entry.bytes or hashlib.sha256(data).hexdigest() != entry.sha256:
        raise BackupError(f"{source}: {entry.path} is damaged (its SHA-256 differs)")
    parts = entry.path.split("/")
    folder = work
    for part in parts[:-1]:
        folder = folder / part
        make_dir(folder)
    write_file(work / entry.path, data)


def _write_manifest(work: Path, directory: Path, files: list[CopiedFile], key: bytes) -> None:
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "referee": VERSION,
        "source": str(directory.resolve()),
        "files": [{"path": f.path, "bytes": f.bytes, "sha256": f.sha256} for f in files],
        "key_id": key_id(key),
    }
    doc[_MAC] = manifest_mac(doc, key)
    write_file(work / MANIFEST, (json.dumps(doc, indent=1) + "\n").encode())


# -- the backup key ----------------------------------------------------------------------------


def manifest_mac(doc: dict[str, Any], key: bytes) -> str:
    """The HMAC-SHA256 of a manifest under ``key``: of every field but the HMAC itself, as
    canonical JSON (sorted keys, no spaces, ASCII), so what is checked is what was parsed."""
    body = {k: v for k, v in doc.items() if k != _MAC}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def key_id(key: bytes) -> str:
    """A name for ``key`` that tells nothing of it: which key made a backup, said before the HMAC
    is checked (a key mixed up, not a backup changed)."""
    return hmac.new(key, b"take5 backup key id", hashlib.sha256).hexdigest()[:16]


def load_key(path: Path) -> bytes:
    """The backup key in ``path`` (64 hex digits); BackupError if there is none."""
    try:
        with Path(path).open("rb") as f:
            raw = f.read(4096)
    except FileNotFoundError:
        raise BackupError(f"{path}: no such backup key") from None
    except OSError as error:
        raise BackupError(f"{path}: the backup key cannot be read ({error.strerror})") from None
    text = raw.decode("ascii", "replace").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise BackupError(f"{path}: not a backup key (64 lowercase hex digits)")
    return bytes.fromhex(text)


def ensure_key(path: Path) -> bytes:
    """The backup key in ``path``, made there (mode 0600; the arena's ``secret/`` folder 0700) if
    there is none yet."""
    path = Path(path)
    if path.exists():
        return load_key(path)
    folder = path.parent
    if folder.name == SECRET_DIR:
        make_dir(folder)
    key = secrets.token_bytes(KEY_BYTES)
    tmp = folder / f".{path.name}.{secrets.token_hex(6)}"
    try:
        write_file(tmp, key.hex().encode() + b"\n")
        try:
            os.link(tmp, path)  # another backup made it first: that one is the key
        except FileExistsError:
            return load_key(path)
        fsync_dir(folder)
    except OSError as error:
        raise BackupError(f"{path}: the backup key cannot be made ({error.strerror})") from None
    finally:
        tmp.unlink(missing_ok=True)
    return key


def _games(directory: Path) -> int:
    """The games recorded in every competition of the copy at ``directory``."""
    return sum(games_recorded(d) for d in every_directory(directory))


def _check(directory: Path) -> list[str]:
    problems = list(check_tournament(directory))
    for name in competition_names(directory):
        found = check_tournament(directory / COMPETITIONS / name)
        problems += [f"competition {name}: {problem}" for problem in found]
    if (directory / ACCOUNTS_NAME).exists():
        problem = integrity_problem(directory / ACCOUNTS_NAME)
        if problem:
            problems.append(f"{ACCOUNTS_NAME}: {problem}")
    return problems


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "KEY_BYTES",
    "KEY_NAME",
    "MANIFEST",
    "UPLOADS",
    "BackupError",
    "BackupReport",
    "backup",
    "ensure_key",
    "key_id",
    "load_key",
    "manifest_mac",
    "read_manifest",
    "restore",
]
