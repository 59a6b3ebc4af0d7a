"""Whether a built bot image's own command can start, checked when the image is built.

A bot image says how its bot starts (ENTRYPOINT and CMD); the launcher runs exactly that, as uid
10001. A command that cannot start (none at all, a program that is not in the image, a folder,
a file uid 10001 may not execute, a script whose ``#!`` interpreter or a binary whose dynamic
loader is missing) would otherwise be found only when a game starts the bot, and be charged to
it as a crash in a rated game. Checked here instead, the bot is refused when it is built or
validated, in one line that says what to change (`BuildRefusedError`: `referee build` and
`referee submit` exit 3, `referee match` rejects it before play).

Nothing of the image runs: the files are read through the engine's archive API from a container
created with the sandbox flags and never started (`containers.unstarted`). The program is found
as the engine finds it: a name without a slash on the image's ``PATH``, a relative path from its
working directory, symbolic links followed inside the image.
"""

from __future__ import annotations

import io
import posixpath
import secrets
import struct
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import containers
from .build_errors import BuildRefusedError
from .errors import ContainerStartError
from .limits import BOT_GID, BOT_UID, SandboxLimits, writable_places

if TYPE_CHECKING:
    import docker

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH the engine searches when an image sets none."""
HEAD_BYTES = 4096
"""Bytes of the program read: its ``#!`` line, or an ELF binary's program headers."""
MAX_LINKS = 16
HINT = 'give it as a JSON list naming a program in the image, e.g. CMD ["/bot/run"]'


class _Stream(io.RawIOBase):
    """A readable file over the chunks of the engine's archive stream."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.left:
            self.left = next(self.chunks, b"")
            if not self.left:
                return 0
        n = min(len(buffer), len(self.left))
        buffer[:n] = self.left[:n]
        self.left = self.left[n:]
        return n


def _entry(
    client: docker.DockerClient, cid: str, path: str
) -> tuple[tarfile.TarInfo, bytes] | None:
    """The archive entry of `path` in the container and its first bytes; None if there is none."""
    import docker

    try:
        chunks, _ = client.api.get_archive(cid, path, chunk_size=HEAD_BYTES)
    except docker.errors.NotFound:
        return None
    except docker.errors.APIError as error:  # its words name host paths: not shown
        why = "too many symbolic links" if "too many links" in str(error) else "it cannot be read"
        raise BuildRefusedError(f"the image's command {path}: {why}") from None
    with tarfile.open(fileobj=io.BufferedReader(_Stream(iter(chunks))), mode="r|") as tar:
        info = tar.next()
        if info is None:
            return None
        head = b""
        if info.isreg():
            member = tar.extractfile(info)
            head = member.read(HEAD_BYTES) if member is not None else b""
        return info, head


def _executable(info: tarfile.TarInfo) -> bool:
    """Whether uid 10001 (gid 10001, no other groups) may execute the file."""
    if info.uid == BOT_UID:
        return bool(info.mode & 0o100)
    if info.gid == BOT_GID:
        return bool(info.mode & 0o010)
    return bool(info.mode & 0o001)


def _elf_interpreter(head: bytes) -> str | None:
    """The dynamic loader named by a 64- or 32-bit ELF binary's PT_INTERP (None: static, or not
    within the bytes read)."""
    if head[:4] != b"\x7fELF" or len(head) < 52:
        return None
    wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
    if wide:
        (phoff,) = struct.unpack_from(order + "Q", head, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
    else:
        (phoff,) = struct.unpack_from(order + "I", head, 28)
        phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
    for n in range(phnum):
        at = phoff + n * phentsize
        if at + phentsize > len(head):
            return None
        if struct.unpack_from(order + "I", head, at)[0] != 3:  # PT_INTERP
            continue
        offset, size = (
            struct.unpack_from(order + "QQQQ", head, at + 8)[0::3]
            if wide
            else struct.unpack_from(order + "IIIII", head, at + 4)[0::4]
        )
        text = head[offset : offset + size].split(b"\0", 1)[0]
        return text.decode("utf-8", "replace") if text else None
    return None


def _tmpfs_places(config: Mapping[str, Any]) -> list[str]:
    """The folders the sandbox mounts an empty tmpfs on (/tmp, /dev/shm, /run/take5, VOLUMEs)."""
    volumes = sorted(str(v) for v in (config.get("Volumes") or {}))
    return sorted(writable_places(volumes, SandboxLimits()))


def _find(
    client: docker.DockerClient, cid: str, path: str
) -> tuple[str, tarfile.TarInfo, bytes] | None:
    """`path` with its links followed: (the final path, its entry, its first bytes)."""
    for _ in range(MAX_LINKS):
        got = _entry(client, cid, path)
        if got is None:
            return None
        info, head = got
        if not info.issym():
            return path, info, head
        path = posixpath.normpath(posixpath.join(posixpath.dirname(path), info.linkname))
    raise BuildRefusedError(f"the image's command {path}: too many symbolic links")


def _program(
    client: docker.DockerClient, cid: str, name: str, what: str, config: Mapping[str, Any]
) -> tuple[str, tarfile.TarInfo, bytes]:
    """Find and check one program of the command (the command's, or an interpreter)."""
    env = dict(str(item).partition("=")[::2] for item in config.get("Env") or ())
    if "/" in name:
        tries = [posixpath.join(str(config.get("WorkingDir") or "/"), name)]
    else:
        tries = [posixpath.join(d or ".", name) for d in env.get("PATH", DEFAULT_PATH).split(":")]
    for path in tries:
        found = _find(client, cid, path)
        if found is None:
            continue
        final, info, head = found
        for place in _tmpfs_places(config):
            if final == place or final.startswith(place.rstrip("/") + "/"):
                raise BuildRefusedError(
                    f"{what} {name!r} ({final}) is under {place}, which is an empty tmpfs when "
                    "the bot runs: put it elsewhere in the image, e.g. /bot"
                )
        if info.isdir():
            raise BuildRefusedError(f"{what} {name!r} is a folder, not a program: {HINT}")
        if not info.isreg():
            raise BuildRefusedError(f"{what} {name!r} is not a regular file: {HINT}")
        if not _executable(info):
            raise BuildRefusedError(
                f"{what} {name!r} ({final}) may not be executed by the bot's user (uid "
                f"{BOT_UID}): make it executable for everyone (chmod 755)"
            )
        return final, info, head
    where = "the image's PATH" if "/" not in name else "the image"
    raise BuildRefusedError(f"{what} {name[:200]!r} is not in {where}: {HINT}")


def check_command(client: docker.DockerClient, image: str, config: Mapping[str, Any]) -> None:
    """Refuse (`BuildRefusedError`, one line) an image whose command cannot start as the launcher
    runs it; `config` is the image's Config from its inspection."""
    argv: Sequence[str] = [*(config.get("Entrypoint") or ()), *(config.get("Cmd") or ())]
    if not argv or not str(argv[0]).strip():
        raise BuildRefusedError(
            f"the image has no command (CMD or ENTRYPOINT) to start the bot: {HINT}"
        )
    try:
        with containers.unstarted(client, image, run_id=f"check-{secrets.token_hex(4)}") as box:
            final, _, head = _program(client, box.id, str(argv[0]), "the image's command", config)
            if head.startswith(b"#!"):
                line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
                if not line:
                    raise BuildRefusedError(f"{final} starts with #! but names no interpreter")
                _program(client, box.id, line[0], f"the interpreter of {final}", config)
            loader = _elf_interpreter(head)
            if loader is not None and _find(client, box.id, loader) is None:
                raise BuildRefusedError(
                    f"{final} needs the dynamic loader {loader}, which is not in the image: "
                    "build it statically, or on a base that has it"
                )
    except ContainerStartError as error:
        raise BuildRefusedError(f"the image's command cannot be checked: {error}") from None


__all__ = ["DEFAULT_PATH", "HEAD_BYTES", "HINT", "MAX_LINKS", "check_command"]
