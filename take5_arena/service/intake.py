"""From an uploaded archive to a validated bot version: the spool and the validation workers.

Layout under the tournament directory::

    arena/uploads/.part-*        an upload in progress (discarded at start: a half-received upload)
    arena/uploads/SHA-RAND.tgz   a complete archive (one per upload), fsync'd, renamed into place
    arena/tmp/                   folders being unpacked (discarded at start)
    arena/bots/NAME/SHA16/       an unpacked bot: the folder the store's version points at

The order of writes is what makes the arena restart-safe: bytes go to a temporary file, which is
fsync'd and renamed to its final name (and the directory fsync'd) before the submission row is
committed (take5_arena/service/authors/); a row is only written for a complete archive whose size
and SHA-256 match what the client declared. A server killed before the commit leaves at most a
temporary or an unreferenced file, which the next start removes; killed after it, the row is there
and the submission is validated at the next start.

Validation (take5_arena/service/submissions.py) reads the archive back from here; once a submission
is judged its upload is removed (:meth:`Spool.discard`), and a refused bot's folder too. Unpacking
goes through take5_arena/referee/archive.py, the one place an archive becomes a folder.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from collections.abc import Iterable
from pathlib import Path

from take5_arena.referee.archive import ArchiveLimits, unpack
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
        upload = self.begin(size=size, sha256=sha256, max_bytes=max_bytes)
        try:
            for chunk in chunks:
                upload.write(chunk)
            return upload.finish()
        except BaseException:
            upload.abort()
            raise

    def begin(self, *, size: int, sha256: str, max_bytes: int) -> Upload:
        """An upload written chunk by chunk (for a caller that receives them one at a time)."""
        return Upload(self.uploads, size=size, sha256=sha256, max_bytes=max_bytes)

    def discard(self, archive: str | os.PathLike[str]) -> None:
        """Remove a judged submission's upload (only a file of this spool)."""
        path = Path(archive)
        if path.parent == self.uploads and path.name.endswith(".tgz"):
            path.unlink(missing_ok=True)

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


class Upload:
    """One upload being written: bytes go to a private temporary file; :meth:`finish` checks the
    size and digest, fsyncs and renames it into place; :meth:`abort` (or any error) removes it."""

    def __init__(self, folder: Path, *, size: int, sha256: str, max_bytes: int) -> None:
        self.folder = folder
        self.size = size
        self.sha256 = sha256
        self.max_bytes = max_bytes
        self.got = 0
        self._digest = hashlib.sha256()
        self._part = folder / f".part-{secrets.token_hex(8)}"
        fd = os.open(self._part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._out = os.fdopen(fd, "wb")

    def write(self, chunk: bytes) -> None:
        try:
            self.got += len(chunk)
            if self.got > self.max_bytes:
                raise LimitExceededError(
                    f"the archive is larger than your limit of {self.max_bytes} bytes"
                )
            if self.got > self.size:
                raise BadRequestError(f"the upload has more bytes than the declared {self.size}")
            self._digest.update(chunk)
            self._out.write(chunk)
        except BaseException:
            self.abort()
            raise

    def finish(self) -> Path:
        try:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()
            if self.got != self.size:
                raise BadRequestError(f"the upload ended after {self.got} of {self.size} bytes")
            if self._digest.hexdigest() != self.sha256:
                raise BadRequestError("the upload does not match its SHA-256")
            final = self.folder / f"{self.sha256[:32]}-{secrets.token_hex(4)}.tgz"  # one per upload
            os.replace(self._part, final)
            _fsync_dir(self.folder)
            return final
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        if not self._out.closed:
            self._out.close()
        self._part.unlink(missing_ok=True)
