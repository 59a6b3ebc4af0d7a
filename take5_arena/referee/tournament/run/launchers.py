"""The Docker launchers of this process: one per set of sandbox limits, base image and bot memory
(images built once, one events stream), made when the first table that plays in Docker asks for
one and closed at the end of a run.

The Docker SDK is loaded by the first :func:`docker_launcher` call, not by importing this module:
a tournament played with ``--sandbox local`` (or a referee that only closes its launchers) never
loads it, and an install without the ``[docker]`` extra can still play one.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from ...errors import InfraError
from ...kinds import BotMemory, InfraKind
from ...sandbox.errors import EngineUnavailableError
from ...sandbox.limits import SandboxLimits
from ..plan.settings import TournamentSettings

if TYPE_CHECKING:
    from ...sandbox.launcher import DockerLauncher

_launchers: dict[tuple[SandboxLimits, str, BotMemory], DockerLauncher] = {}
_launchers_lock = threading.Lock()


def docker_launcher(settings: TournamentSettings) -> DockerLauncher:
    """One Docker launcher per worker process and limits (images built once, one events stream);
    the first call loads the Docker SDK (the ``[docker]`` extra)."""
    from ...sandbox.launcher import DockerLauncher  # per seat that needs it: see the module text

    key = (settings.limits, settings.base_image, settings.bot_memory)
    with _launchers_lock:
        launcher = _launchers.get(key)
        if launcher is None:
            try:
                launcher = DockerLauncher(
                    limits=settings.limits,
                    base_image=settings.base_image,
                    bot_memory=settings.bot_memory,
                )
            except EngineUnavailableError as error:
                raise InfraError(InfraKind.ENGINE_UNAVAILABLE, str(error)) from None
            _launchers[key] = launcher
        return launcher


def docker_launchers() -> list[DockerLauncher]:
    """This process's Docker launchers (take5_arena/service/metrics.py reads their start times)."""
    with _launchers_lock:
        return list(_launchers.values())


def close_launchers() -> None:
    """Close this process's Docker launchers (their containers are removed)."""
    with _launchers_lock:
        items = list(_launchers.values())
        _launchers.clear()
    for launcher in items:
        with contextlib.suppress(Exception):
            launcher.close()


def drop_launcher(launcher: DockerLauncher) -> None:
    with _launchers_lock:
        for key, value in list(_launchers.items()):
            if value is launcher:
                del _launchers[key]
    with contextlib.suppress(Exception):
        launcher.close()


__all__ = ["close_launchers", "docker_launcher", "docker_launchers", "drop_launcher"]
