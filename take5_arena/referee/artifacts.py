"""Bot versions as content-addressed artifacts: what was validated is exactly what plays, anywhere.

``referee submit`` packs the bot folder it validates into a deterministic tar archive whose SHA-256
is the version's identity (:func:`pack`), and keeps it in the tournament's ``artifacts/`` folder
(:class:`ArtifactStore`). Games never read the submitted folder again: a worker — a thread of this
referee, another process, or a Dask worker on another host with its own Docker engine — gets the
archive once (take5_arena/referee/tournament/run/shipping.py), checks its digest, unpacks it once
into its own cache (:func:`materialize`: a folder of the worker's user, mode 0700, whose entries are
re-checked
against their digest each time they are used) and builds or reuses the image from there (images
are tagged by a hash of their sources, so each engine builds a version once). Nothing assumes a
shared file system, and a folder changed (or deleted) after submission changes nothing.

Why archives and not images pushed to a registry: a bot's source is small (kilobytes for a Python
bot; megabytes for a static Go binary or a Node bot's ``node_modules``, which is why each worker
gets each archive once rather than with every table), every worker's engine must be able to build
anyway (the hardened build runs on the worker), and no registry needs to be deployed, secured and
kept in step with the store.

What goes in is what the build would copy (the folder's scan:
take5_arena/referee/sandbox/context.py). Determinism: members sorted by path, mtime 0, uid/gid 0,
modes 0644/0755 (executable bits kept), no owner names, ustar format. The same folder content gives
the same digest on every machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import secrets
import shutil
import stat
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import RefereeError
from .sandbox.build_errors import BuildRefusedError
from .sandbox.context import BotFolder, Kind, scan

#: The folder of a tournament directory that holds its artifacts (:class:`ArtifactStore`).
FOLDER = "artifacts"
#: Where a worker keeps unpacked artifacts (one folder per digest), unless told otherwise.
CACHE_ENV = "TAKE5_ARTIFACT_CACHE"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", "/var/tmp")) / "take5-artifacts"
_COMPLETE = ".take5-artifact-complete"
log = logging.getLogger(__name__)


class ArtifactError(RefereeError):
    """An artifact cannot be packed, found or trusted (digest mismatch, unsafe member)."""


@dataclass(frozen=True)
class Artifact:
    """A packed bot version: ``digest`` is ``sha256:<hex>`` of ``data`` (a tar archive)."""

    digest: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _hex(digest: str) -> str:
    algo, _, hexpart = digest.partition(":")
    if algo != "sha256" or len(hexpart) != 64 or any(c not in "0123456789abcdef" for c in hexpart):
        raise ArtifactError(f"not an artifact digest: {digest[:80]!r}")
    return hexpart


def pack(folder: str | os.PathLike[str] | BotFolder) -> Artifact:
    """The deterministic archive of a bot folder: exactly the entries the build would copy.

    The folder is scanned first (take5_arena/referee/sandbox/context.py: size, file-count, path and
    depth limits; symlinks never followed, one that leads outside refused; caches and VCS folders
    left out), or ``folder`` is such a scan already. Files are read by the scan's list: a file whose
    size changed since, or that is no longer a plain file, refuses the pack (a folder being edited).
    Symlinks that stay inside the folder are kept as symlinks (npm's ``node_modules/.bin``).
    """
    try:
        scanned = folder if isinstance(folder, BotFolder) else scan(folder)
    except BuildRefusedError as error:
        raise ArtifactError(str(error)) from None
    root = scanned.root
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for entry in sorted(scanned.entries, key=lambda e: e.path):
            info = tarfile.TarInfo(entry.path)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if entry.kind is Kind.DIR:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            elif entry.kind is Kind.SYMLINK:
                info.type = tarfile.SYMTYPE
                info.linkname = entry.target
                info.mode = 0o777
                tar.addfile(info)
            else:
                path = root / entry.path
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
                except OSError as error:
                    raise ArtifactError(
                        f"{entry.path}: cannot be read ({error.strerror})"
                    ) from None
                with os.fdopen(fd, "rb") as f:
                    st = os.fstat(f.fileno())
                    if not stat.S_ISREG(st.st_mode) or st.st_size != entry.size:
                        raise ArtifactError(
                            f"{entry.path} changed while the bot was being packed; "
                            "submit again with a folder nobody is changing"
                        )
                    info.size = st.st_size
                    info.mode = 0o755 if entry.executable else 0o644
                    tar.addfile(info, f)
    data = buf.getvalue()
    return Artifact(digest_of(data), data)


class ArtifactStore:
    """A folder of artifacts named by digest (the tournament's ``artifacts/``)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, digest: str) -> Path:
        return self.folder / f"{_hex(digest)}.tar"

    def put(self, artifact: Artifact) -> Path:
        """Write ``artifact`` once (atomically: a crash never leaves half an archive)."""
        target = self.path(artifact.digest)
        if target.exists():
            return target
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(artifact.data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def get(self, digest: str) -> Artifact:
        try:
            data = self.path(digest).read_bytes()
        except FileNotFoundError:
            raise ArtifactError(f"artifact {digest} is missing from {self.folder}") from None
        if digest_of(data) != digest:
            raise ArtifactError(f"artifact {digest} in {self.folder} is corrupt (digest mismatch)")
        return Artifact(digest, data)


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def is_cached(digest: str, cache: Path | None = None) -> bool:
    return ((cache or cache_dir()) / _hex(digest) / _COMPLETE).exists()


def check_cache(cache: Path) -> Path:
    """``cache``, created if needed as a folder of this user's with mode 0700; ArtifactError if it
    is another user's or not a folder (a symlink): whoever can write there could plant a bot for any
    digest. A folder of this user's that is open to others (an older cache, made 0755) is closed to
    mode 0700 with a warning: what it already holds is safe to keep, since every folder is checked
    against its digest before it is played (:func:`verify_cached`)."""
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(cache)
    except OSError as error:
        raise ArtifactError(f"the artifact cache {cache} cannot be created: {error}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ArtifactError(f"the artifact cache {cache} is not a folder (a symlink?)")
    if st.st_uid != os.geteuid():
        raise ArtifactError(
            f"the artifact cache {cache} must belong to this user (uid {os.geteuid()}); it belongs "
            f"to uid {st.st_uid}: set {CACHE_ENV} to a folder of this user's"
        )
    if st.st_mode & 0o077:
        try:
            os.chmod(cache, 0o700)
        except OSError as error:
            raise ArtifactError(
                f"the artifact cache {cache} cannot be made 0700: {error}"
            ) from None
        log.warning(
            "artifact cache %s was open to others (mode %04o): now 0700",
            cache,
            stat.S_IMODE(st.st_mode),
        )
    return cache


_Snapshot = tuple[tuple[str, int, int, int, int, int], ...]
"""Every entry of a folder as (path, inode, mode, size, mtime_ns, ctime_ns)."""
_SETTLED_NS = 2_000_000_000
"""A snapshot is trusted only if nothing in it changed for this long: file times tick coarsely
(milliseconds), and a change in the same tick as the hash would not show in them."""
_verified: dict[tuple[str, str], _Snapshot] = {}
_verified_lock = threading.Lock()


def _snapshot(folder: Path) -> _Snapshot | None:
    """What the kernel says of every entry under ``folder`` (None: it cannot be read). A write,
    a rename, a chmod or a new file changes an entry's ctime or inode, which no user can set back:
    the same snapshot means the same bytes as when it was taken."""
    entries = []
    try:
        for root, dirs, files in os.walk(folder, onerror=_raise):
            for name in sorted([*dirs, *files]):
                path = os.path.join(root, name)
                st = os.lstat(path)
                entries.append(
                    (path, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                )
        st = os.lstat(folder)
    except OSError:
        return None
    entries.append((str(folder), st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(sorted(entries))


def _raise(error: OSError) -> None:
    raise error


def verify_cached(digest: str, folder: Path) -> bool:
    """Whether ``folder`` (a cached, unpacked artifact) still packs to ``digest``: what a worker
    plays is re-checked against the digest every time (at every game's start and end), so a
    folder planted or edited in the cache is never played. The bytes are hashed again only when
    the folder's :func:`_snapshot` differs from the one taken around its last good hash (taken
    before and after it, and kept only when the two agree, so a change during the hash is never
    taken for the checked state): a 10 MB bot is not hashed twice per game."""
    key = (digest, str(folder))
    before = _snapshot(folder)
    with _verified_lock:
        if before is not None and _verified.get(key) == before:
            return True
    try:
        ok = pack(folder).digest == digest
    except ArtifactError:
        ok = False
    with _verified_lock:
        settled = before is not None and all(
            entry[5] < time.time_ns() - _SETTLED_NS for entry in before
        )
        if ok and before is not None and settled and _snapshot(folder) == before:
            _verified[key] = before
        else:
            _verified.pop(key, None)
    return ok


def materialize(digest: str, data: bytes | None, cache: Path | None = None) -> Path:
    """The folder of artifact ``digest`` in this worker's cache, unpacked from ``data`` if needed.

    ``data`` is checked against ``digest`` before anything is unpacked; members are unpacked with
    tarfile's ``data`` filter (no links, devices, absolute or ``..`` paths). Concurrent callers
    unpack into private temporary folders and the first rename wins. The cache must be this user's,
    mode 0700 (:func:`check_cache`), and a cached folder is played only if it still packs to its
    digest (:func:`verify_cached`): one that does not is moved aside, reported (a warning in the
    log) and unpacked again from ``data`` (without ``data``, ArtifactError).
    """
    cache = check_cache(cache or cache_dir())
    hexpart = _hex(digest)
    target = cache / hexpart
    if (target / _COMPLETE).exists():
        if verify_cached(digest, target / "bot"):
            with contextlib.suppress(OSError):  # its time says when it was last used (prune_cache)
                os.utime(target / _COMPLETE)
            return target / "bot"
        aside = cache / f".rejected-{hexpart[:12]}-{secrets.token_hex(4)}"
        with contextlib.suppress(OSError):
            os.rename(target, aside)
        log.warning(
            "artifact cache %s: the folder for %s does not match its digest (planted or changed); "
            "moved aside to %s, not played",
            cache,
            digest,
            aside.name,
        )
        if data is None:
            raise ArtifactError(
                f"artifact {digest}: the cached folder does not match its digest (moved aside to "
                f"{aside}), and the archive was not sent"
            )
    if data is None:
        raise ArtifactError(f"artifact {digest} is not cached here and was not sent")
    if digest_of(data) != digest:
        raise ArtifactError(f"artifact {digest}: the data received does not match its digest")
    tmp = Path(tempfile.mkdtemp(dir=cache, prefix=f".{hexpart[:12]}-"))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar.getmembers():
                if not (member.isfile() or member.isdir() or member.issym()):
                    raise ArtifactError(
                        f"artifact {digest}: {member.name!r} is not a file, folder or symlink"
                    )
            tar.extractall(
                tmp / "bot", filter="data"
            )  # refuses links that lead outside, devices, ..
        (tmp / _COMPLETE).touch()
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / _COMPLETE).exists():
                raise
    except (tarfile.TarError, OSError) as error:
        raise ArtifactError(f"artifact {digest} cannot be unpacked: {error}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target / "bot"


def discard(digest: str, cache: Path | None = None) -> bool:
    """Remove artifact ``digest``'s folder from this process's ``cache`` (a refused candidate's,
    which no version plays: take5_arena/referee/tournament/submission.py); whether there was one.
    Moved aside first, so that it disappears at once and no caller plays a half-removed folder."""
    cache = cache or cache_dir()
    target = cache / _hex(digest)
    if not target.is_dir() or target.is_symlink():
        return False
    aside = cache / f".discarded-{_hex(digest)[:12]}-{secrets.token_hex(4)}"
    try:
        os.rename(target, aside)
    except OSError:
        return False
    shutil.rmtree(aside, ignore_errors=True)
    return True


@dataclass(frozen=True)
class Pruned:
    """A file or folder removed by a prune (or that a dry run would remove), and its size."""

    path: Path
    bytes: int


def tree_bytes(path: Path) -> int:
    """The bytes of the files under ``path`` (symlinks not followed)."""
    if not path.is_dir() or path.is_symlink():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir() or p.is_symlink())


def prune_cache(cache: Path, older_than: float, *, dry_run: bool = False) -> list[Pruned]:
    """Remove the unpacked artifacts of this worker's ``cache`` not used for ``older_than`` seconds
    (:func:`materialize` marks each use), and unpacking folders left by a killed worker. Safe at any
    time: an entry removed is fetched and unpacked again when a table needs it (on a Dask worker
    the referee thought held it, after one ``artifact`` failure that is retried:
    tournament/run/shipping.py); the age keeps the folders of games being played."""
    removed: list[Pruned] = []
    if not cache.is_dir():
        return removed
    horizon = time.time() - older_than
    for entry in sorted(cache.iterdir()):
        if not entry.is_dir() or entry.is_symlink():
            continue
        marker = entry / _COMPLETE
        stamp = marker if marker.exists() else entry
        try:
            if stamp.stat().st_mtime >= horizon:
                continue
            size = tree_bytes(entry)
        except OSError:
            continue
        if not dry_run:
            shutil.rmtree(entry, ignore_errors=True)
        removed.append(Pruned(entry, size))
    return removed
