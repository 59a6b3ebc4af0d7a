"""Bot archives: packing a bot folder for upload, and the one place an uploaded archive becomes a
folder.

An uploaded archive is hostile. Whoever wrote it may try to write outside the folder it is unpacked
into (``../`` or absolute member names, symlinks or hard links pointing out, a link then a file
written through it), to make the referee create device nodes or FIFOs, or to exhaust the disk, the
memory or the inode table (a gzip bomb: gigabytes of zeros in a few kilobytes; a million empty
files; one huge file; paths nested thousands deep; the same name twice, the second replacing what
was checked first).

So :func:`unpack` does not use ``tarfile``'s extraction at all, nor its default filter:

* The archive must be a gzip-compressed tar (what :func:`pack` writes). It is read as a stream
  (``r|``), through a reader that counts decompressed bytes and stops at a bound, so a bomb is cut
  off while it inflates, before tarfile buffers any header of it.
* Every member goes through :func:`member_filter` (the same signature as tarfile's extraction
  filters, so it could be handed to ``extractall`` too) before anything is written: only regular
  files and directories; a relative, normalised name without ``..``, control characters or
  backslashes; bounded depth and length; no name seen before (nor a file where a directory is
  needed); the entry count and the declared sizes within :class:`ArchiveLimits`.
* Files are written by this module with ``O_CREAT | O_EXCL | O_NOFOLLOW`` into directories it made
  itself, counting the bytes actually copied against the limits as they are written, with plain
  modes (0644, or 0755 when any execute bit was set; never setuid, never the archive's owner).
* The destination must not exist; it is created, and on any error it is removed whole: a refused
  archive leaves nothing behind.

Every refusal is an :class:`ArchiveError` with a :class:`ArchiveProblem` kind and a one-line message
that names the offending member (escaped, it is the uploader's text).

:func:`pack` is the client side: a deterministic tar.gz of a bot folder (sorted, no owners, no
times) that refuses what :func:`unpack` would refuse, so an author learns it before uploading.
Symlinks that stay inside the folder and point at a file are stored as that file; a symlink that
points out of the folder, at a directory, or nowhere is refused.
"""

from __future__ import annotations

import contextlib
import enum
import gzip
import io
import os
import shutil
import stat
import tarfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from take5.text import inert

from .errors import RefereeError

#: Folders and files a packed bot leaves out (caches and version control, never needed to run).
IGNORED_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "node_modules",
        ".venv",
        "venv",
    }
)
IGNORED_SUFFIXES = (".pyc", ".pyo")
IGNORED_FILES = frozenset({".DS_Store"})


class ArchiveProblem(enum.Enum):
    """Why an archive (or a folder to pack) is refused."""

    MALFORMED = "malformed"  # not a gzip-compressed tar, truncated, corrupt
    ABSOLUTE_PATH = "absolute-path"
    PATH_ESCAPE = "path-escape"  # a '..' component
    BAD_NAME = "bad-name"  # empty, control characters, backslash, too long
    TOO_DEEP = "too-deep"
    LINK = "link"  # symlink or hard link
    SPECIAL_FILE = "special-file"  # device, FIFO, socket, ...
    DUPLICATE = "duplicate"  # the same path twice, or a file where a directory is needed
    TOO_MANY_FILES = "too-many-files"
    FILE_TOO_LARGE = "file-too-large"
    TOO_LARGE = "too-large"  # total unpacked size (or the compressed upload)
    EMPTY = "empty"


class ArchiveError(RefereeError, ValueError):
    """An archive or folder refused: ``problem`` says which rule, the message says where."""

    def __init__(self, problem: ArchiveProblem, message: str):
        self.problem = problem
        super().__init__(message)


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds on what one bot archive may unpack to. The defaults fit any reasonable bot (sources,
    a requirements file, a small model) with room to spare."""

    max_total_bytes: int = 64 * 1024 * 1024  # unpacked, all files
    max_file_bytes: int = 32 * 1024 * 1024  # one file
    max_entries: int = 2000  # files and directories
    max_depth: int = 16  # path components
    max_path_chars: int = 400
    max_archive_bytes: int = 32 * 1024 * 1024  # the compressed upload

    @property
    def max_stream_bytes(self) -> int:
        """Decompressed bytes read before giving up: the files plus generous room for headers
        (each entry has at most a few header blocks; tar pads to 10 KiB records)."""
        return self.max_total_bytes + self.max_entries * 4 * 512 + 64 * 1024


DEFAULT_LIMITS = ArchiveLimits()


def _shown(name: str) -> str:
    """A member name as it may appear in a message: escaped, shortened (it is the uploader's
    text)."""
    text = inert(name, keep_lines=False)
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _check_name(name: str, limits: ArchiveLimits) -> PurePosixPath:
    """The normalised relative path of a member, or an ArchiveError."""
    if not name or name in (".", "./"):
        raise ArchiveError(ArchiveProblem.BAD_NAME, "an archive member has an empty name")
    if len(name) > limits.max_path_chars:
        raise ArchiveError(
            ArchiveProblem.BAD_NAME,
            f"member {_shown(name)}: the path is longer than {limits.max_path_chars} characters",
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or "\\" in name:
        raise ArchiveError(
            ArchiveProblem.BAD_NAME,
            f"member {_shown(name)}: control characters or backslashes in the name",
        )
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(ArchiveProblem.ABSOLUTE_PATH, f"member {_shown(name)}: an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(ArchiveProblem.PATH_ESCAPE, f"member {_shown(name)}: a '..' in the path")
    if not parts:
        raise ArchiveError(ArchiveProblem.BAD_NAME, f"member {_shown(name)}: no name")
    if len(parts) > limits.max_depth:
        raise ArchiveError(
            ArchiveProblem.TOO_DEEP,
            f"member {_shown(name)}: nested deeper than {limits.max_depth} folders",
        )
    return PurePosixPath(*parts)


class _MemberFilter:
    """The explicit member filter: tarfile's filter signature ``(member, dest_path) -> member``,
    stateful across one archive (duplicates, counts, declared sizes). Raises ArchiveError."""

    def __init__(self, limits: ArchiveLimits):
        self.limits = limits
        self.files: set[PurePosixPath] = set()
        self.dirs: set[PurePosixPath] = set()
        self.entries = 0
        self.declared = 0

    def __call__(self, member: tarfile.TarInfo, dest_path: str) -> tarfile.TarInfo:
        path = _check_name(member.name, self.limits)
        shown = _shown(member.name)
        if member.issym() or member.islnk():
            kind = "a symbolic link" if member.issym() else "a hard link"
            raise ArchiveError(
                ArchiveProblem.LINK, f"member {shown}: {kind} (links are not accepted)"
            )
        if member.issparse() or not (member.isreg() or member.isdir()):
            what = (
                "a sparse file"
                if member.issparse()
                else "a device file"
                if member.ischr() or member.isblk()
                else "a FIFO"
                if member.isfifo()
                else "not a regular file or folder"
            )
            raise ArchiveError(ArchiveProblem.SPECIAL_FILE, f"member {shown}: {what}")
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise ArchiveError(
                ArchiveProblem.TOO_MANY_FILES,
                f"more than {self.limits.max_entries} files and folders",
            )
        if path in self.files or (member.isreg() and path in self.dirs):
            raise ArchiveError(
                ArchiveProblem.DUPLICATE, f"member {shown}: the same path appears twice"
            )
        for parent in path.parents:
            if parent in self.files:
                raise ArchiveError(
                    ArchiveProblem.DUPLICATE, f"member {shown}: a file of that name is in the way"
                )
        if member.isdir():
            self.dirs.add(path)
        else:
            if member.size > self.limits.max_file_bytes:
                raise ArchiveError(
                    ArchiveProblem.FILE_TOO_LARGE,
                    f"member {shown}: {member.size} bytes, more than {self.limits.max_file_bytes}",
                )
            self.declared += member.size
            if self.declared > self.limits.max_total_bytes:
                raise ArchiveError(
                    ArchiveProblem.TOO_LARGE,
                    f"the files add up to more than {self.limits.max_total_bytes} bytes",
                )
            self.files.add(path)
            self.dirs.update(path.parents)
        mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
        return member.replace(
            name=path.as_posix(), mode=mode, uid=0, gid=0, uname="", gname="", deep=False
        )


def member_filter(limits: ArchiveLimits = DEFAULT_LIMITS) -> _MemberFilter:
    """A fresh filter for one archive (see the module text)."""
    return _MemberFilter(limits)


class _BoundedReader(io.RawIOBase):
    """Decompressed bytes, at most ``limit`` of them: a gzip bomb ends here while it inflates."""

    def __init__(self, raw: IO[bytes], limit: int):
        self.gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self.limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        want = min(len(buffer), self.limit + 1 - self.count)
        if want <= 0:
            raise ArchiveError(
                ArchiveProblem.TOO_LARGE, f"the archive unpacks to more than {self.limit} bytes"
            )
        data = self.gz.read(want)
        self.count += len(data)
        if self.count > self.limit:
            raise ArchiveError(
                ArchiveProblem.TOO_LARGE, f"the archive unpacks to more than {self.limit} bytes"
            )
        buffer[: len(data)] = data
        return len(data)


@dataclass(frozen=True)
class Unpacked:
    folder: Path
    files: int
    bytes: int


def unpack(
    archive: str | os.PathLike[str] | BinaryIO,
    dest: str | os.PathLike[str],
    limits: ArchiveLimits = DEFAULT_LIMITS,
) -> Unpacked:
    """Unpack a gzip-compressed tar (a path or a binary file) into ``dest``, which must not exist.

    Raises :class:`ArchiveError` for anything the module text lists; ``dest`` is then removed.
    """
    dest = Path(dest)
    if isinstance(archive, (str, os.PathLike)):
        size = os.path.getsize(archive)
        if size > limits.max_archive_bytes:
            raise ArchiveError(
                ArchiveProblem.TOO_LARGE,
                f"the archive has {size} bytes, more than {limits.max_archive_bytes}",
            )
        with open(archive, "rb") as fh:
            return unpack(fh, dest, limits)
    os.mkdir(dest, 0o755)  # FileExistsError if it exists: never unpack over anything
    try:
        return _unpack_into(archive, dest, limits)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _unpack_into(raw: BinaryIO, dest: Path, limits: ArchiveLimits) -> Unpacked:
    check = member_filter(limits)
    reader = _BoundedReader(raw, limits.max_stream_bytes)
    written = files = 0
    root_fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            # closed in the finally below, which keeps the archive's own error
            tar = tarfile.open(fileobj=io.BufferedReader(reader, 64 * 1024), mode="r|")  # noqa: SIM115
        except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
            raise ArchiveError(
                ArchiveProblem.MALFORMED, f"not a gzip-compressed tar archive ({error})"
            ) from None
        try:
            for member in tar:
                member = check(member, str(dest))
                parts = member.name.split("/")
                parent_fd = _open_dirs(root_fd, parts[:-1])
                try:
                    if member.isdir():
                        _mkdir_at(parent_fd, parts[-1])
                        continue
                    source = tar.extractfile(member)
                    assert source is not None
                    fd = os.open(
                        parts[-1],
                        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                        member.mode,
                        dir_fd=parent_fd,
                    )
                    copied = 0
                    with os.fdopen(fd, "wb") as out:
                        while True:
                            chunk = source.read(256 * 1024)
                            if not chunk:
                                break
                            copied += len(chunk)
                            written += len(chunk)
                            if copied > limits.max_file_bytes or written > limits.max_total_bytes:
                                raise ArchiveError(
                                    ArchiveProblem.TOO_LARGE,
                                    f"member {_shown(member.name)}: more bytes than the limits "
                                    "allow",
                                )
                            out.write(chunk)
                    if copied != member.size:
                        raise ArchiveError(
                            ArchiveProblem.MALFORMED, f"member {_shown(member.name)}: truncated"
                        )
                    files += 1
                finally:
                    if parent_fd != root_fd:
                        os.close(parent_fd)
        except ArchiveError:
            raise
        except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
            raise ArchiveError(
                ArchiveProblem.MALFORMED, f"a corrupt or truncated archive ({error})"
            ) from None
        finally:
            # closing after an error may fail again; the error stands
            with contextlib.suppress(Exception):
                tar.close()
    finally:
        os.close(root_fd)
    if files == 0:
        raise ArchiveError(ArchiveProblem.EMPTY, "the archive holds no files")
    return Unpacked(dest, files, written)


def _mkdir_at(parent_fd: int, name: str) -> None:
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    except FileExistsError:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            raise ArchiveError(
                ArchiveProblem.DUPLICATE, f"{_shown(name)}: a file of that name is in the way"
            ) from None


def _open_dirs(root_fd: int, parts: list[str]) -> int:
    """The directory ``parts`` under the root, created as needed, opened without following links."""
    fd = root_fd
    for part in parts:
        _mkdir_at(fd, part)
        nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        if fd != root_fd:
            os.close(fd)
        fd = nxt
    return fd


# ------------------------------------------------------------------------------------------------
# Packing (the author's side)


def _walk(folder: Path) -> Iterable[tuple[str, Path]]:
    """(archive name, path) of every file to pack, sorted; directories are implied."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if d not in IGNORED_DIRS and not d.endswith(".egg-info")
        )
        here = Path(dirpath)
        for d in dirnames:
            if (here / d).is_symlink():
                yield (here / d).relative_to(folder).as_posix(), here / d
        for name in sorted(filenames):
            if name in IGNORED_FILES or name.endswith(IGNORED_SUFFIXES):
                continue
            yield (here / name).relative_to(folder).as_posix(), here / name


def pack(
    folder: str | os.PathLike[str], out: BinaryIO, limits: ArchiveLimits = DEFAULT_LIMITS
) -> int:
    """Write a deterministic tar.gz of the bot ``folder`` to ``out``; return the number of files.

    Refuses (ArchiveError) what :func:`unpack` would refuse, and symlinks that leave the folder.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise ArchiveError(ArchiveProblem.MALFORMED, f"{folder}: not a folder")
    entries = sorted(_walk(root))
    if not entries:
        raise ArchiveError(ArchiveProblem.EMPTY, f"{folder}: no files to submit")
    if len(entries) > limits.max_entries:
        raise ArchiveError(
            ArchiveProblem.TOO_MANY_FILES, f"{folder}: more than {limits.max_entries} files"
        )
    total = 0
    gz = gzip.GzipFile(fileobj=out, mode="wb", mtime=0)
    with tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for name, path in entries:
            _check_name(name, limits)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = path.resolve()
                if not target.is_relative_to(root):
                    raise ArchiveError(
                        ArchiveProblem.LINK, f"{name}: a symbolic link pointing out of the folder"
                    )
                if not target.is_file():
                    raise ArchiveError(
                        ArchiveProblem.LINK, f"{name}: a symbolic link to a folder or to nothing"
                    )
                st = target.stat()
                path = target
            if not stat.S_ISREG(st.st_mode):
                raise ArchiveError(ArchiveProblem.SPECIAL_FILE, f"{name}: not a regular file")
            if st.st_size > limits.max_file_bytes:
                raise ArchiveError(
                    ArchiveProblem.FILE_TOO_LARGE,
                    f"{name}: {st.st_size} bytes, more than {limits.max_file_bytes}",
                )
            total += st.st_size
            if total > limits.max_total_bytes:
                raise ArchiveError(
                    ArchiveProblem.TOO_LARGE,
                    f"{folder}: the files add up to more than {limits.max_total_bytes} bytes",
                )
            info = tarfile.TarInfo(name)
            info.size = st.st_size
            info.mode = 0o755 if st.st_mode & 0o111 else 0o644
            info.mtime = 0
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    gz.close()
    return len(entries)


__all__ = [
    "DEFAULT_LIMITS",
    "IGNORED_DIRS",
    "IGNORED_FILES",
    "IGNORED_SUFFIXES",
    "ArchiveError",
    "ArchiveLimits",
    "ArchiveProblem",
    "Unpacked",
    "member_filter",
    "pack",
    "unpack",
]
