"""The errors of the sandbox, under one base class.

Callers catch `SandboxError` for "the sandbox could not do it", or one of its kinds:
`EngineUnavailableError` (no Docker engine answers: the operator's problem, never a bot's fault),
`ImageBuildError` (a bot folder did not become an image: the bot is rejected) and
`ContainerStartError` (a bot container could not be created or started).

Errors from the engine itself arrive as docker-py's typed exceptions (`docker.errors.NotFound`,
`docker.errors.APIError`); the sandbox turns them into these at its edges, and never matches
error text.
"""

from __future__ import annotations

import os

from ..errors import RefereeError


class SandboxError(RefereeError):
    """Base class of everything the sandbox raises on purpose."""


class EngineUnavailableError(SandboxError):
    """No Docker engine answers (not running, no socket, no permission): run
    scripts/setup-docker.sh."""


class ImageBuildError(SandboxError):
    """A bot folder could not be built into an image. `output` is the build's own output."""

    def __init__(
        self, message: str, output: str = "", *, bot_dir: str | os.PathLike[str] | None = None
    ):
        self.message = message  # one line, fit for an operator's terminal
        self.output = output
        self.bot_dir = str(bot_dir) if bot_dir is not None else None
        tail = "\n".join(output.strip().splitlines()[-25:])
        super().__init__(
            f"{message}\n--- build output (last lines) ---\n{tail}" if tail else message
        )


class ContainerStartError(SandboxError):
    """A bot container could not be created or started (bad image, engine refused the request)."""


__all__ = ["ContainerStartError", "EngineUnavailableError", "ImageBuildError", "SandboxError"]
