"""The arena's gRPC methods (proto/take5/arena/v1/arena.proto): who may call what, and what each
call reads and writes, on a ``grpc.aio`` server.

Why asyncio: every author is an adversary of every other, and a thread-per-call server lets a few
streams that never send (or wait for a validation) hold every thread. Here a call that waits costs
a coroutine, not a thread; what blocks (SQLite, the disk, hashing a token) runs on a small thread
pool (:attr:`ArenaService.blocking`), and what takes long (validation) runs in the submission queue
(take5_arena/service/submissions.py), which the calls only follow. The bounds, all enforced before
a byte of an upload is read (:class:`take5_arena.service.defaults.ServerLimits`, options of
``referee serve``; the defaults' names are these):

* a SubmitBot stream must send its first message within ``FIRST_MESSAGE_SECONDS``, each later
  chunk within ``CHUNK_SECONDS``, and finish within ``UPLOAD_SECONDS`` (RESOURCE_EXHAUSTED);
* an author has at most ``MAX_UPLOADS_PER_AUTHOR`` uploads open at once; a second one only while
  fewer than ``MAX_UPLOADS_AT_ONCE`` are open in all, and never more than ``MAX_UPLOADERS``;
* an author has at most ``MAX_CALLS_PER_AUTHOR`` calls in progress at once (a long poll counts);
* one connection carries at most ``MAX_STREAMS_PER_CONNECTION`` calls at once, and a message is at
  most one chunk and its envelope (the transport refuses more, unread).

Authors submit, follow, list, withdraw and read the faults of their own bots (a token in every call,
take5_arena/service/authors/); standings and records are public. The core (submissions, names,
ownership) is plain Python in take5_arena/service/submissions.py and authors/; this module only
maps calls onto it, and take5_arena/service/messages.py writes the replies.

Errors reach the client as gRPC status codes with a one-line message (the table is in the .proto):
a :class:`~take5_arena.service.errors.RequestError` as its own ``code``, a store error as
NOT_FOUND, and an unexpected error in the server as INTERNAL with a generic message (the details go
to the server's log).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio

from take5_arena.referee.store import EntrantVersion, Store, StoreError, WithheldError
from take5_arena.referee.store.health import StoreFaultError
from take5_arena.service import challenges, defaults, logs, messages
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.authors import Accounts, Author, SubmissionRow, check_name
from take5_arena.service.competitions import DEFAULT, competition_problem
from take5_arena.service.errors import (
    BadRequestError,
    LimitExceededError,
    NotFoundError,
    RequestError,
    ServiceError,
    host_fault,
)
from take5_arena.service.intake import Spool
from take5_arena.service.ladder import Ladder
from take5_arena.service.publisher import Publisher
from take5_arena.service.submissions import SubmissionQueue

_Request = TypeVar("_Request")
_Reply = TypeVar("_Reply")
_T = TypeVar("_T")


@dataclass
class Competition:
    """One competition's running parts (take5_arena/service/competitions.py): its directory, its
    uploads, its submission queue, its publisher and its ladder (None: ``--no-ladder``)."""

    name: str
    directory: Path
    spool: Spool
    queue: SubmissionQueue
    publisher: Publisher
    ladder: Ladder | None


@dataclass
class ServiceParts:
    """What the servicer works with (made and stopped by take5_arena/service/serve.py): the
    default competition's parts (the arena's directory), the accounts, and the other
    competitions'."""

    directory: Path
    accounts: Accounts
    spool: Spool
    queue: SubmissionQueue
    publisher: Publisher
    ladder: Ladder | None
    limits: defaults.ServerLimits = field(default_factory=defaults.ServerLimits)
    """The server-wide limits (``referee serve`` options), for every front end of the arena."""
    others: Mapping[str, Competition] = field(default_factory=dict)
    """The extra competitions, by name (``DIR/competitions/NAME``)."""
    waiting: Callable[[], Mapping[str, str]] = dict
    """The competitions found and not served, each with why (the server's, replaced whole)."""
    stall_seconds: float = defaults.STALL_SECONDS
    """``--stall-seconds``. Both are for take5_arena/service/health.py's one rule
    (:meth:`~take5_arena.service.health.ArenaHealth.of`), which /healthz, /metrics and the
    organiser's page read."""

    def competition(self, name: str) -> Competition:
        """The competition a request names ('' the default); a name that is none is a
        BadRequestError, an unknown one a NotFoundError naming those there are."""
        if name == DEFAULT:
            return Competition(
                DEFAULT, self.directory, self.spool, self.queue, self.publisher, self.ladder
            )
        problem = competition_problem(name)
        if problem is not None:
            raise BadRequestError(problem)
        found = self.others.get(name)
        if found is None:
            there = ", ".join(["the default", *sorted(self.others)])
            raise NotFoundError(f"no competition {name!r} on this arena (it has: {there})")
        return found

    def competition_names(self) -> list[str]:
        """Every competition served, as the pages list them: the default first, then the others
        by name (read from ``others`` as it is now)."""
        return [DEFAULT, *sorted(self.others)]

    def competition_directories(self) -> dict[str, Path]:
        """Every competition served, by name ('' the default), with its directory (read from
        ``others`` as it is now)."""
        return {
            DEFAULT: self.directory,
            **{name: other.directory for name, other in self.others.items()},
        }

    def competition_at(self, home: str) -> str:
        """The name of the competition whose directory is ``home`` (a table's ``TableSpec.home``,
        the directory made absolute); the default's for any other. Read from ``others`` as it
        is now: the server adds a competition while it runs."""
        for name, other in self.others.items():
            if str(other.directory.absolute()) == home:
                return name
        return DEFAULT


def _rpc(
    method: Callable[
        [ArenaService, _Request, grpc.aio.ServicerContext[Any, Any]], Awaitable[_Reply]
    ],
) -> Callable[[ArenaService, _Request, grpc.aio.ServicerContext[Any, Any]], Awaitable[_Reply]]:
    """Arena errors become their status code; anything else is INTERNAL (and logged)."""

    @functools.wraps(method)
    async def wrapper(
        self: ArenaService, request: _Request, context: grpc.aio.ServicerContext[Any, Any]
    ) -> _Reply:
        try:
            return await method(self, request, context)
        except grpc.aio.AbortError:
            raise
        except RequestError as error:
            await context.abort(error.code, str(error))
        except (StoreFaultError, OSError) as error:
            reason = host_fault(error)
            if reason is None:
                self.log.exception(
                    "%s failed: %s: %s", method.__name__, type(error).__name__, error
                )
                reason = "the arena failed on this call (see its log)"
            else:
                self.log.error("%s refused: %s", method.__name__, error)
            await context.abort(grpc.StatusCode.INTERNAL, reason)
        except StoreError as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        except ServiceError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.log.exception("%s failed: %s: %s", method.__name__, type(error).__name__, error)
            await context.abort(
                grpc.StatusCode.INTERNAL, "the arena failed on this call (see its log)"
            )
        raise AssertionError("unreachable: context.abort raises")

    return wrapper


class _Counts:
    """Calls and uploads in progress, per author and in all (on the event loop: no lock)."""

    def __init__(self, limits: defaults.ServerLimits) -> None:
        self.limits = limits
        self.calls: dict[str, int] = {}
        self.uploads: dict[str, int] = {}
        self.uploads_total = 0

    @contextlib.contextmanager
    def call(self, author: str) -> Iterator[None]:
        if self.calls.get(author, 0) >= self.limits.calls_per_author:
            raise LimitExceededError(
                f"you have {self.limits.calls_per_author} calls in progress; wait for them"
            )
        self.calls[author] = self.calls.get(author, 0) + 1
        try:
            yield
        finally:
            self.calls[author] -= 1

    @contextlib.contextmanager
    def upload(self, author: str) -> Iterator[None]:
        mine = self.uploads.get(author, 0)
        if mine >= self.limits.uploads_per_author:
            raise LimitExceededError(
                f"you have {self.limits.uploads_per_author} uploads in progress; wait for them"
            )
        if self.uploads_total >= self.limits.uploaders or (
            mine and self.uploads_total >= self.limits.uploads_at_once
        ):
            raise LimitExceededError(
                "the arena is receiving too many uploads at once; try again in a minute"
            )
        self.uploads[author] = mine + 1
        self.uploads_total += 1
        try:
            yield
        finally:
            self.uploads[author] -= 1
            self.uploads_total -= 1


async def _next(stream: AsyncIterator[_T], seconds: float, what: str) -> _T | None:
    """The stream's next message within ``seconds`` (None at its end), else RESOURCE_EXHAUSTED."""
    try:
        return await asyncio.wait_for(anext(stream), seconds)
    except StopAsyncIteration:
        return None
    except asyncio.TimeoutError:
        raise LimitExceededError(f"no {what} within {seconds:g} s: the upload is cut off") from None


class ArenaService(pb_grpc.ArenaServicer):
    """The gRPC methods (documented in arena.proto), as coroutines on the server's event loop."""

    def __init__(
        self,
        parts: ServiceParts,
        blocking: concurrent.futures.Executor,
        limits: defaults.ServerLimits | None = None,
    ) -> None:
        self.p = parts
        self.limits = limits or defaults.ServerLimits()
        self.log = logs.logger("api")
        self.blocking = blocking
        """Where the calls' blocking work runs (SQLite, the disk, token hashes)."""
        self.stopping = threading.Event()
        self.counts = _Counts(self.limits)
        self._standings: dict[str, tuple[object, pb.StandingsResponse]] = {}
        """Per competition: the publication its standings reply was built from, and the reply."""

    # -- helpers -----------------------------------------------------------------------------------

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` on the blocking pool."""
        return await asyncio.get_running_loop().run_in_executor(self.blocking, fn, *args)

    async def author(self, context: grpc.aio.ServicerContext[Any, Any]) -> Author:
        token = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str):
                scheme, _, rest = value.partition(" ")
                if scheme.lower() == "bearer":
                    token = rest.strip()
        return await self.run(self.p.accounts.authenticate, token)

    def store(self, competition: str = DEFAULT) -> Store:
        return Store(self.p.competition(competition).directory, readonly=True)

    def _version(self, version_id: int | None, competition: str) -> EntrantVersion | None:
        if version_id is None:
            return None
        with self.store(competition) as store:
            return store.versions.get(version_id)

    def _reply(self, row: SubmissionRow) -> pb.SubmitBotResponse:
        return messages.submission(row, self._version(row.version_id, row.competition))

    # -- SubmitBot / GetSubmission -----------------------------------------------------------------

    @_rpc
    async def SubmitBot(
        self,
        request_iterator: AsyncIterator[pb.SubmitBotRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> pb.SubmitBotResponse:
        if self.stopping.is_set():
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the arena is stopping; try again")
        author = await self.author(context)
        with self.counts.upload(author.name):
            first = await _next(request_iterator, self.limits.first_message_seconds, "metadata")
            if first is None or first.WhichOneof("part") != "metadata":
                raise BadRequestError("the first message of SubmitBot must carry the metadata")
            md = first.metadata
            arm = self.p.competition(md.competition)
            # a retry of an upload already stored (its answer was lost with the connection): the
            # first one's answer, before the limits count the retry and before any byte is read
            earlier = await self.run(
                arm.queue.uploaded, author, md.bot_name, md.archive_sha256, md.upload_key
            )
            if earlier is not None:
                self.log.info("submission %s: upload retried, answered again", earlier.id)
                return await self.run(self._reply, earlier)
            declared = await self.run(
                arm.queue.check,
                author,
                md.bot_name,
                md.archive_size,
                md.archive_sha256,
                md.upload_key,
            )
            upload = await self.run(
                functools.partial(
                    arm.spool.begin,
                    size=declared.size,
                    sha256=declared.sha256,
                    max_bytes=declared.max_bytes,
                )
            )

            async def receive() -> None:
                while True:
                    message = await _next(
                        request_iterator, self.limits.chunk_seconds, "archive chunk"
                    )
                    if message is None:
                        return
                    if message.WhichOneof("part") != "chunk":
                        raise BadRequestError("only archive chunks may follow the metadata")
                    await self.run(upload.write, message.chunk)

            try:
                # asyncio.wait_for, not asyncio.timeout: the arena runs on Python 3.10 too.
                await asyncio.wait_for(receive(), self.limits.upload_seconds)
                path = await self.run(upload.finish)
            except asyncio.TimeoutError:
                upload.abort()
                raise LimitExceededError(
                    f"the upload took longer than {self.limits.upload_seconds:g} s: it is cut off"
                ) from None
            except BaseException:
                upload.abort()
                raise
        row = await self.run(arm.queue.record, author, declared, path)
        return await self.run(self._reply, row)

    @_rpc
    async def GetSubmission(
        self, request: pb.GetSubmissionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SubmitBotResponse:
        author = await self.author(context)
        with self.counts.call(author.name):
            sid = request.submission_id
            if not sid or len(sid) > 100:
                raise BadRequestError("give a submission id")
            row = await self.run(self.p.accounts.submission, sid)
            if row.author != author.name:
                raise NotFoundError(f"you have no submission {sid[:40]!r}")
            wait = min(float(request.wait_seconds), defaults.MAX_WAIT_SECONDS)
            if wait > 0 and not row.status.finished:
                row = await self._wait(sid, wait, self.p.competition(row.competition).queue)
            return await self.run(self._reply, row)

    async def _wait(self, sid: str, seconds: float, queue: SubmissionQueue) -> SubmissionRow:
        """The submission once judged, or after ``seconds`` (the queue tells; nothing polls)."""
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def tell(row: SubmissionRow) -> None:
            if row.id == sid:
                loop.call_soon_threadsafe(changed.set)

        unsubscribe = queue.subscribe(tell)
        try:
            deadline = loop.time() + seconds
            while True:
                row = await self.run(self.p.accounts.submission, sid)
                left = deadline - loop.time()
                if row.status.finished or left <= 0 or self.stopping.is_set():
                    return row
                changed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(changed.wait(), min(left, 1.0))
        finally:
            unsubscribe()

    # -- ListMyBots / WithdrawBot ------------------------------------------------------------------

    @_rpc
    async def ListMyBots(
        self, request: pb.ListMyBotsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListMyBotsResponse:
        author = await self.author(context)
        with self.counts.call(author.name):
            return await self.run(self._my_bots, author, request.competition)

    def _my_bots(self, author: Author, competition: str) -> pb.ListMyBotsResponse:
        claims = self.p.accounts.claims_of(author.name)
        names = {c.bot_name for c in claims}
        with self.store(competition) as store:
            active = store.versions.entrant_states()
            versions = [v for v in store.versions.all() if v.name in names]
            stats = store.results.version_stats()
        submissions = [
            row
            for row in self.p.accounts.submissions_of(author.name)
            if row.competition == competition
        ]
        # the limits in force: the author's own within the server's ceilings
        capped = self.p.queue.capped(author)
        return messages.my_bots(capped, claims, active, versions, stats, submissions)

    @_rpc
    async def WithdrawBot(
        self, request: pb.WithdrawBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.WithdrawBotResponse:
        author = await self.author(context)
        with self.counts.call(author.name):
            name = check_name("bot", request.bot_name)
            arm = self.p.competition(request.competition)
            await self.run(self.p.accounts.check_owner, author, name)
            was_active = await self.run(self._withdraw, arm.directory, name)
        if arm.ladder is not None:
            arm.ladder.wake()
        self.log.info("withdrawn: %s/%s", author.name, name)
        return pb.WithdrawBotResponse(bot_name=name, was_active=was_active)

    def _withdraw(self, directory: Path, name: str) -> bool:
        with Store(directory) as store:
            return store.versions.withdraw(name)

    # -- public: Standings / GetGameRecord ---------------------------------------------------------

    @_rpc
    async def Standings(
        self, request: pb.StandingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.StandingsResponse:
        arm = self.p.competition(request.competition)
        doc, computed_at = arm.publisher.latest()
        cached = self._standings.get(arm.name)
        if cached is None or cached[0] is not doc:  # built once per publication
            cached = (doc, messages.standings(doc, computed_at))
            self._standings[arm.name] = cached
        return cached[1]

    @_rpc
    async def GetGameRecord(
        self, request: pb.GetGameRecordRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetGameRecordResponse:
        gid = request.game_id
        if not gid or len(gid) > 100:
            raise BadRequestError("give a game id")
        self.p.competition(request.competition)  # an unknown one: refused before the store
        return await self.run(self._record, gid, request.competition)

    def _record(self, gid: str, competition: str = DEFAULT) -> pb.GetGameRecordResponse:
        """A published game's record: a game whose deal has rotations still to play is refused
        like an unknown one, so nobody reads a deal still to come (docs/security.md, "Deals"); so
        is an author's unrated challenge (take5_arena/service/challenges.py: theirs alone)."""
        with self.store(competition) as store:
            try:
                if challenges.challenge_of(store, gid) is not None:
                    raise StoreError(gid)
                record = store.records.get(gid, published_only=True)
            except WithheldError:
                raise NotFoundError(
                    f"game {gid[:40]!r} is not published yet: its deal has rotations still to play"
                ) from None
            except StoreError:
                raise NotFoundError(f"no recorded game {gid[:40]!r}") from None
        return messages.game_record(gid, record)

    # -- MyBotFaults -------------------------------------------------------------------------------

    @_rpc
    async def MyBotFaults(
        self, request: pb.MyBotFaultsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.MyBotFaultsResponse:
        author = await self.author(context)
        with self.counts.call(author.name):
            name = check_name("bot", request.bot_name)
            limit = min(int(request.limit or defaults.FAULTS_SHOWN), defaults.MAX_FAULTS_SHOWN)
            self.p.competition(request.competition)
            return await self.run(self._faults, author, name, limit, request.competition)

    def _faults(
        self, author: Author, name: str, limit: int, competition: str = DEFAULT
    ) -> pb.MyBotFaultsResponse:
        accounts = self.p.accounts
        claim = accounts.check_owner(author, name, must_exist=False)
        refusal = accounts.last_refusal(name, author.name)
        if claim.author == author.name and claim.created_at == "" and refusal is None:
            raise NotFoundError(f"you have no bot named {name!r}")  # neither held nor submitted
        with self.store(competition) as store:
            versions = {v.id: v.version for v in store.versions.all() if v.name == name}
            games = store.records.faulted_games(list(versions), limit)
        return messages.bot_faults(name, refusal, versions, games, limit)

    # -- AskChallenge / GetChallenge ---------------------------------------------------------------

    @_rpc
    async def AskChallenge(
        self, request: pb.AskChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ChallengeResponse:
        """The web form's challenge (take5_arena/web/challenging.py), over the API: checked
        against the competition's store, stored and played by its ladder, limited per account
        across the competitions (take5_arena/service/challenges.py)."""
        author = await self.author(context)
        with self.counts.call(author.name):
            arm = self.p.competition(request.competition)
            if arm.ladder is None:
                where = f"competition {arm.name}" if arm.name else "this arena"
                raise BadRequestError(f"{where} plays no games now: no challenges")
            if len(request.opponents) > defaults.MAX_CHALLENGE_OPPONENTS:
                raise BadRequestError("too many opponents for any table")
            seats = await self.run(
                challenges.seats_in,
                arm.directory,
                self.p.accounts,
                author.name,
                request.bot_name,
                list(request.opponents),
                arm.ladder.settings.players,
            )
            asked = arm.ladder.challenge(author.name, seats)
            try:
                cid = await asyncio.wait_for(
                    asyncio.wrap_future(asked), defaults.CHALLENGE_STORED_SECONDS
                )
            except asyncio.TimeoutError:
                asked.cancel()
                await context.abort(
                    grpc.StatusCode.UNAVAILABLE, "the arena is busy; ask again in a minute"
                )
            where = f" in {arm.name}" if arm.name else ""
            self.log.info("%s asked for %s%s: %s", author.name, cid, where, ", ".join(seats))
            return await self.run(self._challenge, author, cid, arm.name)

    @_rpc
    async def GetChallenge(
        self, request: pb.GetChallengeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ChallengeResponse:
        author = await self.author(context)
        with self.counts.call(author.name):
            cid = request.challenge_id
            if not cid or len(cid) > 100:
                raise BadRequestError("give a challenge id")
            arm = self.p.competition(request.competition)
            return await self.run(self._challenge, author, cid, arm.name)

    def _challenge(self, author: Author, cid: str, competition: str) -> pb.ChallengeResponse:
        """One of the author's challenges in ``competition``; any other id: NOT_FOUND."""
        with self.store(competition) as store:
            found = challenges.get(store, author.name, cid)
        return messages.challenge(found, competition)


__all__ = ["ArenaService", "Competition", "ServiceParts"]
