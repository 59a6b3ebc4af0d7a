"""What can stop a tournament command (:class:`TournamentError`, :class:`SubmitRefusedError`); what
stops one game without being anybody's fault is take5_arena/referee/errors.py's InfraError."""

from __future__ import annotations

from ..errors import RefereeError


class TournamentError(RefereeError):
    """A tournament command cannot go on; the message is for the user."""


class SubmitRefusedError(TournamentError):
    """A bot failed validation: ``reason`` says why, ``stderr`` is the bot's own output."""

    def __init__(self, reason: str, stderr: str = ""):
        self.reason = reason
        self.stderr = stderr
        super().__init__(reason)


class SubmitDeferredError(TournamentError):
    """A bot could not be validated for the arena's own reasons, not the bot's: no engine, the
    arena's own opponent did not start, a build killed by the host. The caller tries again later and
    tells the author the submission is pending, never refused.

    ``bounded``: the cause may also be the bot's (its container did not start in time, its build
    ran out of time on a loaded host), so a caller tries a few times only, then refuses with
    ``reason``; unbounded causes are tried until the arena can validate again.
    """

    exit_code = 4
    """`referee submit`: the host failed, not the command line or the bot (docs/faults.md)."""

    def __init__(self, reason: str, stderr: str = "", *, bounded: bool = False):
        self.reason = reason
        self.stderr = stderr
        self.bounded = bounded
        super().__init__(reason)
