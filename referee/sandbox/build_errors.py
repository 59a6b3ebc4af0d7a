"""Errors of building a bot image, under one base.

:class:`ImageBuildError` is what a caller catches: the bot cannot be built, and it is the bot's
fault (the referee reports it as "bot rejected", exit code 3). Its message is one line fit for an
operator's terminal; ``output`` holds the build's own output (already stripped of control
characters), for the bot's log.
"""

from __future__ import annotations


class ImageBuildError(Exception):
    """A bot folder could not become an image."""

    def __init__(self, message: str, output: str = "", *, bot_dir: str | None = None) -> None:
        self.message = message
        self.output = output
        self.bot_dir = bot_dir
        tail = "\n".join(output.strip().splitlines()[-25:])
        super().__init__(
            f"{message}\n--- build output (last lines) ---\n{tail}" if tail else message
        )


class BuildRefused(ImageBuildError):
    """The folder breaks a rule or a limit; nothing was built (and nothing of it ran)."""


class BuildFailed(ImageBuildError):
    """The build ran, in the sandboxed builder, and failed (a RUN step, pip finding no wheel...)."""


class BuildTimeout(BuildFailed):
    """The build took longer than its limit; it was cancelled and its containers removed."""


class EngineUnavailable(ImageBuildError):
    """No Docker engine answers (start one with scripts/setup-docker.sh)."""
