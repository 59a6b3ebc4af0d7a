"""What the accounts hold, as values: an author and their limits, a submission and where it is,
who holds a bot name; and the one check of an author's or a bot's name. Read and written by
:class:`~take5_arena.service.authors.Accounts`."""

from __future__ import annotations

from dataclasses import dataclass

from take5_arena.referee.kinds import StrEnum
from take5_arena.referee.names import name_problem
from take5_arena.service import defaults
from take5_arena.service.errors import BadRequestError

HOUSE = "(house)"
"""The owner shown for the organiser's bots (no author can have this name)."""


class SubmissionStatus(StrEnum):
    """Where a submission is (``arena_submissions.status``)."""

    RECEIVED = "received"
    """The archive is on disk; validation has not started."""
    VALIDATING = "validating"
    ACCEPTED = "accepted"
    """A new version of the bot."""
    UNCHANGED = "unchanged"
    """The same sources as a version the bot has already."""
    REFUSED = "refused"

    @property
    def finished(self) -> bool:
        return self not in (SubmissionStatus.RECEIVED, SubmissionStatus.VALIDATING)


@dataclass(frozen=True)
class Limits:
    """Per-author limits (the defaults for a new author; `referee authors add` can change them)."""

    max_active_bots: int = defaults.MAX_ACTIVE_BOTS
    max_submissions_per_hour: int = defaults.MAX_SUBMISSIONS_PER_HOUR
    max_archive_bytes: int = defaults.MAX_ARCHIVE_BYTES
    max_stored_bytes: int = defaults.MAX_STORED_BYTES
    """Archive bytes the arena keeps for the author: accepted versions and uploads waiting."""


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Author:
    name: str
    created_at: str
    revoked_at: str | None
    limits: Limits

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class SubmissionRow:
    id: str
    author: str
    bot_name: str
    archive_sha256: str
    archive_path: str
    archive_bytes: int
    received_at: str
    status: SubmissionStatus
    version_id: int | None
    detail: str
    bot_output: str
    finished_at: str | None
    attempts: int = 0
    upload_key: str | None = None
    """The name the client gave the upload (the same on each retry of it); None: none given."""
    competition: str = ""
    """The competition it enters ('' the default: take5_arena/service/competitions.py)."""


@dataclass(frozen=True)
class BotClaim:
    """Who holds a bot name, and what the organiser said about it."""

    bot_name: str
    author: str | None
    """None: the organiser's (a house bot)."""
    created_at: str
    note: str = ""
    """The organiser's reason for a withdrawal or a ban (the author reads it)."""
    banned_at: str | None = None

    @property
    def owner(self) -> str:
        return self.author or HOUSE


def check_name(kind: str, name: str) -> str:
    """``name`` if it is a valid author or bot name (take5_arena/referee/names.py), else
    BadRequestError saying what is valid."""
    problem = name_problem(kind, name)
    if problem is not None:
        raise BadRequestError(problem)
    return name


__all__ = [
    "DEFAULT_LIMITS",
    "HOUSE",
    "Author",
    "BotClaim",
    "Limits",
    "SubmissionRow",
    "SubmissionStatus",
    "check_name",
]
