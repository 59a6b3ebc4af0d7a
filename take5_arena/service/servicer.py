"""The arena's gRPC methods (proto/take5/arena/v1/arena.proto): who may call what, and what each
call reads and writes.

Authors submit, list, withdraw and read the faults of their own bots (a token in every call,
take5_arena/service/authors.py); standings and records are public. The data comes from the
tournament's store through its methods (take5_arena/referee/store/), the accounts
(take5_arena/service/authors.py) and the publisher (take5_arena/service/ladder.py); the replies
are written by take5_arena/service/messages.py.

Errors reach the client as gRPC status codes with a one-line message (the table is in the .proto):
a :class:`~take5_arena.service.errors.RequestError` as its own ``code``, a store error as
NOT_FOUND, and an unexpected error in the server as INTERNAL with a generic message (the details go
to the server's log).
"""

from __future__ import annotations

import concurrent.futures
import functools
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

import grpc

from take5_arena.referee.archive import ArchiveLimits
from take5_arena.referee.store import Store, StoreError
from take5_arena.service import defaults, messages
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.authors import Accounts, Author, check_name
from take5_arena.service.errors import (
    BadRequestError,
    LimitExceededError,
    NotFoundError,
    RequestError,
    ServiceError,
)
from take5_arena.service.intake import Spool, Validated, Validator
from take5_arena.service.ladder import Ladder, Publisher

_Request = TypeVar("_Request")
_Reply = TypeVar("_Reply")


@dataclass
class ServiceParts:
    """What the servicer works with (made and stopped by take5_arena/service/serve.py)."""

    directory: Path
    accounts: Accounts
    spool: Spool
    validator: Validator
    publisher: Publisher
    ladder: Ladder | None
    archive_limits: ArchiveLimits


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    context.abort(code, message)
    raise AssertionError("unreachable: context.abort raises")


def _rpc(
    method: Callable[[ArenaService, _Request, grpc.ServicerContext], _Reply],
) -> Callable[[ArenaService, _Request, grpc.ServicerContext], _Reply]:
    """Arena errors become their status code; anything else is INTERNAL (and logged)."""

    @functools.wraps(method)
    def wrapper(self: ArenaService, request: _Request, context: grpc.ServicerContext) -> _Reply:
        try:
            return method(self, request, context)
        except RequestError as error:
            _abort(context, error.code, str(error))
        except StoreError as error:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(error))
        except ServiceError as error:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except Exception as error:  # noqa: BLE001 - the client gets a clean status, the log the details
            self.log(
                f"{method.__name__} failed: {type(error).__name__}: {error}\n"
                + traceback.format_exc(limit=8)
            )
            _abort(context, grpc.StatusCode.INTERNAL, "the arena failed on this call (see its log)")

    return wrapper


class ArenaService(pb_grpc.ArenaServicer):
    """The gRPC methods (documented in arena.proto)."""

    def __init__(self, parts: ServiceParts, log: Callable[[str], None]) -> None:
        self.p = parts
        self.log = log
        self.stopping = threading.Event()
        self.uploads = threading.BoundedSemaphore(defaults.MAX_UPLOADS_AT_ONCE)
        self.uploading: dict[str, int] = {}
        self.uploading_lock = threading.Lock()

    # -- helpers -------------------------------------------------------------------------------

    def author(self, context: grpc.ServicerContext) -> Author:
        token = None
        for key, value in context.invocation_metadata():
            if key == "authorization" and isinstance(value, str):
                scheme, _, rest = value.partition(" ")
                if scheme.lower() == "bearer":
                    token = rest.strip()
        return self.p.accounts.authenticate(token)

    def store(self) -> Store:
        return Store(self.p.directory, readonly=True)

    # -- SubmitBot --------------------------------------------------------------------------------

    @_rpc
    def SubmitBot(
        self, request_iterator: Iterator[pb.SubmitBotRequest], context: grpc.ServicerContext
    ) -> pb.SubmitBotResponse:
        author = self.author(context)
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "metadata":
            raise BadRequestError("the first message of SubmitBot must carry the metadata")
        md = first.metadata
        name = check_name("bot", md.bot_name)
        if len(md.archive_sha256) != 64 or any(
            c not in "0123456789abcdef" for c in md.archive_sha256
        ):
            raise BadRequestError("archive_sha256 must be 64 lowercase hex digits")
        if md.archive_size <= 0:
            raise BadRequestError("archive_size must be given")
        max_bytes = min(author.limits.max_archive_bytes, self.p.archive_limits.max_archive_bytes)
        if md.archive_size > max_bytes:
            raise LimitExceededError(
                f"the archive has {md.archive_size} bytes; the limit is {max_bytes}"
            )
        self.p.accounts.check_can_submit(author, name, md.archive_size)
        with self.uploading_lock:
            if self.uploading.get(author.name, 0) >= defaults.MAX_UPLOADS_PER_AUTHOR:
                raise LimitExceededError(
                    f"you have {defaults.MAX_UPLOADS_PER_AUTHOR} uploads in progress; wait for them"
                )
            self.uploading[author.name] = self.uploading.get(author.name, 0) + 1
        # A client that stalls must not hold an upload slot for ever: cancel the call after a while
        # (the stream then ends, short of its declared size, and the partial file is removed).
        watchdog = threading.Timer(defaults.UPLOAD_SECONDS, context.cancel)
        watchdog.daemon = True
        watchdog.start()
        try:
            if not self.uploads.acquire(timeout=defaults.UPLOAD_SLOT_WAIT):
                raise LimitExceededError(
                    "the arena is receiving too many uploads at once; try again in a minute"
                )
            try:

                def chunks() -> Iterator[bytes]:
                    for message in request_iterator:
                        if message.WhichOneof("part") != "chunk":
                            raise BadRequestError("only archive chunks may follow the metadata")
                        yield message.chunk

                path = self.p.spool.receive(
                    chunks(), size=md.archive_size, sha256=md.archive_sha256, max_bytes=max_bytes
                )
            finally:
                self.uploads.release()
        finally:
            watchdog.cancel()
            with self.uploading_lock:
                self.uploading[author.name] -= 1
        try:
            row = self.p.accounts.record_submission(
                author,
                name,
                archive_sha256=md.archive_sha256,
                archive_path=str(path),
                archive_bytes=md.archive_size,
            )
        except ServiceError:
            path.unlink(missing_ok=True)  # complete, but refused at the last moment (a limit)
            raise
        self.log(f"submission {row.id}: {author.name}/{name}, {md.archive_size} bytes")
        future = self.p.validator.submit(row)
        while True:
            try:
                result: Validated = future.result(timeout=0.5)
                break
            except concurrent.futures.TimeoutError:
                if self.stopping.is_set() or not context.is_active():
                    return messages.submit_pending(row)
        return messages.submit_verdict(row, result)

    # -- ListMyBots / WithdrawBot
    # -------------------------------------------------------------------

    @_rpc
    def ListMyBots(
        self, request: pb.ListMyBotsRequest, context: grpc.ServicerContext
    ) -> pb.ListMyBotsResponse:
        author = self.author(context)
        names = self.p.accounts.bots_of(author.name)
        with self.store() as store:
            active = store.entrant_states()
            versions = [v for v in store.versions() if v.name in names]
            stats = store.version_stats()
        submissions = self.p.accounts.submissions_of(author.name)
        return messages.my_bots(author, names, active, versions, stats, submissions)

    @_rpc
    def WithdrawBot(
        self, request: pb.WithdrawBotRequest, context: grpc.ServicerContext
    ) -> pb.WithdrawBotResponse:
        author = self.author(context)
        name = check_name("bot", request.bot_name)
        self.p.accounts.check_owner(author, name)
        with Store(self.p.directory) as store:
            was_active = store.withdraw(name)
        if self.p.ladder is not None:
            self.p.ladder.wake()
        self.log(f"withdrawn: {author.name}/{name}")
        return pb.WithdrawBotResponse(bot_name=name, was_active=was_active)

    # -- public: Standings / GetGameRecord
    # ------------------------------------------------------------

    @_rpc
    def Standings(
        self, request: pb.StandingsRequest, context: grpc.ServicerContext
    ) -> pb.StandingsResponse:
        return messages.standings(*self.p.publisher.latest())

    @_rpc
    def GetGameRecord(
        self, request: pb.GetGameRecordRequest, context: grpc.ServicerContext
    ) -> pb.GetGameRecordResponse:
        gid = request.game_id
        if not gid or len(gid) > 100:
            raise BadRequestError("give a game id")
        with self.store() as store:
            try:
                record = store.record(gid)
            except StoreError:
                raise NotFoundError(f"no recorded game {gid[:40]!r}") from None
        return messages.game_record(gid, record)

    # -- MyBotFaults -------------------------------------------------------------------------------

    @_rpc
    def MyBotFaults(
        self, request: pb.MyBotFaultsRequest, context: grpc.ServicerContext
    ) -> pb.MyBotFaultsResponse:
        author = self.author(context)
        name = check_name("bot", request.bot_name)
        self.p.accounts.check_owner(author, name)
        limit = min(int(request.limit or defaults.FAULTS_SHOWN), defaults.MAX_FAULTS_SHOWN)
        refusal = self.p.accounts.last_refusal(name)
        with self.store() as store:
            versions = {v.id: v.version for v in store.versions() if v.name == name}
            games = store.faulted_games(list(versions), limit)
        return messages.bot_faults(name, refusal, versions, games, limit)


__all__ = ["ArenaService", "ServiceParts"]
