"""The submissions: the author's limits checked before an upload is read and again when it is
recorded, the rows of the queue, and their status as validation goes.

A submission row is written only once the whole upload is on disk (fsync'd and renamed into place
by take5_arena/service/intake.py): a row is the arena's promise that the submission will be
validated, also after a crash. Status (:class:`SubmissionStatus`):
``received`` -> ``validating`` -> ``accepted`` | ``unchanged`` | ``refused``; a validation that
failed for the arena's own reasons goes back to ``received`` with its ``attempts`` counted and a
detail that says it waits to be tried again (take5_arena/service/submissions.py).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

from take5_arena.referee.store import now
from take5_arena.referee.store.base import Connection
from take5_arena.service import defaults
from take5_arena.service.authors.base import AccountRow
from take5_arena.service.authors.claims import BotClaims
from take5_arena.service.authors.model import Author, SubmissionRow, SubmissionStatus, check_name
from take5_arena.service.errors import (
    BadRequestError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
)


class SubmissionQueue(BotClaims):
    """The submissions and the limits on them (the module text)."""

    def check_can_submit(self, author: Author, bot_name: str, archive_bytes: int = 0) -> None:
        """Ownership and the author's limits, before the upload (checked again when it is
        recorded)."""
        with self.lock:
            self._check_can_submit(self.db, author, bot_name, archive_bytes)

    def _check_can_submit(
        self, db: Connection, author: Author, bot_name: str, archive_bytes: int
    ) -> None:
        check_name("bot", bot_name)
        claim = self.claim_of(bot_name)
        if claim is not None and claim.author != author.name:
            whose = "the organiser" if claim.author is None else "another author"
            raise PermissionDeniedError(f"the bot name {claim.bot_name!r} belongs to {whose}")
        if claim is not None and claim.bot_name != bot_name:
            raise BadRequestError(
                f"you have this bot as {claim.bot_name!r}: names differ only in case are one name"
            )
        if claim is not None and claim.banned_at is not None:
            raise PermissionDeniedError(
                f"the organiser banned {bot_name!r}: {claim.note or 'no reason given'}"
            )
        if claim is None:
            self._check_unlike(bot_name)
        if archive_bytes > author.limits.max_archive_bytes:
            raise LimitExceededError(
                f"the archive has {archive_bytes} bytes; your limit is "
                f"{author.limits.max_archive_bytes}"
            )
        since = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat(timespec="milliseconds")
        recent = db.execute(
            "SELECT COUNT(*) FROM arena_submissions WHERE author = ? AND received_at > ?",
            (author.name, since),
        ).fetchone()[0]
        if recent >= author.limits.max_submissions_per_hour:
            raise LimitExceededError(
                f"{recent} submissions in the last hour; your limit is "
                f"{author.limits.max_submissions_per_hour} per hour"
            )
        waiting, stored = db.execute(
            "SELECT COUNT(CASE WHEN status IN ('received', 'validating') THEN 1 END),"
            " COALESCE(SUM(CASE WHEN status IN ('received', 'validating', 'accepted')"
            " THEN archive_bytes ELSE 0 END), 0) FROM arena_submissions WHERE author = ?",
            (author.name,),
        ).fetchone()
        if waiting >= defaults.MAX_WAITING_PER_AUTHOR:
            raise LimitExceededError(
                f"you have {waiting} submissions waiting to be validated; wait for their outcome"
            )
        if stored + archive_bytes > author.limits.max_stored_bytes:
            raise LimitExceededError(
                f"the arena keeps {stored} bytes of your bots; with {archive_bytes} more it would "
                f"pass your limit of {author.limits.max_stored_bytes}"
            )
        active = set(self.active_bots_of(author.name))
        if bot_name not in active and len(active) >= author.limits.max_active_bots:
            raise LimitExceededError(
                f"you have {len(active)} active bots, your limit; withdraw one first "
                f"(`referee withdraw NAME`)"
            )

    def record_submission(
        self,
        author: Author,
        bot_name: str,
        *,
        archive_sha256: str,
        archive_path: str,
        archive_bytes: int,
        upload_key: str | None = None,
        competition: str = "",
    ) -> SubmissionRow:
        """Commit a fully received upload (the limits checked again) to ``competition`` ('' the
        default). The name is not claimed: that happens when a version of it is accepted
        (:meth:`claim`). An ``upload_key`` this author used before: the submission it named, and
        nothing is recorded (:meth:`uploaded`)."""
        sid = f"s-{datetime.now(timezone.utc).strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(4)}"
        with self.tx() as db:
            # in the writing transaction: two uploads of one key at once record one of them
            first = self.uploaded(author, upload_key, bot_name, archive_sha256, competition)
            if first is not None:
                return first
            self._check_can_submit(db, author, bot_name, archive_bytes)
            db.execute(
                "INSERT INTO arena_submissions(id, author, bot_name, archive_sha256, archive_path,"
                " archive_bytes, received_at, status, upload_key, competition)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'received', ?, ?)",
                (
                    sid,
                    author.name,
                    bot_name,
                    archive_sha256,
                    archive_path,
                    archive_bytes,
                    now(),
                    upload_key,
                    competition,
                ),
            )
        return self.submission(sid)

    def uploaded(
        self,
        author: Author,
        upload_key: str | None,
        bot_name: str,
        archive_sha256: str,
        competition: str = "",
    ) -> SubmissionRow | None:
        """The submission ``author`` recorded under ``upload_key`` (None: none, or no key): a
        retried upload gets the first one's answer. A key that named another bot, archive or
        competition is a BadRequestError: a client names each upload once."""
        if not upload_key:
            return None
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE author = ? AND upload_key = ?",
            (author.name, upload_key),
        )
        if not rows:
            return None
        row = self._submission(rows[0])
        if (
            row.bot_name != bot_name
            or row.archive_sha256 != archive_sha256
            or row.competition != competition
        ):
            raise BadRequestError(
                "this upload key named another upload (another bot, archive or competition): give "
                "each upload a key of its own"
            )
        return row

    @staticmethod
    def _submission(row: AccountRow) -> SubmissionRow:
        fields: dict[str, Any] = {k: row[k] for k in row.keys()}  # noqa: SIM118 - a Row has no .items()
        fields["status"] = SubmissionStatus(fields["status"])
        return SubmissionRow(**fields)

    def submission(self, sid: str) -> SubmissionRow:
        rows = self._read("SELECT * FROM arena_submissions WHERE id = ?", (sid,))
        if not rows:
            raise NotFoundError(f"no submission {sid}")
        return self._submission(rows[0])

    def submissions_of(self, author: str, limit: int = 20) -> list[SubmissionRow]:
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE author = ? ORDER BY received_at DESC, id DESC"
            " LIMIT ?",
            (author, limit),
        )
        return [self._submission(r) for r in rows]

    def unfinished_submissions(self) -> list[SubmissionRow]:
        """Recorded but not validated (the server stopped before): validated again at start."""
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE status IN ('received', 'validating')"
            " ORDER BY received_at, id"
        )
        return [self._submission(r) for r in rows]

    def judged_with_archives(self) -> list[SubmissionRow]:
        """Judged submissions whose upload is still on disk (left by an older arena): removed."""
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE status IN ('accepted', 'unchanged', 'refused')"
            " AND archive_path != ''"
        )
        return [self._submission(r) for r in rows]

    def set_status(
        self,
        sid: str,
        status: SubmissionStatus,
        *,
        version_id: int | None = None,
        detail: str = "",
        bot_output: str = "",
        attempt: bool = False,
    ) -> None:
        """Set a submission's status; ``attempt``: one more validation attempt failed for the
        arena's own reasons (counted; the submission waits to be tried again)."""
        finished = now() if SubmissionStatus(status).finished else None
        with self.tx() as db:
            db.execute(
                "UPDATE arena_submissions SET status = ?, version_id = ?, detail = ?,"
                " bot_output = ?, finished_at = ?, attempts = attempts + ? WHERE id = ?",
                (
                    SubmissionStatus(status).value,
                    version_id,
                    detail[: defaults.DETAIL_CHARS],
                    bot_output[-defaults.OUTPUT_TAIL :],
                    finished,
                    int(attempt),
                    sid,
                ),
            )

    def forget_archive(self, sid: str) -> None:
        """The upload of a judged submission is gone from disk (its bytes no longer count)."""
        with self.tx() as db:
            db.execute(
                "UPDATE arena_submissions SET archive_path = '' WHERE id = ?",
                (sid,),
            )

    def last_refusal(self, bot_name: str, author: str) -> SubmissionRow | None:
        """The author's last refused submission of ``bot_name`` (a name need not be held to have
        been refused)."""
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE bot_name = ? AND author = ?"
            " AND status = 'refused' ORDER BY received_at DESC LIMIT 1",
            (bot_name, author),
        )
        return self._submission(rows[0]) if rows else None

    def info(self) -> dict[str, int]:
        """Submissions per status."""
        rows = self._read("SELECT status, COUNT(*) FROM arena_submissions GROUP BY status")
        return {r[0]: r[1] for r in rows}

    def info_by_competition(self) -> dict[tuple[str, str], int]:
        """Submissions per (competition, status): each competition's queue, for the metrics."""
        rows = self._read(
            "SELECT competition, status, COUNT(*) FROM arena_submissions"
            " GROUP BY competition, status"
        )
        return {(r[0], r[1]): r[2] for r in rows}


__all__ = ["SubmissionQueue"]
