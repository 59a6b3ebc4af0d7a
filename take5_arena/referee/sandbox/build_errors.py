"""Errors of building a bot image, under one base.

:class:`ImageBuildError` (take5_arena/referee/sandbox/errors.py, the sandbox's one error tree) is
what a caller catches: the bot cannot be built, and it is the bot's fault (the referee reports it as
"bot rejected", exit code 3). Its message is one line fit for an operator's terminal; ``output``
holds the build's own output (already stripped of control characters), for the bot's log.
"""

from __future__ import annotations

from . import errors
from .errors import ImageBuildError


class BuildRefusedError(ImageBuildError):
    """The folder breaks a rule or a limit; nothing was built (and nothing of it ran)."""


class BuildFailedError(ImageBuildError):
    """The build ran, in the sandboxed builder, and failed (a RUN step, pip finding no wheel...)."""


class BuildTimeoutError(BuildFailedError):
    """The build took longer than its limit; it was cancelled and its containers removed."""


class BuildEngineUnavailableError(ImageBuildError, errors.EngineUnavailableError):
    """No Docker engine answers while an image is to be built (start one with
    scripts/setup-docker.sh)."""


__all__ = [
    "BuildEngineUnavailableError",
    "BuildFailedError",
    "BuildRefusedError",
    "BuildTimeoutError",
    "ImageBuildError",
]
