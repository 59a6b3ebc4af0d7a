"""From an uploaded archive to a validated bot version: the spool and the validation workers.

Layout under the tournament directory::

    arena/uploads/.part-*        an upload in progress (discarded at start: a half-received upload)
    arena/uploads/SHA-RAND.tgz   a complete archive (one per upload), fsync'd, renamed into place
    arena/tmp/                   folders being unpacked (discarded at start)
    arena/bots/NAME/SHA16/       an unpacked bot: the folder the store's version points at

The order of writes is what makes the arena restart-safe: bytes go to a temporary file, which is
fsync'd and renamed to its final name (and the directory fsync'd) before the submission row is
committed (take5_arena/service/authors.py); a row is only written for a complete archive whose size
and SHA-256 match what the client declared. A server killed before the commit leaves at most a
temporary or an unreferenced file, which the next start removes; killed after it, the row is there
and the submission is validated at the next start.

Validation is today's ``referee submit`` (take5_arena/referee/tournament/ ``submit``: the image
builds, the bot starts, shakes hands and plays two smoke games without a fault), run on a small pool
of worker threads so that neither the upload stream nor the other calls wait for a build. Unpacking
goes through take5_arena/referee/archive.py, the one place an archive becomes a folder.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import secrets
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from take5_arena.referee.archive import ArchiveError, ArchiveLimits, unpack
from take5_arena.referee.kinds import SandboxKind
from take5_arena.service.authors import Accounts, SubmissionRow, SubmissionStatus
from take5_arena.service.errors import BadRequestError, LimitExceededError


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Spool:
    """Where uploads land (see the module text)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(directory) / "arena"
        self.uploads = self.root / "uploads"
        self.tmp = self.root / "tmp"
        self.bots = self.root / "bots"
        for d in (self.uploads, self.tmp, self.bots):
            d.mkdir(parents=True, exist_ok=True)

    def discard_partial(self) -> int:
        """Remove half-received uploads and half-unpacked folders (left by a killed server)."""
        removed = 0
        for path in self.uploads.glob(".part-*"):
            path.unlink(missing_ok=True)
            removed += 1
        for path in self.tmp.iterdir():
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(
                missing_ok=True
            )
            removed += 1
        return removed

    def receive(self, chunks: Iterable[bytes], *, size: int, sha256: str, max_bytes: int) -> Path:
        """Write an upload; return its archive path once complete and durable.

        Raises LimitExceededError (more than ``max_bytes``) or BadRequestError (size or digest
        differ from the declared ones); a failed upload leaves nothing.
        """
        part = self.uploads / f".part-{secrets.token_hex(8)}"
        digest = hashlib.sha256()
        got = 0
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    got += len(chunk)
                    if got > max_bytes:
                        raise LimitExceededError(
                            f"the archive is larger than your limit of {max_bytes} bytes"
                        )
                    if got > size:
                        raise BadRequestError(f"the upload has more bytes than the declared {size}")
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            if got != size:
                raise BadRequestError(f"the upload ended after {got} of {size} bytes")
            if digest.hexdigest() != sha256:
                raise BadRequestError("the upload does not match its SHA-256")
            final = (
                self.uploads / f"{sha256[:32]}-{secrets.token_hex(4)}.tgz"
            )  # one file per upload
            os.replace(part, final)
            _fsync_dir(self.uploads)
            return final
        except BaseException:
            part.unlink(missing_ok=True)
            raise

    def unpacked(self, bot_name: str, sha256: str) -> Path:
        return self.bots / bot_name / sha256[:16]

    def unpack(self, archive: Path, bot_name: str, sha256: str, limits: ArchiveLimits) -> Path:
        """The bot's folder for this archive, unpacked (once) through
        take5_arena/referee/archive.py."""
        dest = self.unpacked(bot_name, sha256)
        if dest.is_dir():
            return dest
        work = self.tmp / f"{bot_name}-{secrets.token_hex(6)}"
        unpack(archive, work, limits)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(work, dest)
        except OSError:
            shutil.rmtree(work, ignore_errors=True)
            if not dest.is_dir():
                raise
        return dest


@dataclass(frozen=True)
class Validated:
    """What became of a submission (the row's final status, with the version it became)."""

    submission_id: str
    bot_name: str
    status: SubmissionStatus
    """ACCEPTED, UNCHANGED or REFUSED."""
    version: int = 0
    version_id: int | None = None  # the store's entrant version id
    source_hash: str = ""
    detail: str = ""  # the validation summary, or why it was refused
    bot_output: str = ""


class Validator:
    """Validates recorded submissions on worker threads, one at a time per bot name."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        db: Accounts,
        spool: Spool,
        *,
        sandbox: SandboxKind,
        timeout: float | None,
        limits: ArchiveLimits,
        workers: int = 1,
        on_new_version: Callable[[], None] = lambda: None,
        log: Callable[[str], None] = lambda line: None,
    ):
        self.directory = Path(directory)
        self.db = db
        self.spool = spool
        self.sandbox = sandbox
        self.timeout = timeout
        self.limits = limits
        self.on_new_version = on_new_version
        self.log = log
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="validate"
        )
        self._name_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def submit(self, row: SubmissionRow) -> concurrent.futures.Future[Validated]:
        return self.pool.submit(self._validate, row)

    def close(self, wait: bool = False) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=True)

    def _lock(self, name: str) -> threading.Lock:
        with self._locks_lock:
            return self._name_locks.setdefault(name, threading.Lock())

    def _validate(self, row: SubmissionRow) -> Validated:
        with self._lock(row.bot_name):
            try:
                result = self._run(row)
            except Exception as error:  # noqa: BLE001 - the arena's own failure, reported to the author
                result = Validated(
                    row.id,
                    row.bot_name,
                    SubmissionStatus.REFUSED,
                    detail=f"the arena could not validate the bot ({type(error).__name__}: "
                    f"{str(error).splitlines()[0] if str(error) else ''}); submit again",
                )
            self.db.set_status(
                row.id,
                result.status,
                version_id=result.version_id,
                detail=result.detail,
                bot_output=result.bot_output,
            )
            self.log(
                f"submission {row.id} ({row.author}/{row.bot_name}): {result.status}"
                f"{' v' + str(result.version) if result.version else ''}: {result.detail}"
            )
            if result.status in (SubmissionStatus.ACCEPTED, SubmissionStatus.UNCHANGED):
                self.on_new_version()
            return result

    def _run(self, row: SubmissionRow) -> Validated:
        # lazy: start-up time
        from take5_arena.referee.tournament.errors import SubmitRefusedError, TournamentError
        from take5_arena.referee.tournament.submission import submit as validate_and_add

        self.db.set_status(row.id, SubmissionStatus.VALIDATING)
        try:
            folder = self.spool.unpack(
                Path(row.archive_path), row.bot_name, row.archive_sha256, self.limits
            )
        except ArchiveError as error:
            return Validated(
                row.id, row.bot_name, SubmissionStatus.REFUSED, detail=f"unsafe archive: {error}"
            )
        except FileNotFoundError:
            return Validated(
                row.id,
                row.bot_name,
                SubmissionStatus.REFUSED,
                detail="the archive is gone; submit again",
            )
        try:
            done = validate_and_add(
                self.directory, folder, row.bot_name, sandbox=self.sandbox, timeout=self.timeout
            )
        except SubmitRefusedError as refused:
            self._forget(folder)
            return Validated(
                row.id,
                row.bot_name,
                SubmissionStatus.REFUSED,
                detail=refused.reason,
                bot_output=refused.stderr,
            )
        except TournamentError as error:
            self._forget(folder)
            return Validated(row.id, row.bot_name, SubmissionStatus.REFUSED, detail=str(error))
        return Validated(
            row.id,
            row.bot_name,
            SubmissionStatus.ACCEPTED if done.created else SubmissionStatus.UNCHANGED,
            version=done.version.version,
            version_id=done.version.id,
            source_hash=done.version.source_hash,
            detail=done.smoke,
        )

    def _forget(self, folder: Path) -> None:
        """A refused bot's folder is not referenced by any version: remove it (unless one does)."""
        from take5_arena.referee.store import Store  # lazy: start-up time

        with Store(self.directory, readonly=True) as store:
            if any(v.bot_dir == str(folder) for v in store.versions()):
                return
        shutil.rmtree(folder, ignore_errors=True)
