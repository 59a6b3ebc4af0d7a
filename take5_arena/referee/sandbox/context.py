"""The one place where a bot folder becomes a Docker build context.

A bot folder is hostile input: it may hold symlinks to host files (``/etc/shadow``, a file of
secrets), a hundred thousand tiny files, fifos that block a reader forever, or names thousands of
bytes long. Everything that turns a folder into bytes for the engine goes through here, in two
steps, so that nothing of the host outside the folder can reach an image, an error or a record:

1. :func:`scan` walks the folder *without following anything* (``lstat``, ``os.scandir``) and checks
   the limits (:class:`FolderLimits`: file count, total size, path length, depth) while it walks,
   stopping at the first one exceeded, BEFORE anything is copied: a 100,000-file folder is refused
   after reading about ten thousand directory entries, in a fraction of a second. Symlinks are
   listed with their target *text*; a target that is absolute or has a ``..`` component is refused
   with the link's name (a relative link without ``..`` can only point further into the folder, in
   the image as on the host, so it is kept as a symlink). Fifos, sockets and devices are refused.
2. :class:`ContextWriter` writes the scanned entries into a tar stream (the build context the
   engine receives), opening every file relative to its parent directory's descriptor with
   ``O_NOFOLLOW``, so a file swapped for a symlink or a fifo after the scan is refused too, and
   never reading more bytes than the scan counted. Owners are root and modes 0644/0755 in the tar:
   the bot runs as uid 10001 and must be able to read its files, and the host's owners mean nothing
   in the image.

Small control files (``Dockerfile``, ``requirements.txt``, ``bot.toml``) are kept as the bytes that
went into the tar (:attr:`ContextWriter.captured`): what the policy checks is exactly what the
engine builds. Caches and VCS folders (``__pycache__``, ``.git``...) are skipped without being
entered.
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import hashlib
import io
import os
import stat
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from .build_errors import BuildRefusedError

IGNORED_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".idea",
        ".vscode",
    }
)
IGNORED_SUFFIXES = (".pyc", ".pyo")
IGNORED_FILES = frozenset({".DS_Store"})

CONTROL_FILES = frozenset({"Dockerfile", "requirements.txt", "bot.toml", "VERSION", "bot.py"})
"""Files whose bytes are kept while writing the context (the policy reads these, not the disk)."""
MAX_CONTROL_BYTES = 1 << 20


@dataclasses.dataclass(frozen=True)
class FolderLimits:
    """Limits on a bot folder, checked while scanning, before any copy.

    The defaults leave room for a Node bot with its ``node_modules`` (about 1,200 files, 14 MB for
    gRPC) and for a statically linked Go binary (about 15 MB)."""

    max_files: int = 10_000
    """Files, directories and symlinks together."""
    max_bytes: int = 64 * 1024 * 1024
    """Total size of the regular files."""
    max_path: int = 240
    """Bytes of a path relative to the folder (UTF-8)."""
    max_depth: int = 32
    """Directory levels below the folder."""


class Kind(enum.Enum):
    FILE = "file"
    DIR = "dir"
    SYMLINK = "symlink"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One scanned entry: ``path`` is relative, with ``/`` separators."""

    path: str
    kind: Kind
    size: int = 0
    executable: bool = False
    target: str = ""


@dataclasses.dataclass(frozen=True)
class BotFolder:
    """A scanned bot folder: what will be copied, and nothing else."""

    root: Path
    entries: tuple[Entry, ...]
    total_bytes: int

    def has(self, rel: str, kind: Kind = Kind.FILE) -> bool:
        return any(e.path == rel and e.kind is kind for e in self.entries)

    def digest(self) -> str:
        """sha256 of the scan (names, kinds, sizes, modes, link targets), for cache keys; the file
        contents are hashed by :class:`ContextWriter` as they are copied."""
        h = hashlib.sha256()
        for e in self.entries:
            h.update(
                f"{e.path}\0{e.kind.value}\0{e.size}\0{int(e.executable)}\0{e.target}\0".encode()
            )
        return h.hexdigest()


def _ignorable(name: str) -> bool:
    """Whether an entry of this name may be skipped (an ignored folder or file, by name alone)."""
    return (
        name in IGNORED_DIRS
        or name in IGNORED_FILES
        or name.endswith(IGNORED_SUFFIXES)
        or name.endswith(".egg-info")
    )


def _refuse_limit(
    root: Path, what: str, figure: str, limit: str, hint: str = ""
) -> BuildRefusedError:
    return BuildRefusedError(
        f"bot folder {root.name!r} is refused: {what}: {figure}, the limit is {limit}"
        + (f" ({hint})" if hint else "")
    )


def _resolve(kinds: dict[str, Entry], cur: list[str], target: str, hops: int) -> list[str] | None:
    """Where ``target`` leads from folder ``cur`` inside the scanned tree, following the tree's own
    symlinks as the kernel would in the image; None when it leaves the folder (or loops)."""
    if not target or target.startswith("/") or hops > 40:
        return None
    for comp in target.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if not cur:
                return None
            cur = cur[:-1]
            continue
        entry = kinds.get("/".join([*cur, comp]))
        if entry is not None and entry.kind is Kind.SYMLINK:
            resolved = _resolve(kinds, cur, entry.target, hops + 1)
            if resolved is None:
                return None
            cur = resolved
        else:
            cur = [*cur, comp]
    return cur


def link_stays_inside(kinds: dict[str, Entry], link: Entry) -> bool:
    """Whether the symlink ``link`` of a tree (``kinds``: every entry by path) leads to a place
    inside it, following the tree's own links as the kernel would. The one rule for a bot folder
    on disk and for an uploaded archive (take5_arena/referee/archive.py)."""
    return _resolve(kinds, link.path.split("/")[:-1], link.target, 0) is not None


def _check_links(top: Path, entries: list[Entry]) -> None:
    kinds = {e.path: e for e in entries}
    for e in entries:
        if e.kind is Kind.SYMLINK and not link_stays_inside(kinds, e):
            raise BuildRefusedError(
                f"bot folder {top.name!r}: symlink {e.path!r} points outside the bot folder; "
                "copy the file into the folder instead"
            )


def scan(root: str | os.PathLike[str], limits: FolderLimits = FolderLimits()) -> BotFolder:
    """Walk ``root`` without following symlinks and check every limit; see the module docstring.

    Raises :class:`BuildRefusedError` naming the limit, the folder's figure and the limit, or the
    offending entry (a symlink pointing outside, a fifo...)."""
    top = Path(root)
    try:
        st = os.lstat(top)
    except OSError as exc:
        raise BuildRefusedError(f"bot folder {top} cannot be read: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise BuildRefusedError(f"bot folder {top} is a symlink: give the folder itself")
    if not stat.S_ISDIR(st.st_mode):
        raise BuildRefusedError(f"bot folder {top} is not a folder")
    entries: list[Entry] = []
    total = 0

    def walk(dirpath: str, rel: str, depth: int) -> None:
        nonlocal total
        try:
            with os.scandir(dirpath) as it:
                items = list(it)
        except OSError as exc:
            raise BuildRefusedError(
                f"bot folder {top.name!r}: cannot read {rel or '.'}: {exc.strerror}"
            ) from None
        counted = sum(1 for x in items if not _ignorable(x.name))  # at most what will be kept
        if len(entries) + counted > limits.max_files:
            raise _refuse_limit(
                top, "too many files", f"more than {limits.max_files:,}", f"{limits.max_files:,}"
            )
        for item in sorted(items, key=lambda x: x.name):
            name = item.name
            path = f"{rel}/{name}" if rel else name
            st = item.stat(follow_symlinks=False)
            mode = st.st_mode
            if stat.S_ISDIR(mode) and (name in IGNORED_DIRS or name.endswith(".egg-info")):
                continue
            if stat.S_ISREG(mode) and (name in IGNORED_FILES or name.endswith(IGNORED_SUFFIXES)):
                continue
            if len(entries) >= limits.max_files:
                raise _refuse_limit(
                    top,
                    "too many files",
                    f"more than {limits.max_files:,}",
                    f"{limits.max_files:,}",
                )
            try:
                encoded = path.encode("utf-8")
            except UnicodeEncodeError:
                shown = path.encode("utf-8", "backslashreplace").decode()
                raise BuildRefusedError(
                    f"bot folder {top.name!r}: a file name is not valid UTF-8: {shown!r}"
                ) from None
            if len(encoded) > limits.max_path:
                raise _refuse_limit(
                    top,
                    f"path too long ({path[:60]!r}...)",
                    f"{len(encoded)} bytes",
                    f"{limits.max_path} bytes",
                )
            if stat.S_ISLNK(mode):
                target = os.readlink(item.path)
                if not target or target.startswith("/") or "\0" in target:
                    raise BuildRefusedError(
                        f"bot folder {top.name!r}: symlink {path!r} points outside the bot folder; "
                        "copy the file into the folder instead"
                    )
                entries.append(Entry(path, Kind.SYMLINK, target=target))
            elif stat.S_ISDIR(mode):
                if depth + 1 > limits.max_depth:
                    raise _refuse_limit(
                        top,
                        f"folders nested too deep at {path[:60]!r}",
                        f"more than {limits.max_depth} levels",
                        f"{limits.max_depth}",
                    )
                entries.append(Entry(path, Kind.DIR))
                walk(item.path, path, depth + 1)
            elif stat.S_ISREG(mode):
                total += st.st_size
                if total > limits.max_bytes:
                    raise _refuse_limit(
                        top,
                        "too large",
                        f"more than {_mb(limits.max_bytes)}",
                        _mb(limits.max_bytes),
                    )
                entries.append(
                    Entry(path, Kind.FILE, size=st.st_size, executable=bool(mode & 0o111))
                )
            else:
                raise BuildRefusedError(
                    f"bot folder {top.name!r}: {path!r} is not a regular file, folder or symlink "
                    "(fifos, sockets and devices are refused)"
                )

    walk(os.fspath(top), "", 0)
    _check_links(top, entries)
    return BotFolder(top, tuple(entries), total)


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB"


class ContextWriter:
    """A build context (an uncompressed tar) being written to a spooled temporary file.

    >>> with ContextWriter() as ctx:
    ...     ctx.add_folder(scan(folder), "bot")
    ...     ctx.add_bytes("Dockerfile", b"FROM take5/python:3.11\\n")
    ...     client.api.build(fileobj=ctx.fileobj(), custom_context=True, ...)
    """

    def __init__(self) -> None:
        # Both are owned by this object and closed by close() (SIM115: no `with` here on purpose).
        self._file: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115
        self._tar = tarfile.open(fileobj=self._file, mode="w", format=tarfile.PAX_FORMAT)  # noqa: SIM115
        self._dirs: set[str] = set()
        self._names: set[str] = set()
        self.captured: dict[str, bytes] = {}
        """Bytes of the control files added (by their name in the context)."""
        self.hash = hashlib.sha256()
        """sha256 over every name, mode and byte written, in order: the context's identity."""

    # -- adding ----------------------------------------------------------------------------

    def _info(self, name: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
        if name in self._names:
            raise BuildRefusedError(f"{name!r} is reserved in the build context")
        self._names.add(name)
        info = tarfile.TarInfo(name)
        info.type = kind
        info.mode = mode
        info.size = size
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mtime = 0
        self.hash.update(f"{name}\0{kind!r}\0{mode:o}\0{size}\0".encode())
        return info

    def add_dir(self, name: str) -> None:
        """Add a directory (and its parents) unless already there."""
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d and d not in self._dirs:
                self._dirs.add(d)
                self._tar.addfile(self._info(d, tarfile.DIRTYPE, 0o755))

    def _parent(self, name: str) -> None:
        if "/" in name:
            self.add_dir(name.rsplit("/", 1)[0])

    def add_bytes(self, name: str, data: bytes, *, executable: bool = False) -> None:
        self._parent(name)
        info = self._info(name, tarfile.REGTYPE, 0o755 if executable else 0o644, len(data))
        self.hash.update(data)
        self._tar.addfile(info, io.BytesIO(data))
        self._capture(name, data)

    def _capture(self, name: str, data: bytes) -> None:
        if name.rsplit("/", 1)[-1] in CONTROL_FILES and len(data) <= MAX_CONTROL_BYTES:
            self.captured[name] = data

    def add_folder(self, folder: BotFolder, prefix: str = "") -> None:
        """Copy a scanned bot folder under ``prefix`` (``""``: the context's root), never following
        a symlink: each file is opened relative to its parent's descriptor with O_NOFOLLOW."""
        pre = prefix.strip("/")
        if pre:
            self.add_dir(pre)
        dirfds: dict[str, int] = {}
        try:
            try:
                dirfds[""] = os.open(folder.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            except OSError:
                raise _changed(folder, ".") from None
            for e in folder.entries:
                name = f"{pre}/{e.path}" if pre else e.path
                parent, _, base = e.path.rpartition("/")
                pfd = dirfds.get(parent)
                if pfd is None:  # a parent that was not scanned as a folder: changed under us
                    raise _changed(folder, e.path)
                if e.kind is Kind.DIR:
                    try:
                        dirfds[e.path] = os.open(
                            base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=pfd
                        )
                    except OSError:
                        raise _changed(folder, e.path) from None
                    self.add_dir(name)
                elif e.kind is Kind.SYMLINK:
                    self._parent(name)
                    info = self._info(name, tarfile.SYMTYPE, 0o777)
                    info.linkname = e.target  # the text scanned and checked, not a new readlink
                    self.hash.update(e.target.encode())
                    self._tar.addfile(info)
                else:
                    self._add_file(folder, e, name, pfd, base)
        finally:
            for fd in dirfds.values():
                os.close(fd)

    def _add_file(self, folder: BotFolder, e: Entry, name: str, pfd: int, base: str) -> None:
        try:
            fd = os.open(
                base, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=pfd
            )
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOENT, errno.ENXIO):
                raise _changed(folder, e.path) from None
            raise BuildRefusedError(
                f"bot folder {folder.root.name!r}: cannot read {e.path!r}: {exc.strerror}"
            ) from None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size != e.size:
                raise _changed(folder, e.path)
            self._parent(name)
            info = self._info(name, tarfile.REGTYPE, 0o755 if e.executable else 0o644, e.size)
            data = _Counted(fh, e.size, self.hash)
            self._tar.addfile(info, data)
            if data.short:
                raise _changed(folder, e.path)
            if name.rsplit("/", 1)[-1] in CONTROL_FILES and e.size <= MAX_CONTROL_BYTES:
                self.captured[name] = bytes(data.kept)

    def add_tree(self, src: str | os.PathLike[str], prefix: str, limits: FolderLimits) -> None:
        """Add a folder the referee made or owns (the SDK, installed wheels), by the same rules."""
        self.add_folder(scan(src, limits), prefix)

    # -- finishing -------------------------------------------------------------------------

    def fileobj(self) -> IO[bytes]:
        """Close the tar and return the context, rewound, for the engine."""
        self._tar.close()
        self._file.seek(0)
        return self._file

    def close(self) -> None:
        self._tar.close()
        self._file.close()

    def __enter__(self) -> ContextWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Counted:
    """A reader that hashes what passes and never yields more than ``size`` bytes."""

    def __init__(self, fh: IO[bytes], size: int, h: hashlib._Hash) -> None:
        self.fh, self.left, self.h = fh, size, h
        self.kept = bytearray()
        self.keep = size <= MAX_CONTROL_BYTES
        self.short = False

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(n) if n > 0 else b""
        if len(data) < n:
            self.short = True
            data += b"\0" * (
                n - len(data)
            )  # tarfile needs the full size; the build is refused after
        self.left -= len(data)
        self.h.update(data)
        if self.keep:
            self.kept += data
        return data


def _changed(folder: BotFolder, rel: str) -> BuildRefusedError:
    return BuildRefusedError(
        f"bot folder {folder.root.name!r}: {rel!r} changed while it was being copied "
        "(or is not a plain file any more); try again with a folder nobody is changing"
    )


def paths(entries: Iterable[Entry]) -> list[str]:
    return [e.path for e in entries]
