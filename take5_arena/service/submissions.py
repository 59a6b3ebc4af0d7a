"""Submissions from upload to verdict: the arena's core, called by the gRPC servicer
(take5_arena/service/servicer.py) and by any other front end (plain Python, no transport here).

An upload is checked before a byte of it is read (:meth:`SubmissionQueue.check`: the name, the
declared size and digest, ownership and the author's limits), written to the spool
(take5_arena/service/intake.py), then recorded (:meth:`SubmissionQueue.record`): from then on the
submission has an id that the caller returns at once, and it survives a restart. Validation runs
from a queue on a bounded number of worker threads, never inside the call that uploaded; whoever
wants the verdict follows the submission (:meth:`SubmissionQueue.wait`, or
:meth:`SubmissionQueue.subscribe` for a caller with its own event loop).

A validation that fails for the arena's own reasons (take5_arena/referee/tournament/submission.py's
:class:`~take5_arena.referee.tournament.errors.SubmitDeferredError`: no engine, the arena's own
opponent not starting, a build killed by the host) is not a verdict: the submission goes back to
``received`` with a detail that says why it waits, and is tried again later (sooner first, then
less often, up to :data:`defaults.RETRY_MAX_SECONDS`). It is never refused for it and never counted
again against a limit (the hourly count is of uploads). A cause that may also be the bot's own (its
container not starting in time, its build running out of time), or an unexpected error of the
arena's, is tried :data:`defaults.BOUNDED_ATTEMPTS` times before it is refused.

A validation that fails once the store has entered its version (with its validation games, in
one transaction) passed: the name is claimed then (``Accounts.adopt``), at once or at the retry,
and the author hears "accepted", never "the name was taken meanwhile" by their own version.

Once judged, a submission's upload is removed, and a refused bot's unpacked folder too; a name is
claimed by the author only when a version of it is accepted (take5_arena/service/authors/).
"""

from __future__ import annotations

import heapq
import itertools
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from take5_arena.referee.archive import ArchiveError, ArchiveLimits
from take5_arena.referee.kinds import SandboxKind
from take5_arena.referee.timings import Timings
from take5_arena.service import defaults, logs
from take5_arena.service.authors import (
    Accounts,
    Author,
    SubmissionRow,
    SubmissionStatus,
    check_name,
)
from take5_arena.service.errors import (
    BadRequestError,
    LimitExceededError,
    PermissionDeniedError,
    ServiceError,
)
from take5_arena.service.intake import Spool

if TYPE_CHECKING:
    from take5_arena.referee.tournament.submission import TablePlayer

UPLOAD_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a client may name an upload (``SubmitMetadata.upload_key``)."""


def checked_key(upload_key: str) -> str | None:
    """An upload's key (None: none given), or a BadRequestError for one that is no key."""
    if not upload_key:
        return None
    if not UPLOAD_KEY.fullmatch(upload_key):
        raise BadRequestError("upload_key must be 1-64 ASCII letters, digits, '-' and '_'")
    return upload_key


@dataclass(frozen=True)
class Declared:
    """What an upload says of itself before its bytes: checked by :meth:`SubmissionQueue.check`."""

    bot_name: str
    size: int
    sha256: str
    max_bytes: int
    """The most bytes this upload may have (the author's and the arena's limit)."""
    upload_key: str | None = None
    """The name the client gave the upload, the same on each retry (None: none given)."""


@dataclass(frozen=True)
class Outcome:
    """What one validation attempt gave: a verdict (``status`` final) or a wait (``received``)."""

    status: SubmissionStatus
    detail: str = ""
    bot_output: str = ""
    version_id: int | None = None
    attempt: bool = False
    """A deferred attempt (the arena's own failure), to be counted."""


Validate = Callable[[SubmissionRow, Path], Outcome]
"""Validates the unpacked folder of a submission (the default: :func:`validate_folder`)."""


class SubmissionQueue:
    """Checks, records and validates submissions (see the module text). Thread-safe."""

    def __init__(
        self,
        directory: str | Path,
        accounts: Accounts,
        spool: Spool,
        *,
        sandbox: SandboxKind,
        timeout: float | None,
        limits: ArchiveLimits,
        workers: int = defaults.VALIDATORS,
        on_new_version: Callable[[], None] = lambda: None,
        validate: Validate | None = None,
        retry_seconds: float = defaults.RETRY_FIRST_SECONDS,
        server_limits: defaults.ServerLimits | None = None,
        play_table: TablePlayer | None = None,
        competition: str = "",
    ) -> None:
        self.directory = Path(directory)
        self.competition = competition
        """The competition whose submissions this queue takes ('' the default: the arena's
        directory; take5_arena/service/competitions.py): one queue per competition, on the
        arena's one set of accounts, each validating into its own directory."""
        self.accounts = accounts
        self.spool = spool
        self.sandbox = sandbox
        self.timeout = timeout
        self.limits = limits
        self.on_new_version = on_new_version
        self.log = logs.logger("submissions")
        self.validation_seconds = Timings()
        """How long each validation took, in the order they ended (the metrics read it)."""
        self.validate = validate or self._validate_folder
        self.retry_seconds = retry_seconds
        self.server_limits = server_limits or defaults.ServerLimits()
        self.play_table = play_table
        """Plays the smoke tables dealt against the pool (None: ``run_table`` on the validating
        thread; ``referee serve``: the ladder's driver, as its rated tables)."""
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._watchers: list[Callable[[SubmissionRow], None]] = []
        self._name_locks: dict[str, threading.Lock] = {}
        self._threads = [
            threading.Thread(target=self._work, name=f"validate-{i}", daemon=True)
            for i in range(max(1, workers))
        ]

    def _smoke_player(self, play: TablePlayer) -> TablePlayer:
        """``play``, with each smoke table naming this queue's directory (``TableSpec.home``), so
        that the web pages show its games in progress as this competition's."""
        home = str(self.directory.absolute())
        return lambda spec: play(replace(spec, home=home))

    # -- life cycle --------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers, with the submissions a stopped server left unjudged queued first."""
        for row in self.accounts.judged_with_archives():
            if self._ours(row) and self._here(row):
                self._discard_upload(row)
        for row in self.accounts.unfinished_submissions():
            if not (self._ours(row) and self._here(row)):
                continue
            self.log.info(
                "validating submission %s (%s/%s) recorded before the restart",
                row.id,
                row.author,
                row.bot_name,
            )
            self.enqueue(row.id)
        for thread in self._threads:
            thread.start()

    def _ours(self, row: SubmissionRow) -> bool:
        """Whether the submission enters this queue's competition."""
        return row.competition == self.competition

    def _here(self, row: SubmissionRow) -> bool:
        """Whether this process received the submission's upload: always, but for accounts that
        processes on several hosts share, where the host that spooled an upload validates it."""
        return (
            not self.accounts.shared or (self.spool.uploads / Path(row.archive_path).name).exists()
        )

    def close(self) -> None:
        """Stop taking work; a validation in progress is left to finish (its thread is a daemon,
        and a submission cut off is validated again at the next start)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- intake ------------------------------------------------------------------------------------

    def capped(self, author: Author) -> Author:
        """``author`` with their limits within the server's ceilings (``referee serve
        --max-per-hour/--max-archive-mb``)."""
        ceiling = self.server_limits
        limits = author.limits
        if ceiling.max_submissions_per_hour is not None:
            limits = replace(
                limits,
                max_submissions_per_hour=min(
                    limits.max_submissions_per_hour, ceiling.max_submissions_per_hour
                ),
            )
        if ceiling.max_archive_bytes is not None:
            limits = replace(
                limits,
                max_archive_bytes=min(limits.max_archive_bytes, ceiling.max_archive_bytes),
            )
        return author if limits == author.limits else replace(author, limits=limits)

    def uploaded(
        self, author: Author, bot_name: str, sha256: str, upload_key: str
    ) -> SubmissionRow | None:
        """The submission an earlier upload of this key recorded (a retry after a cut connection:
        its answer is the first one's, before any limit counts the retry); None: a new upload."""
        key = checked_key(upload_key)
        if key is None:
            return None
        return self.accounts.uploaded(author, key, bot_name, sha256, self.competition)

    def check(
        self, author: Author, bot_name: str, size: int, sha256: str, upload_key: str = ""
    ) -> Declared:
        """Everything that can be checked before the upload's bytes: raises a RequestError."""
        author = self.capped(author)
        name = check_name("bot", bot_name)
        key = checked_key(upload_key)
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise BadRequestError("archive_sha256 must be 64 lowercase hex digits")
        if size <= 0:
            raise BadRequestError("archive_size must be given")
        max_bytes = min(author.limits.max_archive_bytes, self.limits.max_archive_bytes)
        if size > max_bytes:
            raise LimitExceededError(f"the archive has {size} bytes; the limit is {max_bytes}")
        self.accounts.check_can_submit(author, name, size)
        return Declared(name, size, sha256, max_bytes, key)

    def record(self, author: Author, declared: Declared, archive: Path) -> SubmissionRow:
        """Record a complete upload and queue it; the limits are checked again (a refusal removes
        the upload)."""
        author = self.capped(author)
        try:
            row = self.accounts.record_submission(
                author,
                declared.bot_name,
                archive_sha256=declared.sha256,
                archive_path=str(archive),
                archive_bytes=declared.size,
                upload_key=declared.upload_key,
                competition=self.competition,
            )
        except ServiceError:
            archive.unlink(missing_ok=True)
            raise
        if row.archive_path != str(archive):  # the same key's upload got there first: that one
            archive.unlink(missing_ok=True)
            return row
        self.log.info(
            "submission %s: %s/%s, %d bytes", row.id, author.name, row.bot_name, declared.size
        )
        self.enqueue(row.id)
        self._tell(row)
        return row

    def enqueue(self, sid: str, delay: float = 0.0) -> None:
        with self._cond:
            heapq.heappush(self._heap, (time.monotonic() + delay, next(self._seq), sid))
            self._cond.notify()

    # -- following a submission --------------------------------------------------------------------

    def subscribe(self, watcher: Callable[[SubmissionRow], None]) -> Callable[[], None]:
        """Call ``watcher`` (on a worker thread) with each submission whose status changes; returns
        the function that unsubscribes."""
        with self._cond:
            self._watchers.append(watcher)

        def unsubscribe() -> None:
            with self._cond:
                if watcher in self._watchers:
                    self._watchers.remove(watcher)

        return unsubscribe

    def wait(self, sid: str, timeout: float) -> SubmissionRow:
        """The submission once judged, or as it is after ``timeout`` seconds."""
        done = threading.Event()
        unsubscribe = self.subscribe(lambda row: done.set() if row.id == sid else None)
        try:
            row = self.accounts.submission(sid)
            if not row.status.finished:
                done.wait(timeout)
                row = self.accounts.submission(sid)
            return row
        finally:
            unsubscribe()

    def _tell(self, row: SubmissionRow) -> None:
        with self._cond:
            watchers = list(self._watchers)
        for watcher in watchers:
            try:
                watcher(row)
            except Exception as error:  # noqa: BLE001 - one watcher's failure is not the queue's
                self.log.error("a submission watcher failed: %s: %s", type(error).__name__, error)

    # -- the workers -------------------------------------------------------------------------------

    def _next(self) -> str | None:
        with self._cond:
            while not self._closed:
                if self._heap:
                    due = self._heap[0][0] - time.monotonic()
                    if due <= 0:
                        return heapq.heappop(self._heap)[2]
                    self._cond.wait(due)
                else:
                    self._cond.wait()
            return None

    def _work(self) -> None:
        while (sid := self._next()) is not None:
            try:
                row = self.accounts.submission(sid)
            except ServiceError:
                continue
            if row.status.finished or not self._ours(row):
                continue
            with self._lock(row.bot_name):
                self._judge(row)

    def _lock(self, name: str) -> threading.Lock:
        from take5_arena.referee.names import name_key  # the names' own rule: one lock per name

        with self._cond:
            return self._name_locks.setdefault(name_key(name), threading.Lock())

    def _judge(self, row: SubmissionRow) -> None:
        self.accounts.set_status(row.id, SubmissionStatus.VALIDATING, detail=row.detail)
        self._tell(self.accounts.submission(row.id))
        started = time.monotonic()
        try:
            outcome = self._attempt(row)
        except Exception as error:
            first = str(error).splitlines()[0] if str(error) else ""
            what = f"the arena failed while validating ({type(error).__name__}: {first})"
            self.log.exception("submission %s: %s", row.id, what)
            # unknown: tried again a few times (it may pass), then refused, saying it was the arena;
            # unless it failed once the store had entered its version: then it passed
            outcome = self._entered(row) or (
                Outcome(SubmissionStatus.RECEIVED, what, attempt=True)
                if row.attempts + 1 < defaults.BOUNDED_ATTEMPTS
                else Outcome(
                    SubmissionStatus.REFUSED,
                    f"{what} in {row.attempts + 1} attempts; the organiser has the details",
                )
            )
        self.validation_seconds.add(time.monotonic() - started)
        if outcome.status == SubmissionStatus.RECEIVED:
            delay = min(defaults.RETRY_MAX_SECONDS, self.retry_seconds * 2**row.attempts)
            detail = f"waiting: {outcome.detail}; the arena tries again in {delay:.0f} s"
            self.accounts.set_status(row.id, SubmissionStatus.RECEIVED, detail=detail, attempt=True)
            self.log.warning("submission %s (%s/%s): %s", row.id, row.author, row.bot_name, detail)
            self._tell(self.accounts.submission(row.id))
            self.enqueue(row.id, delay)
            return
        self.accounts.set_status(
            row.id,
            outcome.status,
            version_id=outcome.version_id,
            detail=outcome.detail,
            bot_output=outcome.bot_output,
        )
        self._discard_upload(row)
        self.log.info(
            "submission %s (%s/%s): %s: %s",
            row.id,
            row.author,
            row.bot_name,
            outcome.status,
            outcome.detail,
        )
        if outcome.status in (SubmissionStatus.ACCEPTED, SubmissionStatus.UNCHANGED):
            self.on_new_version()
        self._tell(self.accounts.submission(row.id))

    def _attempt(self, row: SubmissionRow) -> Outcome:
        adopted = False
        try:
            author = self.accounts.author(row.author)
            if author.active and row.attempts:  # an earlier attempt entered it, then failed
                adopted = self.accounts.adopt(row.author, row.bot_name)
            self.accounts.check_owner(author, row.bot_name, must_exist=False)
        except PermissionDeniedError as error:
            return Outcome(SubmissionStatus.REFUSED, f"{error} (the name was taken meanwhile)")
        if not author.active:
            return Outcome(SubmissionStatus.REFUSED, "the author's token was revoked")
        try:
            # The upload is this arena's, wherever its directory lives now (moved, or restored
            # from a backup): the row's path is read for its name only.
            folder = self.spool.unpack(
                self.spool.uploads / Path(row.archive_path).name,
                row.bot_name,
                row.archive_sha256,
                self.limits,
            )
        except ArchiveError as error:
            return Outcome(SubmissionStatus.REFUSED, f"unsafe archive: {error}")
        except FileNotFoundError:
            return Outcome(SubmissionStatus.REFUSED, "the archive is gone; submit again")
        outcome = _unplaced(self.validate(row, folder), folder, row.bot_name)
        if outcome.status == SubmissionStatus.UNCHANGED:
            self._forget(folder)  # unless the version that plays was unpacked from it
        if adopted and outcome.status == SubmissionStatus.UNCHANGED:
            return self._accepted(row.bot_name)  # its version, entered by the earlier attempt
        if outcome.status == SubmissionStatus.REFUSED:
            self._forget(folder)
        elif outcome.status == SubmissionStatus.ACCEPTED or (
            outcome.status == SubmissionStatus.UNCHANGED
        ):
            self.accounts.claim(row.author, row.bot_name)
        return outcome

    def _entered(self, row: SubmissionRow) -> Outcome | None:
        """The verdict of a validation that failed after the store had entered its version (and
        its validation games, one transaction): accepted, its name claimed now; None when the
        store has no such version (nothing of it was kept), or the accounts fail too (the
        retry claims it, :meth:`_attempt`)."""
        try:
            if not self.accounts.adopt(row.author, row.bot_name):
                return None
            return self._accepted(row.bot_name)
        except Exception as error:  # noqa: BLE001 - said; the retry looks again
            self.log.error("submission %s: its version not looked up: %s", row.id, error)
            return None

    def _accepted(self, bot_name: str) -> Outcome:
        """``bot_name``'s latest version as the verdict of the submission that entered it."""
        from take5_arena.referee.store import Store  # lazy: start-up time

        with Store(self.directory, readonly=True) as store:
            version = [v for v in store.versions.all() if v.name == bot_name][-1]
        smoke = str(version.validation.get("smoke", ""))
        return Outcome(SubmissionStatus.ACCEPTED, smoke, version_id=version.id)

    def _validate_folder(self, row: SubmissionRow, folder: Path) -> Outcome:
        """``referee submit``'s validation of the unpacked folder (the default :data:`Validate`)."""
        # lazy: start-up time
        from take5_arena.referee.tournament.errors import (
            SubmitDeferredError,
            SubmitRefusedError,
            TournamentError,
        )
        from take5_arena.referee.tournament.run.table import run_table
        from take5_arena.referee.tournament.submission import submit as validate_and_add

        try:
            # The account that submitted is the entrant's author (the seating rule's, the
            # records' ``owner``), whatever the bot's handshake says of itself.
            done = validate_and_add(
                self.directory,
                folder,
                row.bot_name,
                sandbox=self.sandbox,
                timeout=self.timeout,
                author=row.author,
                log=lambda line: self._progress(row, folder, line),
                pool=True,  # its smoke tables: against the bots it will meet (docs/security.md)
                play=self._smoke_player(self.play_table or run_table),
                once=True,  # code the author has playing already: not validated again
            )
        except SubmitDeferredError as deferred:
            if deferred.bounded and row.attempts + 1 >= defaults.BOUNDED_ATTEMPTS:
                return Outcome(
                    SubmissionStatus.REFUSED,
                    f"{deferred.reason} (in {row.attempts + 1} attempts)",
                    deferred.stderr,
                )
            return Outcome(
                SubmissionStatus.RECEIVED, deferred.reason, deferred.stderr, attempt=True
            )
        except SubmitRefusedError as refused:
            return Outcome(SubmissionStatus.REFUSED, refused.reason, refused.stderr)
        except TournamentError as error:
            return Outcome(SubmissionStatus.REFUSED, str(error))
        return Outcome(
            SubmissionStatus.ACCEPTED if done.created else SubmissionStatus.UNCHANGED,
            done.smoke,
            version_id=done.version.id,
        )

    def _progress(self, row: SubmissionRow, folder: Path, line: str) -> None:
        """Where a validation is (its smoke games played so far, ...), in the submission's detail
        while it is validating: its author sees it (``referee submit``'s wait, the web page),
        with the bot's name for the arena's folder of it (as :func:`_unplaced` does)."""
        shown = line.replace(str(folder), f"your bot {row.bot_name}")[:200]
        self.accounts.set_status(row.id, SubmissionStatus.VALIDATING, detail=shown)
        self._tell(self.accounts.submission(row.id))

    def _discard_upload(self, row: SubmissionRow) -> None:
        """A judged submission's upload is not needed any more (the store keeps the validated
        archive, take5_arena/referee/artifacts.py)."""
        if row.archive_path:
            self.spool.discard(self.spool.uploads / Path(row.archive_path).name)
            self.accounts.forget_archive(row.id)

    def _forget(self, folder: Path) -> None:
        """A refused or unchanged bot's folder: removed unless a version names it (its
        ``bot_dir``)."""
        from take5_arena.referee.store import Store  # lazy: start-up time

        with Store(self.directory, readonly=True) as store:
            names = {str(folder), str(folder.resolve())}  # submit() stores it resolved
            if any(v.bot_dir in names for v in store.versions.all()):
                return
        shutil.rmtree(folder, ignore_errors=True)
        if folder.parent.is_dir() and not any(folder.parent.iterdir()):
            folder.parent.rmdir()


def _unplaced(outcome: Outcome, folder: Path, bot_name: str) -> Outcome:
    """``outcome`` with the arena's own folder of the bot named as the bot (what the author sent):
    a reason such as "'/srv/arena/bots/x/1a2b...': the folder has neither bot.py ..." would tell
    every author where the arena keeps its files."""
    here = str(folder)
    if here not in outcome.detail and here not in outcome.bot_output:
        return outcome
    shown = f"your bot {bot_name}"
    return replace(
        outcome,
        detail=outcome.detail.replace(f"'{here}'", shown).replace(here, shown),
        bot_output=outcome.bot_output.replace(here, "."),
    )


__all__ = ["UPLOAD_KEY", "Declared", "Outcome", "SubmissionQueue", "Validate", "checked_key"]
