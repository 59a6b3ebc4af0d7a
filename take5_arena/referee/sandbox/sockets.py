"""The bot's socket folder on the host, and how the referee reaches the socket in it safely.

Each container gets a folder of its own, ``/tmp/t5-RUN/cNNNN`` (short: a Unix socket path has at
most 107 bytes), bind-mounted at /run/take5 where the bot creates ``bot.sock``. As root, the folder
is a small tmpfs (`SandboxLimits.socket_dir_size`, 64 inodes) owned by the bot's uid, so a bot
cannot fill the host's disk through it; the bot's output file lives there too. The tmpfs is mounted
with mount(2) directly (no ``mount`` process per container).

The folder is writable by the bot, so the referee never trusts a path in it twice: once the socket
appears it is opened with O_PATH|O_NOFOLLOW (`pin`) and connected through ``/proc/self/fd/N`` from
then on. Replacing the socket by a symlink to the Docker daemon's socket sends the referee nowhere.
Files the bot may have tampered with are read with O_NOFOLLOW and only if regular (`read_output`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import socket
import stat
import tempfile
from pathlib import Path

from .limits import BOT_GID, BOT_UID, SOCKET_NAME, SandboxLimits

SOCKET_BASE = Path("/tmp")
"""Where the socket roots of runs go (``/tmp/t5-RUN``)."""
OWNER_FILE = "owner"
"""In a run's socket root: the take5.owner label of the referee process that made it."""
OUTPUT_NAME = "output.log"
"""The bot's stdout and stderr, in its socket folder (when its image can redirect them)."""
MAX_SOCKET_PATH = 107

_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_BIND, _MS_SHARED = 4096, 1 << 20
_MNT_DETACH = 2
_libc = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def mount_tmpfs(path: Path, options: str, *, source: str = "take5-sock") -> bool:
    """mount -t tmpfs -o nosuid,nodev,noexec,OPTIONS SOURCE PATH; False if not allowed."""
    rc = _c().mount(
        source.encode(),
        os.fsencode(path),
        b"tmpfs",
        _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
        options.encode(),
    )
    return bool(rc == 0)


def umount(path: Path) -> None:
    """Unmount a tmpfs (lazily if it is busy); nothing if `path` is not a mount point."""
    try:
        if not os.path.ismount(path):
            return
    except OSError:
        return
    if _c().umount2(os.fsencode(path), 0) != 0:
        _c().umount2(os.fsencode(path), _MNT_DETACH)


def detach(path: Path) -> None:
    """Detach the mount on `path` at once (MNT_DETACH: it goes away when its last user does);
    nothing if `path` is not a mount point. Detaching propagates to the containers that see it."""
    try:
        if not os.path.ismount(path):
            return
    except OSError:
        return
    _c().umount2(os.fsencode(path), _MNT_DETACH)


def share_root(root: Path) -> bool:
    """Make a run's socket root a shared mount (a bind of itself), so that what is mounted under
    it later also appears in the containers that bind a folder of it with propagation (the warm
    containers' writable places, take5_arena/referee/sandbox/warm.py). True if done."""
    if root in mounts_under(root):
        return True
    if _c().mount(os.fsencode(root), os.fsencode(root), None, _MS_BIND, None) != 0:
        return False
    if _c().mount(None, os.fsencode(root), None, _MS_SHARED, None) != 0:
        _c().umount2(os.fsencode(root), _MNT_DETACH)
        return False
    return True


def mounts_under(root: Path) -> list[Path]:
    """Mount points at or under `root` in this process's mount namespace, deepest first."""
    prefix = os.fsencode(root)
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_bytes().splitlines()
    except OSError:
        return []
    for line in lines:
        point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), line.split()[4])
        if point == prefix or point.startswith(prefix + b"/"):
            found.append(Path(os.fsdecode(point)))
    return sorted(set(found), key=lambda p: len(p.parts), reverse=True)


_tmpfs_ok: bool | None = None


def can_mount_tmpfs() -> bool:
    """Whether this process may give each bot a tmpfs socket folder (root with CAP_SYS_ADMIN)."""
    global _tmpfs_ok
    if _tmpfs_ok is None:
        _tmpfs_ok = False
        if os.geteuid() == 0:
            probe = Path(tempfile.mkdtemp(prefix="t5-probe-"))
            try:
                if mount_tmpfs(probe, "size=64k"):
                    _tmpfs_ok = True
                    umount(probe)
            finally:
                shutil.rmtree(probe, ignore_errors=True)
    return _tmpfs_ok


def prepare_socket_dir(folder: Path, limits: SandboxLimits) -> bool:
    """Create a bot's socket folder (a tmpfs as root); True if a tmpfs was mounted.

    As root the folder belongs to the bot's uid with mode 0700. Otherwise it is world-writable,
    so that uid 10001 may create its socket there (and the socket must then be connectable by the
    referee's uid: the image's launcher sets umask 0)."""
    sock = folder / SOCKET_NAME
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        raise ValueError(
            f"socket path {sock} is longer than {MAX_SOCKET_PATH} bytes; use a shorter folder"
        )
    folder.mkdir(parents=True, exist_ok=True)
    mounted = False
    if os.geteuid() == 0:
        if limits.socket_dir_size and not os.path.ismount(folder) and can_mount_tmpfs():
            mounted = mount_tmpfs(
                folder,
                f"size={limits.socket_dir_size},nr_inodes=64,mode=0700,uid={BOT_UID},gid={BOT_GID}",
            )
        os.chown(folder, BOT_UID, BOT_GID)
        os.chmod(folder, 0o700)
    else:
        os.chmod(folder, 0o777)
    return mounted


def release_socket_dir(folder: Path) -> None:
    """Unmount and remove a bot's socket folder (and its run's root once empty)."""
    umount(folder)
    shutil.rmtree(folder, ignore_errors=True)


def sweep_socket_root(root: Path) -> None:
    """Unmount whatever is mounted under a run's socket root (and the root itself, when it was
    shared: `share_root`), then remove the root."""
    for point in mounts_under(root):  # os.path.ismount misses a folder bound onto itself
        _c().umount2(os.fsencode(point), _MNT_DETACH)
    shutil.rmtree(root, ignore_errors=True)


def pin(path: Path) -> int | None:
    """An O_PATH descriptor of the socket at `path`, if a socket (not a link to one) is there."""
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return None
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def accepts(fd: int) -> bool:
    """Whether the pinned socket accepts a connection (the bot's server listens)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(f"/proc/self/fd/{fd}")
        return True
    except OSError:
        return False
    finally:
        s.close()


def read_output(path: Path, limit: int | None) -> bytes:
    """The end (`limit` bytes; None: all) of a regular file the bot may have tampered with."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        start = 0 if limit is None else max(0, st.st_size - limit)
        os.lseek(fd, start, os.SEEK_SET)
        chunks, left = [], st.st_size - start
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_output_since(path: Path, offset: int, limit: int) -> tuple[bytes, int]:
    """What a bot appended to its output file since ``offset``: at most ``limit`` bytes of it (the
    first ones), and the offset of the file's end (what is over the limit is skipped, not kept for
    later: a flooding bot costs one bounded read a turn). Read like :func:`read_output`: without
    following a link, a regular file only."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b"", offset
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size <= offset:
            return b"", min(offset, st.st_size)  # truncated (by the bot): start again
        return os.pread(fd, min(limit, st.st_size - offset), offset), st.st_size
    except OSError:
        return b"", offset
    finally:
        os.close(fd)


__all__ = [
    "MAX_SOCKET_PATH",
    "OUTPUT_NAME",
    "OWNER_FILE",
    "SOCKET_BASE",
    "accepts",
    "can_mount_tmpfs",
    "detach",
    "mount_tmpfs",
    "mounts_under",
    "pin",
    "prepare_socket_dir",
    "read_output",
    "read_output_since",
    "release_socket_dir",
    "share_root",
    "sweep_socket_root",
    "umount",
]
