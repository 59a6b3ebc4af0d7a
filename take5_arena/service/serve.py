"""The arena service: ``referee serve --tournament DIR``, the gRPC API of proto/take5/arena/v1/arena.proto.

One process holds the tournament (the same run lock as ``referee tournament run``, so the two never
play the same store at once) and runs, side by side:

* the gRPC server (:class:`ArenaService`): authors submit, list, withdraw and read faults of their
  own bots (a token in every call, take5_arena/service/authors.py); standings and records are public;
* the validation workers (take5_arena/service/intake.py): an upload is spooled to disk, recorded, unpacked through
  take5_arena/referee/archive.py and validated with ``referee submit``'s code on a worker thread;
* the ladder and the publisher (take5_arena/service/ladder.py): games keep being played between the active bots,
  standings and the static site refreshed as they land.

Transport security: with ``--cert/--key`` the server speaks TLS only. Without them it refuses to
listen anywhere but loopback (tokens would cross the network in clear text) unless
``--insecure-public`` is given, and it says which of these it is doing when it starts.

Errors reach the client as gRPC status codes with a one-line message (the table is in the .proto);
an unexpected error in the server is INTERNAL with a generic message, and logged here.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import ipaddress
import json
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from take5_arena.referee.archive import ArchiveLimits
from take5_arena.referee.store import Store, StoreError
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.authors import (
    ArenaDB,
    ArenaError,
    AuthError,
    Author,
    BadRequest,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    check_name,
)
from take5_arena.service.intake import Spool, Validated, Validator
from take5_arena.service.ladder import Ladder, LadderConfig, Publisher

DEFAULT_LISTEN = "127.0.0.1:50600"
CHUNK_BYTES = 256 * 1024
MAX_UPLOADS_AT_ONCE = 8  # in all
MAX_UPLOADS_PER_AUTHOR = 2  # at once
UPLOAD_SECONDS = 300.0  # an upload still running after this is cut off (a client that stalls)

_CODES: dict[type, grpc.StatusCode] = {
    AuthError: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    NotFound: grpc.StatusCode.NOT_FOUND,
    LimitExceeded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    BadRequest: grpc.StatusCode.INVALID_ARGUMENT,
}


class ServeError(Exception):
    """The server cannot start (bad address, certificate, tournament); the message is for the user."""


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ServeError(f"{address!r}: give HOST:PORT (for example 127.0.0.1:50600)")
    return host, int(port)


def _rpc(method: Callable) -> Callable:
    """Arena errors become their status code; anything else is INTERNAL (and logged)."""

    @functools.wraps(method)
    def wrapper(self: ArenaService, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except ArenaError as error:
            code = next(
                (c for t, c in _CODES.items() if isinstance(error, t)),
                grpc.StatusCode.INVALID_ARGUMENT,
            )
            context.abort(code, str(error))
        except StoreError as error:
            context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        except Exception as error:  # noqa: BLE001 - the client gets a clean status, the log the details
            self.log(
                f"{method.__name__} failed: {type(error).__name__}: {error}\n"
                + traceback.format_exc(limit=8)
            )
            context.abort(grpc.StatusCode.INTERNAL, "the arena failed on this call (see its log)")

    return wrapper


@dataclass
class ServiceParts:
    directory: Path
    db: ArenaDB
    spool: Spool
    validator: Validator
    publisher: Publisher
    ladder: Ladder | None
    archive_limits: ArchiveLimits


class ArenaService(pb_grpc.ArenaServicer):
    """The gRPC methods (documented in arena.proto)."""

    def __init__(self, parts: ServiceParts, log: Callable[[str], None]):
        self.p = parts
        self.log = log
        self.stopping = threading.Event()
        self.uploads = threading.BoundedSemaphore(MAX_UPLOADS_AT_ONCE)
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
        return self.p.db.authenticate(token)

    def store(self) -> Store:
        return Store(self.p.directory, readonly=True)

    # -- SubmitBot --------------------------------------------------------------------------------

    @_rpc
    def SubmitBot(
        self, request_iterator: Iterator[pb.SubmitBotRequest], context: grpc.ServicerContext
    ):
        author = self.author(context)
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "metadata":
            raise BadRequest("the first message of SubmitBot must carry the metadata")
        md = first.metadata
        name = check_name("bot", md.bot_name)
        if len(md.archive_sha256) != 64 or any(
            c not in "0123456789abcdef" for c in md.archive_sha256
        ):
            raise BadRequest("archive_sha256 must be 64 lowercase hex digits")
        if md.archive_size <= 0:
            raise BadRequest("archive_size must be given")
        max_bytes = min(author.limits.max_archive_bytes, self.p.archive_limits.max_archive_bytes)
        if md.archive_size > max_bytes:
            raise LimitExceeded(
                f"the archive has {md.archive_size} bytes; the limit is {max_bytes}"
            )
        self.p.db.check_can_submit(author, name, md.archive_size)
        with self.uploading_lock:
            if self.uploading.get(author.name, 0) >= MAX_UPLOADS_PER_AUTHOR:
                raise LimitExceeded(
                    f"you have {MAX_UPLOADS_PER_AUTHOR} uploads in progress; wait for them"
                )
            self.uploading[author.name] = self.uploading.get(author.name, 0) + 1
        # A client that stalls must not hold an upload slot for ever: cancel the call after a while
        # (the stream then ends, short of its declared size, and the partial file is removed).
        watchdog = threading.Timer(UPLOAD_SECONDS, context.cancel)
        watchdog.daemon = True
        watchdog.start()
        try:
            if not self.uploads.acquire(timeout=5):
                raise LimitExceeded(
                    "the arena is receiving too many uploads at once; try again in a minute"
                )
            try:

                def chunks() -> Iterator[bytes]:
                    for message in request_iterator:
                        if message.WhichOneof("part") != "chunk":
                            raise BadRequest("only archive chunks may follow the metadata")
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
            row = self.p.db.record_submission(
                author,
                name,
                archive_sha256=md.archive_sha256,
                archive_path=str(path),
                archive_bytes=md.archive_size,
            )
        except ArenaError:
            path.unlink(
                missing_ok=True
            )  # complete, but refused at the last moment (a limit): not kept
            raise
        self.log(f"submission {row.id}: {author.name}/{name}, {md.archive_size} bytes")
        future = self.p.validator.submit(row)
        while True:
            try:
                result: Validated = future.result(timeout=0.5)
                break
            except concurrent.futures.TimeoutError:
                if self.stopping.is_set() or not context.is_active():
                    return pb.SubmitBotResponse(
                        outcome=pb.SUBMIT_PENDING, submission_id=row.id, bot_name=name
                    )
        outcome = {"accepted": pb.SUBMIT_ACCEPTED, "unchanged": pb.SUBMIT_UNCHANGED}.get(
            result.status, pb.SUBMIT_REFUSED
        )
        refused = outcome == pb.SUBMIT_REFUSED
        return pb.SubmitBotResponse(
            outcome=outcome,
            submission_id=row.id,
            bot_name=name,
            version=result.version,
            source_hash=result.source_hash,
            validation="" if refused else result.detail,
            reason=result.detail if refused else "",
            bot_output=result.bot_output[-4096:],
        )

    # -- ListMyBots / WithdrawBot -------------------------------------------------------------------

    @_rpc
    def ListMyBots(self, request: pb.ListMyBotsRequest, context: grpc.ServicerContext):
        author = self.author(context)
        names = self.p.db.bots_of(author.name)
        reply = pb.ListMyBotsResponse(
            author=author.name,
            limits=pb.AuthorLimits(
                max_active_bots=author.limits.max_active_bots,
                max_submissions_per_hour=author.limits.max_submissions_per_hour,
                max_archive_bytes=author.limits.max_archive_bytes,
            ),
        )
        with self.store() as store:
            stats = {
                r[0]: (r[1], r[2] or 0)
                for r in store.db.execute(
                    "SELECT version_id, COUNT(*), SUM(json_array_length(faults)) FROM seat_results GROUP BY version_id"
                )
            }
            active = {
                r[0]: bool(r[1]) for r in store.db.execute("SELECT name, active FROM entrants")
            }
            versions = [v for v in store.versions() if v.name in names]
        for name in names:
            bot = reply.bots.add(name=name, active=active.get(name, False))
            for v in versions:
                if v.name == name:
                    games, faults = stats.get(v.id, (0, 0))
                    bot.versions.add(
                        version=v.version,
                        source_hash=v.source_hash,
                        submitted_at=v.submitted_at,
                        validation=str(v.validation.get("smoke", "")),
                        games=games,
                        faults=faults,
                    )
        with self.store() as store:
            number = {v.id: v.version for v in store.versions()}
        for s in self.p.db.submissions_of(author.name):
            reply.submissions.add(
                submission_id=s.id,
                bot_name=s.bot_name,
                received_at=s.received_at,
                status=s.status,
                version=number.get(s.version_id or -1, 0),
                detail=s.detail,
                bot_output=s.bot_output,
                archive_sha256=s.archive_sha256,
            )
        return reply

    @_rpc
    def WithdrawBot(self, request: pb.WithdrawBotRequest, context: grpc.ServicerContext):
        author = self.author(context)
        name = check_name("bot", request.bot_name)
        self.p.db.check_owner(author, name)
        with Store(self.p.directory) as store:
            row = store.db.execute("SELECT active FROM entrants WHERE name = ?", (name,)).fetchone()
            was_active = bool(row and row[0])
            store.withdraw(name)
        if self.p.ladder is not None:
            self.p.ladder.wake()
        self.log(f"withdrawn: {author.name}/{name}")
        return pb.WithdrawBotResponse(bot_name=name, was_active=was_active)

    # -- public: Standings / GetGameRecord ------------------------------------------------------------

    @_rpc
    def Standings(self, request: pb.StandingsRequest, context: grpc.ServicerContext):
        doc, at = self.p.publisher.latest()
        if doc is None:
            return pb.StandingsResponse(games=0)
        reply = pb.StandingsResponse(
            games=int(doc.get("games") or 0),
            computed_at=at,
            standings_json=json.dumps(doc, ensure_ascii=False),
        )
        for row in doc.get("rows", []):
            low, high = row.get("interval") or (row["rating"], row["rating"])
            reply.rows.add(
                rank=int(row["rank"]),
                bot=str(row["entrant"]),
                rating=float(row["rating"]),
                rating_low=float(low),
                rating_high=float(high),
                games=int(row["games"]),
                mean_penalty=float(row.get("mean_penalty") or 0.0),
                faults=int(sum((row.get("faults") or {}).values())),
            )
        return reply

    @_rpc
    def GetGameRecord(self, request: pb.GetGameRecordRequest, context: grpc.ServicerContext):
        gid = request.game_id
        if not gid or len(gid) > 100:
            raise BadRequest("give a game id")
        with self.store() as store:
            try:
                record = store.record(gid)
            except StoreError:
                raise NotFound(f"no recorded game {gid[:40]!r}") from None
        return pb.GetGameRecordResponse(
            game_id=gid, record_json=json.dumps(public_record(record), ensure_ascii=False)
        )

    # -- MyBotFaults -------------------------------------------------------------------------------

    @_rpc
    def MyBotFaults(self, request: pb.MyBotFaultsRequest, context: grpc.ServicerContext):
        author = self.author(context)
        name = check_name("bot", request.bot_name)
        self.p.db.check_owner(author, name)
        limit = min(int(request.limit or 50), 500)
        reply = pb.MyBotFaultsResponse(bot_name=name)
        refusal = self.p.db.last_refusal(name)
        if refusal is not None:
            reply.last_refusal_output = (refusal.detail + "\n" + refusal.bot_output)[-4096:]
        with self.store() as store:
            versions = {v.id: v.version for v in store.versions() if v.name == name}
            if not versions:
                return reply
            marks = ",".join("?" * len(versions))
            rows = store.db.execute(
                f"SELECT sr.game_id, sr.seat, sr.version_id, r.finished_at, r.record FROM seat_results sr "
                f"JOIN results r ON r.game_id = sr.game_id WHERE sr.version_id IN ({marks}) AND sr.faults != '[]' "
                "ORDER BY r.seq DESC LIMIT ?",
                (*versions, limit),
            ).fetchall()
        for gid, seat, vid, finished, text in rows:
            record = json.loads(text)
            for fault in reversed((record.get("faults") or [])[seat]):
                if len(reply.faults) >= limit:
                    break
                reply.faults.add(
                    game_id=gid,
                    version=versions[vid],
                    round=int(fault.get("round", 0)),
                    turn=int(fault.get("turn", 0)),
                    kind=str(fault.get("kind", "")),
                    detail=str(fault.get("detail", ""))[:2000],
                    log_tail=_log_tail(record, seat, fault),
                    finished_at=finished,
                )
        return reply


def public_record(record: dict) -> dict:
    """A record as anyone may read it: without the bots' own output (the turns' ``logs``), which only
    each bot's author reads (MyBotFaults)."""
    out = dict(record)
    rounds = []
    for rnd in record.get("rounds") or []:
        rnd = dict(rnd)
        rnd["turns"] = [
            {k: v for k, v in turn.items() if k != "logs"} for turn in rnd.get("turns") or []
        ]
        rounds.append(rnd)
    out["rounds"] = rounds
    return out


def _log_tail(record: dict, seat: int, fault: dict) -> str:
    """The seat's own stderr lines up to the fault's turn, as far as the record keeps them (the turn
    objects' optional ``logs``: ``[seat, text]``); the last 2,000 characters."""
    lines: list[str] = []
    for rnd in record.get("rounds") or []:
        for number, turn in enumerate(rnd.get("turns") or [], start=1):
            if (rnd.get("round", 0), number) > (fault.get("round", 0), fault.get("turn", 0)):
                break
            for entry in turn.get("logs") or []:
                if isinstance(entry, (list, tuple)) and len(entry) == 2 and entry[0] == seat:
                    lines.append(str(entry[1]))
    return "\n".join(lines)[-2000:]


# ------------------------------------------------------------------------------------------------
# Running the server


@dataclass
class ServeOptions:
    directory: Path
    listen: str = DEFAULT_LISTEN
    cert: Path | None = None
    key: Path | None = None
    insecure_public: bool = False
    overrides: dict[str, Any] | None = None  # tournament settings (players, sandbox, timeout, ...)
    ladder: LadderConfig = LadderConfig()
    play: bool = True  # run the ladder
    validators: int = 1
    archive_limits: ArchiveLimits = ArchiveLimits()


def serve(
    options: ServeOptions,
    *,
    echo: Callable[[str], None] = print,
    ready: Callable[[int], None] | None = None,
) -> int:
    """Run the arena until SIGTERM or SIGINT; return the exit code (0, or 130 after Ctrl-C)."""
    from take5_arena.referee.tournament.errors import TournamentError  # lazy: start-up time
    from take5_arena.referee.tournament.run import run_lock  # lazy: start-up time
    from take5_arena.referee.tournament.settings import resolve_settings  # lazy: start-up time

    host, port = split_address(options.listen)
    tls = options.cert is not None or options.key is not None
    if tls and (options.cert is None or options.key is None):
        raise ServeError("give both --cert and --key")
    if not tls and not is_loopback(host) and not options.insecure_public:
        raise ServeError(
            f"without --cert/--key the arena listens on loopback only, not {host}: "
            "give a certificate, or --insecure-public to serve without TLS anyway"
        )
    credentials = None
    if tls:
        try:
            assert options.key is not None and options.cert is not None  # tls means both
            credentials = grpc.ssl_server_credentials(
                [(options.key.read_bytes(), options.cert.read_bytes())]
            )
        except OSError as error:
            raise ServeError(f"cannot read the certificate or key: {error}") from None

    directory = options.directory
    log_lock = threading.Lock()

    def log(line: str) -> None:
        with log_lock:
            echo(line)

    db = ArenaDB(directory, create=True)
    try:
        with Store(directory) as store:
            try:
                settings = resolve_settings(store.settings(), options.overrides or {})
            except TournamentError as error:
                raise ServeError(str(error)) from None
            store.set_settings(settings)
        try:
            lock = run_lock(directory)
            lock.__enter__()
        except TournamentError as error:
            raise ServeError(str(error)) from None
        try:
            return _serve_locked(options, settings, db, host, port, credentials, log, ready)
        finally:
            lock.__exit__(None, None, None)
    finally:
        db.close()


def _serve_locked(
    options: ServeOptions,
    settings: dict,
    db: ArenaDB,
    host: str,
    port: int,
    credentials: Any,
    log: Callable[[str], None],
    ready: Callable[[int], None] | None,
) -> int:
    directory = options.directory
    spool = Spool(directory)
    removed = spool.discard_partial()
    if removed:
        log(
            f"discarded {removed} half-received upload{'s' * (removed != 1)} or half-unpacked folder"
            f"{'s' * (removed != 1)} (the server was stopped during them)"
        )
    publisher = Publisher(directory, options.ladder, log=log)
    ladder_holder: list[Ladder] = []

    def wake_ladder() -> None:
        for lad in ladder_holder:
            lad.wake()

    validator = Validator(
        directory,
        db,
        spool,
        sandbox=settings["sandbox"],
        timeout=float(settings["timeout"]),
        limits=options.archive_limits,
        workers=options.validators,
        on_new_version=wake_ladder,
        log=log,
    )
    executor_cm: contextlib.AbstractContextManager = contextlib.nullcontext((None, None))
    if options.play and settings["executor"] not in ("auto", "local"):
        # lazy: start-up time
        from take5_arena.referee.tournament.executors import open_executor, parse_executor

        concurrency = _concurrency(settings)
        executor_cm = open_executor(parse_executor(settings["executor"]), concurrency)
    with executor_cm as (executor, info):
        ladder = None
        if options.play:
            ladder = Ladder(
                directory,
                settings,
                options.ladder,
                executor=executor,
                in_process=True if info is None else info.in_process,
                concurrency=_concurrency(settings),
                on_games=publisher.games_landed,
                log=log,
            )
            ladder_holder.append(ladder)
        parts = ServiceParts(
            directory, db, spool, validator, publisher, ladder, options.archive_limits
        )
        service = ArenaService(parts, log)
        server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix="rpc"),
            options=[
                ("grpc.max_receive_message_length", CHUNK_BYTES + 4096),
                ("grpc.max_send_message_length", 64 * 1024 * 1024),
                ("grpc.so_reuseport", 0),
            ],
        )
        pb_grpc.add_ArenaServicer_to_server(service, server)
        address = f"{host}:{port}"
        try:
            bound = (
                server.add_secure_port(address, credentials)
                if credentials
                else server.add_insecure_port(address)
            )
        except RuntimeError:
            bound = 0
        if not bound:
            raise ServeError(
                f"cannot listen on {address} (in use, or not an address of this machine)"
            )

        stop = threading.Event()
        interrupted = []

        def on_signal(signum: int, frame: Any) -> None:
            if signum == signal.SIGINT:
                interrupted.append(True)
            stop.set()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            server.start()
            publisher.start()
            for row in db.unfinished_submissions():
                log(
                    f"validating submission {row.id} ({row.author}/{row.bot_name}) recorded before the restart"
                )
                validator.submit(row)
            if ladder is not None:
                ladder.start()
            where = f"{host}:{bound}"
            if credentials:
                log(f"arena serving {directory} on {where} with TLS")
            elif is_loopback(host):
                log(
                    f"arena serving {directory} on {where} without TLS: loopback only "
                    "(give --cert/--key to serve other machines)"
                )
            else:
                log(
                    f"arena serving {directory} on {where} WITHOUT TLS (--insecure-public): tokens cross "
                    "the network in clear text"
                )
            if settings["sandbox"] == "local":
                log(
                    "warning: --sandbox local runs submitted bots as plain processes on this machine: "
                    "only for bots you trust (tests, trying it out); use docker for strangers' bots"
                )
            log(
                f"ladder: {'on' if ladder else 'off'}, tables of {settings['players']}, sandbox "
                f"{settings['sandbox']}; site: {options.ladder.site or 'not published'}"
            )
            if ready is not None:
                ready(bound)
            while not stop.wait(1.0):
                pass
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            log("arena stopping ...")
            service.stopping.set()
            server.stop(grace=3).wait(5)
            if ladder is not None:
                ladder.stop(timeout=10)
            validator.close(wait=False)
            publisher.stop()
            if settings["sandbox"] == "docker":
                # lazy: start-up time
                from take5_arena.referee.tournament.table import close_launchers

                close_launchers()
            log(f"arena stopped: {ladder.played if ladder else 0} ladder games played in this run")
    return 130 if interrupted else 0


def _concurrency(settings: dict) -> int:
    from take5_arena.referee.tournament.settings import concurrency_of  # lazy: start-up time

    return concurrency_of(settings)


__all__ = ["DEFAULT_LISTEN", "ArenaService", "ServeError", "ServeOptions", "is_loopback", "serve"]
