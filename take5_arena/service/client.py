"""The author's side of the arena service: a small typed client over arena.proto.

Transport: ``--ca FILE`` means TLS trusting that certificate (a self-signed one); ``--insecure``
means plain text; otherwise loopback addresses are plain text (the server's default) and every other
address is TLS with the system's root certificates. A token is never sent in plain text to an
address that is not loopback unless ``--insecure`` asks for it.

The token comes from ``--token-file`` or the ``TAKE5_TOKEN`` environment variable (never a command
line argument, which other users of the machine can read), and travels as ``authorization: Bearer``.

What the server sends back (bot names, a bot's output, fault details) is returned as sent: the
command line shows it through take5_arena/cli/terminal.py, the SDK's one definition of inert text.
"""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc

from take5_arena.referee.archive import ArchiveLimits, pack
from take5_arena.service.address import is_loopback
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.defaults import CHUNK_BYTES
from take5_arena.service.errors import ClientError

Reply = TypeVar("Reply")

TOKEN_ENV = "TAKE5_TOKEN"
SERVER_ENV = "TAKE5_SERVER"
FOLLOW_WAIT_SECONDS = 25
"""Seconds one GetSubmission long poll asks to wait (the server caps it)."""
UPLOAD_ATTEMPTS = 4
"""Times an upload is sent when the connection fails (:meth:`ArenaClient.upload`)."""
RETRY_SECONDS = 1.0
"""The wait before the second attempt; it doubles before each later one (1, 2, 4 s)."""


def read_token(token_file: Path | None) -> str | None:
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ClientError(
                f"cannot read the token file: {error.strerror}: {token_file}"
            ) from None
        return text.splitlines()[0].strip() if text else None
    value = os.environ.get(TOKEN_ENV, "").strip()
    return value or None


@dataclass
class Packed:
    data: bytes
    files: int
    sha256: str


def pack_folder(folder: Path, limits: ArchiveLimits | None = None) -> Packed:
    """The folder as the archive the server accepts (ArchiveError if it would be refused)."""
    limits = limits or ArchiveLimits()
    buf = io.BytesIO()
    files = pack(folder, buf, limits)
    data = buf.getvalue()
    return Packed(data, files, hashlib.sha256(data).hexdigest())


class ArenaClient:
    def __init__(
        self,
        server: str,
        *,
        token: str | None = None,
        ca: Path | None = None,
        insecure: bool = False,
        timeout: float = 600.0,
        competition: str = "",
    ):
        host = server.rpartition(":")[0] or server
        self.server = server
        self.competition = competition
        """The competition every call names ('' the arena's default: a 1.0 arena's only one)."""
        self.timeout = timeout
        if ca is not None:
            try:
                roots = ca.read_bytes()
            except OSError as error:
                raise ClientError(
                    f"cannot read the CA certificate: {error.strerror}: {ca}"
                ) from None
            self.channel = grpc.secure_channel(
                server, grpc.ssl_channel_credentials(root_certificates=roots)
            )
        elif insecure or is_loopback(host):
            self.channel = grpc.insecure_channel(server)
        else:
            self.channel = grpc.secure_channel(server, grpc.ssl_channel_credentials())
        # the generated stub is untyped: _call checks the type of every reply instead
        self.stub = pb_grpc.ArenaStub(self.channel)  # type: ignore[no-untyped-call]
        self.metadata = [("authorization", f"Bearer {token}")] if token else []

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> ArenaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(
        self, method: str, request: Any, reply: type[Reply], timeout: float | None = None
    ) -> Reply:
        """Call ``method`` of the Arena service; its reply, checked to be a ``reply``."""
        call = getattr(self.stub, method)
        try:
            answer = call(request, metadata=self.metadata, timeout=timeout or self.timeout)
        except grpc.RpcError as error:
            code = error.code() if hasattr(error, "code") else None
            details = error.details() if hasattr(error, "details") else str(error)
            if code == grpc.StatusCode.UNAVAILABLE:
                details = (
                    f"cannot reach the arena at {self.server} ({(details or '').splitlines()[0]})"
                )
            elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
                details = f"no answer from the arena at {self.server} in time"
            raise ClientError((details or str(code)).splitlines()[0], code) from None
        if not isinstance(answer, reply):
            raise ClientError(f"the arena answered {method} with a {type(answer).__name__}")
        return answer

    def submit(
        self,
        bot_name: str,
        packed: Packed,
        *,
        follow: bool = True,
        on_wait: Callable[[pb.SubmitBotResponse], None] | None = None,
    ) -> pb.SubmitBotResponse:
        """Upload; with ``follow``, then wait for the outcome (:meth:`follow`)."""
        reply = self.upload(bot_name, packed)
        return self.follow(reply, on_wait=on_wait) if follow else reply

    def follow(
        self,
        reply: pb.SubmitBotResponse,
        *,
        on_wait: Callable[[pb.SubmitBotResponse], None] | None = None,
        timeout: float | None = None,
    ) -> pb.SubmitBotResponse:
        """Long-poll the submission until it is judged (or ``timeout`` seconds, default the
        client's); ``on_wait`` hears each answer that says why the arena waits."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        said = ""
        while reply.outcome == pb.SUBMIT_PENDING:
            if reply.waiting and reply.waiting != said and on_wait is not None:
                on_wait(reply)
                said = reply.waiting
            left = deadline - time.monotonic()
            if left <= 0:
                break
            wait = int(min(left, FOLLOW_WAIT_SECONDS)) or 1
            reply = self.submission(reply.submission_id, wait_seconds=wait)
        return reply

    def submission(self, submission_id: str, *, wait_seconds: int = 0) -> pb.SubmitBotResponse:
        request = pb.GetSubmissionRequest(submission_id=submission_id, wait_seconds=wait_seconds)
        return self._call("GetSubmission", request, pb.SubmitBotResponse, wait_seconds + 30)

    def upload(
        self, bot_name: str, packed: Packed, *, upload_key: str | None = None
    ) -> pb.SubmitBotResponse:
        """Send the archive; the arena answers once it is stored (SUBMIT_PENDING and the id).

        The upload is named (``upload_key``, a fresh random one if not given) and sent again under
        the same name when the arena cannot be reached (UNAVAILABLE: a connection cut, a restart;
        it may have stored the upload and lost only its answer), :data:`UPLOAD_ATTEMPTS` times
        at most: an arena that stored it answers the first upload's submission, never a second
        version."""
        key = upload_key or secrets.token_hex(16)

        def messages() -> Iterator[pb.SubmitBotRequest]:
            yield pb.SubmitBotRequest(
                metadata=pb.SubmitMetadata(
                    bot_name=bot_name,
                    archive_size=len(packed.data),
                    archive_sha256=packed.sha256,
                    upload_key=key,
                    competition=self.competition,
                )
            )
            for i in range(0, len(packed.data), CHUNK_BYTES):
                yield pb.SubmitBotRequest(chunk=packed.data[i : i + CHUNK_BYTES])

        attempt = 1
        while True:
            try:
                return self._call("SubmitBot", messages(), pb.SubmitBotResponse)
            except ClientError as error:
                if attempt >= UPLOAD_ATTEMPTS or error.code != grpc.StatusCode.UNAVAILABLE:
                    raise
            time.sleep(RETRY_SECONDS * 2 ** (attempt - 1))
            attempt += 1

    def my_bots(self) -> pb.ListMyBotsResponse:
        request = pb.ListMyBotsRequest(competition=self.competition)
        return self._call("ListMyBots", request, pb.ListMyBotsResponse, 60)

    def withdraw(self, bot_name: str) -> pb.WithdrawBotResponse:
        request = pb.WithdrawBotRequest(bot_name=bot_name, competition=self.competition)
        return self._call("WithdrawBot", request, pb.WithdrawBotResponse, 60)

    def standings(self) -> pb.StandingsResponse:
        request = pb.StandingsRequest(competition=self.competition)
        return self._call("Standings", request, pb.StandingsResponse, 60)

    def record(self, game_id: str) -> pb.GetGameRecordResponse:
        request = pb.GetGameRecordRequest(game_id=game_id, competition=self.competition)
        return self._call("GetGameRecord", request, pb.GetGameRecordResponse, 60)

    def faults(self, bot_name: str, limit: int = 50) -> pb.MyBotFaultsResponse:
        request = pb.MyBotFaultsRequest(
            bot_name=bot_name, limit=limit, competition=self.competition
        )
        return self._call("MyBotFaults", request, pb.MyBotFaultsResponse, 60)

    def challenge(self, bot_name: str, opponents: Sequence[str]) -> pb.ChallengeResponse:
        """Ask for a challenge of ``bot_name`` against ``opponents`` in the client's competition;
        the answer comes once its ladder stored it (AskChallenge, since 1.2)."""
        request = pb.AskChallengeRequest(
            bot_name=bot_name, opponents=list(opponents), competition=self.competition
        )
        return self._call("AskChallenge", request, pb.ChallengeResponse, 60)

    def get_challenge(self, challenge_id: str) -> pb.ChallengeResponse:
        """One of the author's challenges in the client's competition, as it is now."""
        request = pb.GetChallengeRequest(challenge_id=challenge_id, competition=self.competition)
        return self._call("GetChallenge", request, pb.ChallengeResponse, 60)


__all__ = [
    "FOLLOW_WAIT_SECONDS",
    "RETRY_SECONDS",
    "SERVER_ENV",
    "TOKEN_ENV",
    "UPLOAD_ATTEMPTS",
    "ArenaClient",
    "Packed",
    "pack_folder",
    "read_token",
]
