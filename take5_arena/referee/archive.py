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
  files, directories and symbolic links; a relative, normalised name without ``..``, control
  characters or backslashes; bounded depth and length; no name seen before (nor a file or a link
  where a directory is needed); the entry count and the declared sizes within
  :class:`ArchiveLimits`. The folder itself (``./``, what ``tar czf bot.tar.gz -C FOLDER .``
  writes first) is skipped: the destination is that folder.
* A symbolic link is accepted when it leads inside the folder, following the archive's own links
  as the kernel would (the rule of a bot folder on disk, take5_arena/referee/sandbox/context.py's
  ``link_stays_inside``: npm's ``node_modules/.bin`` links). Links are checked once the whole
  archive is read (a link may name a member that comes later) and only then created, after every
  file is written: no file is ever written through a link, and a member under a link's name is
  refused as a file in the way. Hard links are refused (``tar --hard-dereference`` stores copies).
* Files are written by this module with ``O_CREAT | O_EXCL | O_NOFOLLOW`` into directories it made
  itself, counting the bytes actually copied against the limits as they are written, with plain
  modes (0644, or 0755 when any execute bit was set; never setuid, never the archive's owner).
* The destination must not exist; it is created, and on any error it is removed whole: a refused
  archive leaves nothing behind.

Every refusal is an :class:`ArchiveError` with a :class:`ArchiveProblem` kind and a one-line message
that names the offending member (escaped, it is the uploader's text) and says what to do instead.
:data:`RECIPE` is the one command the pages and the docs give for making an archive.

:func:`pack` is the client side: a deterministic tar.gz of a bot folder (sorted, no owners, no
times) that refuses what :func:`unpack` would refuse, so an author learns it before uploading. What
it takes from the folder is the build's own scan (take5_arena/referee/sandbox/context.py), the one
listing of a bot folder: a remote ``referee submit --server`` sends what a local one validates.
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
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from take5.text import inert

from .errors import RefereeError
from .sandbox.build_errors import BuildRefusedError
from .sandbox.context import Entry, Kind, link_stays_inside, scan

#: How an author makes an archive of a bot folder by hand (the web page's upload form; docs/authors/
#: arena.md, "Uploading an archive"). ``referee submit --server FOLDER`` packs the folder itself.
RECIPE = "tar czf bot.tar.gz -C FOLDER ."

_REMAKE = f"make the archive with `{RECIPE}`"


class ArchiveProblem(enum.Enum):
    """Why an archive (or a folder to pack) is refused."""

    MALFORMED = "malformed"  # not a gzip-compressed tar, truncated, corrupt
    ABSOLUTE_PATH = "absolute-path"
    PATH_ESCAPE = "path-escape"  # a '..' component
    BAD_NAME = "bad-name"  # empty, control characters, backslash, too long
    TOO_DEEP = "too-deep"
    LINK = "link"  # a symlink leading out of the folder, or a hard link
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
    max_entries: int = 10_000  # files and directories (a bot folder's limit: FolderLimits)
    max_depth: int = 32  # path components (likewise)
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


def _check_name(name: str, limits: ArchiveLimits) -> PurePosixPath | None:
    """The normalised relative path of a member, None for the folder itself (``.``, ``./``), or an
    ArchiveError."""
    if not name:
        raise ArchiveError(
            ArchiveProblem.BAD_NAME, f"an archive member has an empty name; {_REMAKE}"
        )
    if len(name) > limits.max_path_chars:
        raise ArchiveError(
            ArchiveProblem.BAD_NAME,
            f"member {_shown(name)}: the path is longer than {limits.max_path_chars} characters",
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or "\\" in name:
        raise ArchiveError(
            ArchiveProblem.BAD_NAME,
            f"member {_shown(name)}: control characters or backslashes in the name; "
            "rename the file",
        )
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(
            ArchiveProblem.ABSOLUTE_PATH, f"member {_shown(name)}: an absolute path; {_REMAKE}"
        )
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(
            ArchiveProblem.PATH_ESCAPE, f"member {_shown(name)}: a '..' in the path; {_REMAKE}"
        )
    if not parts:
        return None
    if len(parts) > limits.max_depth:
        raise ArchiveError(
            ArchiveProblem.TOO_DEEP,
            f"member {_shown(name)}: nested deeper than {limits.max_depth} folders",
        )
    return PurePosixPath(*parts)


class _MemberFilter:
    """The explicit member filter: tarfile's filter signature ``(member, dest_path) -> member``
    (None for the folder itself, which is skipped), stateful across one archive (duplicates,
    counts, declared sizes, the links to check in :meth:`finish`). Raises ArchiveError."""

    def __init__(self, limits: ArchiveLimits):
        self.limits = limits
        self.files: set[PurePosixPath] = set()  # regular files and links: nothing goes under them
        self.dirs: set[PurePosixPath] = set()
        self.links: dict[PurePosixPath, str] = {}
        self.entries = 0
        self.declared = 0

    def __call__(self, member: tarfile.TarInfo, dest_path: str) -> tarfile.TarInfo | None:
        path = _check_name(member.name, self.limits)
        shown = _shown(member.name)
        if path is None:
            if not member.isdir():
                raise ArchiveError(
                    ArchiveProblem.BAD_NAME, f"member {shown} is not a folder; {_REMAKE}"
                )
            return None
        if member.islnk():
            raise ArchiveError(
                ArchiveProblem.LINK,
                f"member {shown}: a hard link; pack with `tar --hard-dereference` to store copies",
            )
        if member.issym():
            self._check_target(member, shown)
        elif member.issparse() or not (member.isreg() or member.isdir()):
            what = (
                "a sparse file"
                if member.issparse()
                else "a device file"
                if member.ischr() or member.isblk()
                else "a FIFO"
                if member.isfifo()
                else "not a regular file or folder"
            )
            raise ArchiveError(
                ArchiveProblem.SPECIAL_FILE,
                f"member {shown}: {what}; only files, folders and links inside the folder "
                "are accepted: remove it from the folder",
            )
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise ArchiveError(
                ArchiveProblem.TOO_MANY_FILES,
                f"more than {self.limits.max_entries} files and folders; leave out what the bot "
                "does not need at game time",
            )
        if path in self.files or (not member.isdir() and path in self.dirs):
            raise ArchiveError(
                ArchiveProblem.DUPLICATE,
                f"member {shown}: the same path appears twice; {_REMAKE}",
            )
        for parent in path.parents:
            if parent in self.files:
                raise ArchiveError(
                    ArchiveProblem.DUPLICATE,
                    f"member {shown}: a file or a link of that name is in the way; {_REMAKE}",
                )
        if member.isdir():
            self.dirs.add(path)
        else:
            if member.isreg():
                self._declare(member, shown)
            else:
                self.links[path] = member.linkname
            self.files.add(path)
            self.dirs.update(path.parents)
        mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
        return member.replace(
            name=path.as_posix(), mode=mode, uid=0, gid=0, uname="", gname="", deep=False
        )

    def _check_target(self, member: tarfile.TarInfo, shown: str) -> None:
        """A symlink's target text, on its own: relative, printable, bounded. Where it leads is
        checked by :meth:`finish`, once every member is known."""
        target = member.linkname
        if (
            not target
            or len(target) > self.limits.max_path_chars
            or any(ord(c) < 32 or ord(c) == 127 for c in target)
            or "\\" in target
        ):
            raise ArchiveError(
                ArchiveProblem.LINK,
                f"member {shown}: a symbolic link with an empty or unreadable target; "
                "replace it by the file",
            )
        if target.startswith("/"):
            raise ArchiveError(
                ArchiveProblem.LINK,
                f"member {shown}: a symbolic link to the absolute path {_shown(target)}; "
                "copy the file into the folder instead",
            )

    def _declare(self, member: tarfile.TarInfo, shown: str) -> None:
        if member.size > self.limits.max_file_bytes:
            raise ArchiveError(
                ArchiveProblem.FILE_TOO_LARGE,
                f"member {shown}: {member.size} bytes, more than {self.limits.max_file_bytes}; "
                "leave it out or make it smaller",
            )
        self.declared += member.size
        if self.declared > self.limits.max_total_bytes:
            raise ArchiveError(
                ArchiveProblem.TOO_LARGE,
                f"the files add up to more than {self.limits.max_total_bytes} bytes; leave out "
                "what the bot does not need at game time",
            )

    def finish(self) -> None:
        """Check every link against the whole archive: each must lead inside the folder."""
        kinds = {p.as_posix(): Entry(p.as_posix(), Kind.DIR) for p in self.dirs}
        kinds.update((p.as_posix(), Entry(p.as_posix(), Kind.FILE)) for p in self.files)
        links = [Entry(p.as_posix(), Kind.SYMLINK, target=t) for p, t in self.links.items()]
        kinds.update((e.path, e) for e in links)
        for link in links:
            if not link_stays_inside(kinds, link):
                raise ArchiveError(
                    ArchiveProblem.LINK,
                    f"member {_shown(link.path)}: a symbolic link to {_shown(link.target)}, "
                    "outside the folder; copy the file into the folder instead",
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
            links: list[tarfile.TarInfo] = []
            for item in tar:
                member = check(item, str(dest))
                if member is None:
                    continue  # the folder itself
                if member.issym():
                    links.append(member)  # created below, once every file is written
                    continue
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
            check.finish()
            for link in links:
                _symlink_at(root_fd, link.name.split("/"), link.linkname)
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


def _symlink_at(root_fd: int, parts: list[str], target: str) -> None:
    """Create one checked link, in directories opened without following links."""
    parent_fd = _open_dirs(root_fd, parts[:-1])
    try:
        os.symlink(target, parts[-1], dir_fd=parent_fd)
    finally:
        if parent_fd != root_fd:
            os.close(parent_fd)


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


def _listing(folder: Path) -> list[tuple[str, Path]]:
    """(archive name, path) of every file to pack, sorted: the build's own scan of the folder
    (take5_arena/referee/sandbox/context.py), so that a bot sent to an arena holds exactly what
    ``referee submit -t`` and ``referee build`` take from the same folder (``node_modules`` too);
    directories are implied."""
    try:
        scanned = scan(folder)
    except BuildRefusedError as error:
        line = str(error).splitlines()[0]
        problem = (
            ArchiveProblem.SPECIAL_FILE
            if "not a regular file" in line
            else ArchiveProblem.LINK
            if "symlink" in line
            else ArchiveProblem.TOO_LARGE
        )
        raise ArchiveError(problem, line) from None
    return sorted((e.path, folder / e.path) for e in scanned.entries if e.kind is not Kind.DIR)


def pack(
    folder: str | os.PathLike[str], out: BinaryIO, limits: ArchiveLimits = DEFAULT_LIMITS
) -> int:
    """Write a deterministic tar.gz of the bot ``folder`` to ``out``; return the number of files.

    Refuses (ArchiveError) what :func:`unpack` would refuse, and symlinks that leave the folder.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise ArchiveError(ArchiveProblem.MALFORMED, f"{folder}: not a folder")
    entries = _listing(root)
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
    "RECIPE",
    "ArchiveError",
    "ArchiveLimits",
    "ArchiveProblem",
    "Unpacked",
    "member_filter",
    "pack",
    "unpack",
]
