"""`SandboxLimits`, the resources of one bot container, as plain data: a tournament's settings hold
them (take5_arena/referee/tournament/plan/settings.py), and the plan layer imports nothing of the
sandbox that plays them (tests/test_architecture.py). take5_arena/referee/sandbox/limits.py, which
turns them into a container's flags, re-exports it.
"""

from __future__ import annotations

import dataclasses
import re

from . import defaults

_SIZE = re.compile(r"\d+[bkmg]?")


@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    """The resources of one bot container. Sizes are Docker's: ``256m``, ``1g``, ``64k``."""

    memory: str = defaults.MEMORY
    """Memory limit, also the memory+swap limit: no swap."""
    cpus: float = defaults.CPUS
    pids: int = defaults.PIDS
    tmpfs: str = defaults.TMPFS
    """Size of /tmp (noexec), of /dev/shm and of each tmpfs replacing a declared VOLUME."""
    nofile: int = 1024
    log_max_size: str = "1m"
    """The bot's output kept at most: Docker's json-file log, or the output file in its socket
    tmpfs."""
    socket_dir_size: str | None = "256k"
    """tmpfs on the host socket folder (as root); None: a plain folder."""
    runtime: str | None = defaults.RUNTIME
    """An OCI runtime registered with the engine instead of runc (``runsc``: gVisor); the
    default is ``$TAKE5_RUNTIME``, else the engine's own."""

    def __post_init__(self) -> None:
        for field in ("memory", "tmpfs", "log_max_size"):
            if not _SIZE.fullmatch(str(getattr(self, field)).lower()):
                raise ValueError(
                    f"SandboxLimits.{field}={getattr(self, field)!r}: expected a size like '256m'"
                )
        if self.socket_dir_size is not None and not _SIZE.fullmatch(self.socket_dir_size.lower()):
            raise ValueError(
                f"SandboxLimits.socket_dir_size={self.socket_dir_size!r}: expected a size like "
                "'256k'"
            )
        if not self.cpus > 0:
            raise ValueError("SandboxLimits.cpus must be > 0")
        if self.pids < 8:
            raise ValueError("SandboxLimits.pids must be >= 8 (a bot runtime needs a few threads)")
        if self.nofile < 16:
            raise ValueError("SandboxLimits.nofile must be >= 16")
        if self.runtime is not None and not re.fullmatch(
            r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", self.runtime
        ):
            raise ValueError(f"SandboxLimits.runtime={self.runtime!r}: not a runtime name")


__all__ = ["SandboxLimits"]
