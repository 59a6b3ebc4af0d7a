"""What can stop a tournament command (:class:`TournamentError`, :class:`SubmitRefusedError`) and
what stops one game without being anybody's fault (:class:`InfraError`)."""

from __future__ import annotations

from ..errors import RefereeError
from ..kinds import InfraKind


class TournamentError(RefereeError):
    """A tournament command cannot go on; the message is for the user."""


class SubmitRefusedError(TournamentError):
    """A bot failed validation: ``reason`` says why, ``stderr`` is the bot's own output."""

    def __init__(self, reason: str, stderr: str = ""):
        self.reason = reason
        self.stderr = stderr
        super().__init__(reason)


class InfraError(RefereeError):
    """Not a bot's fault: the game cannot be played now (engine unavailable, image, referee
    error)."""

    def __init__(self, kind: InfraKind, detail: str) -> None:
        self.kind = InfraKind(kind)
        self.detail = detail
        super().__init__(f"{kind}: {detail}")
