"""The referee's side of the protocol: one gRPC client per bot, with deadlines and fault mapping.

Transport only: requests arrive here already encoded (take5.convert) and answers leave as plain
numbers; every way a call can fail becomes a `CallFailedError` carrying a fault kind
(take5_arena/referee/match/faults.py).
Answers are decoded here rather than by gRPC, so that an answer that is not a protobuf message is a
"protocol" fault with a clear detail and not an opaque internal error.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import grpc
from google.protobuf.message import DecodeError

from take5.convert import PROTOCOL_MAJOR, PROTOCOL_VERSION, ProtocolError, parse_version
from take5.v1 import bot_pb2 as pb

from .. import defaults
from ..errors import RefereeError
from . import faults
from .faults import FaultKind, describe_exit
from .sanitize import clean_field

log = logging.getLogger("take5.referee")

MAX_ANSWER_BYTES = 64 * 1024
"""Largest answer the referee accepts: real answers are a few bytes."""

_SERVICE = "/take5.v1.Bot/"
_Answer = TypeVar("_Answer", pb.HandshakeResponse, pb.PickCardResponse, pb.ChooseRowResponse)


def referee_version() -> str:
    """What the referee tells a bot about itself in the handshake."""
    return f"{defaults.DISTRIBUTION} {defaults.VERSION}"


@dataclass(frozen=True)
class BotInfo:
    """What a bot says about itself in the handshake."""

    name: str = ""
    version: str = ""
    author: str = ""
    sdk: str = ""
    protocol_version: str = ""
    handshake: bool = True
    """False when the bot does not implement Handshake (it still plays)."""

    def fields(self) -> dict[str, str | bool]:
        """What the bot said, as the seat keys of a record (empty fields left out)."""
        out: dict[str, str | bool] = {}
        for key in ("version", "author", "sdk", "protocol_version"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if not self.handshake:
            out["handshake"] = False
        return out


class CallFailedError(RefereeError):
    """A call to a bot that produced no usable answer: what the bot did wrong (``kind``) and how."""

    def __init__(self, kind: FaultKind, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = FaultKind(kind)
        self.detail = detail


def _short(text: str, limit: int = 300) -> str:
    """An error detail from a bot: one line, control characters escaped, capped."""
    return clean_field(" ".join(text.split()), limit)


def failure(error: grpc.RpcError, method: str, timeout: float) -> CallFailedError:
    """The fault a failed call amounts to. Details avoid paths and timings, so records repeat."""
    code = error.code() if hasattr(error, "code") else None
    details = (error.details() if hasattr(error, "details") else "") or ""
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return CallFailedError(faults.TIMEOUT, f"no answer to {method} within {timeout:g} s")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        why = "connection refused" if "refused" in details.lower() else "connection lost"
        return CallFailedError(faults.CONNECTION, f"{method}: the bot cannot be reached ({why})")
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
        if "larger than max" in details.lower():
            return CallFailedError(
                faults.RESOURCE, f"{method}: the answer is larger than {MAX_ANSWER_BYTES} bytes"
            )
        return CallFailedError(faults.RESOURCE, f"{method}: {_short(details)}")
    if code is grpc.StatusCode.UNIMPLEMENTED:
        return CallFailedError(faults.PROTOCOL, f"the bot does not implement {method}")
    name = code.name if code is not None else "error"
    return CallFailedError(faults.ERROR, f"{method}: {name}: {_short(details)}")


def _decode(message_type: type[_Answer], raw: bytes, method: str) -> _Answer:
    message = message_type()
    try:
        message.ParseFromString(raw)
    except (DecodeError, ValueError, TypeError):
        raise CallFailedError(
            faults.PROTOCOL, f"the answer to {method} does not decode as {message_type.__name__}"
        ) from None
    return message


RUN_HINT = (
    ' — did you call run(MyBot())? A Python bot ends with: if __name__ == "__main__": run(MyBot())'
)
"""Said after "... exited ... before it served" with status 0: almost always a bot file that
defines its class but never starts serving it (local processes and containers alike)."""


def exited_before_serving(status: int) -> str:
    """The crash detail of a bot that ended before it served (with :data:`RUN_HINT` for status
    0)."""
    text = f"the bot {describe_exit(status)} before it served"
    if status == 0:
        text += RUN_HINT
    return text


def card_from(future: Future[bytes], timeout: float) -> int:
    """The card of a future holding an encoded PickCardResponse (or the call's failure)."""
    try:
        raw = future.result()
    except grpc.RpcError as error:
        raise failure(error, "PickCard", timeout) from None
    answer = _decode(pb.PickCardResponse, raw, "PickCard")
    if not answer.HasField("card"):
        raise CallFailedError(faults.PROTOCOL, "the answer to PickCard has no card")
    return int(answer.card)


def row_from(future: Future[bytes], timeout: float) -> int:
    """The row of a future holding an encoded ChooseRowResponse (or the call's failure)."""
    try:
        raw = future.result()
    except grpc.RpcError as error:
        raise failure(error, "ChooseRow", timeout) from None
    answer = _decode(pb.ChooseRowResponse, raw, "ChooseRow")
    if not answer.HasField("row"):
        raise CallFailedError(faults.PROTOCOL, "the answer to ChooseRow has no row")
    return int(answer.row)


class RemoteBot:
    """A gRPC connection to one bot. Thread-safe, like the channel under it."""

    def __init__(self, address: str, *, max_answer: int = MAX_ANSWER_BYTES) -> None:
        self.address = address
        self.channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", max_answer),
                ("grpc.initial_reconnect_backoff_ms", 100),
                ("grpc.min_reconnect_backoff_ms", 100),
                ("grpc.max_reconnect_backoff_ms", 1000),
                ("grpc.enable_http_proxy", 0),
                # Connections of this channel only: gRPC otherwise shares them between channels
                # of equal address and settings, and the Docker launcher's addresses
                # (unix:/proc/self/fd/N, a pinned socket) repeat for other bots as descriptor
                # numbers are reused, so a call could reach another bot's process.
                ("grpc.use_local_subchannel_pool", 1),
            ],
        )
        # Bytes in, bytes out: requests are encoded by take5.convert, answers decoded in _decode.
        self._handshake = self.channel.unary_unary(_SERVICE + "Handshake")
        self._pick = self.channel.unary_unary(_SERVICE + "PickCard")
        self._choose = self.channel.unary_unary(_SERVICE + "ChooseRow")
        self._over = self.channel.unary_unary(_SERVICE + "GameOver")
        # Calls that must not wait for each other (a turn's PickCards) run as blocking calls on
        # threads that live as long as the connection: grpc's own futures start a new polling
        # thread for each call on an idle channel, which costs more than the call itself.
        self._threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="take5-call")

    def close(self) -> None:
        self.channel.close()  # a call still waiting ends at once (CANCELLED)
        self._threads.shutdown(wait=False, cancel_futures=True)

    # -- start-up ------------------------------------------------------------------------------

    def wait_ready(
        self,
        timeout: float,
        exit_status: Callable[[], int | None] | None = None,
        spent: Callable[[], str | None] | None = None,
    ) -> None:
        """Wait until the bot accepts connections.

        `exit_status` is given for a bot the referee started: CallFailedError(crash) as soon as its
        process ends, CallFailedError(timeout) if it does not serve within `timeout` wall-clock
        seconds or once `spent` (the start allowance on the CPU clock) says it used it up. Without
        it (a bot given by address), CallFailedError(connection) when nothing accepts a connection
        in time.
        """
        deadline = time.monotonic() + timeout
        launched = exit_status is not None
        status_of = exit_status or (lambda: None)
        spent_of = spent or (lambda: None)
        path = self.address[len("unix:") :] if self.address.startswith("unix:") else None
        delay = 0.002
        # A Unix socket appears when the bot binds it: waiting for the file first avoids grpc's
        # reconnect back-off after an early refused attempt.
        while launched and path is not None and not os.path.exists(path):
            status = status_of()
            if status is not None:
                raise CallFailedError(faults.CRASH, exited_before_serving(status))
            used_up = spent_of()
            if used_up is not None:
                raise CallFailedError(faults.TIMEOUT, used_up)
            if time.monotonic() >= deadline:
                raise CallFailedError(
                    faults.TIMEOUT, f"the bot did not start serving within {timeout:g} s"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)
        ready = grpc.channel_ready_future(self.channel)
        try:
            while True:
                try:
                    ready.result(timeout=min(0.05, max(0.001, deadline - time.monotonic())))
                    return
                except grpc.FutureTimeoutError:
                    status = status_of()
                    if status is not None:
                        raise CallFailedError(faults.CRASH, exited_before_serving(status)) from None
                    used_up = spent_of() if launched else None
                    if used_up is not None:
                        raise CallFailedError(faults.TIMEOUT, used_up) from None
                    if time.monotonic() >= deadline:
                        if launched:
                            raise CallFailedError(
                                faults.TIMEOUT,
                                f"the bot did not accept a connection within {timeout:g} s",
                            ) from None
                        raise CallFailedError(
                            faults.CONNECTION,
                            f"nothing accepted a connection at {self.address} within {timeout:g} s",
                        ) from None
        finally:
            ready.cancel()

    def handshake(self, timeout: float, clock: pb.Clock | None = None) -> BotInfo:
        """Ask who the bot is, telling it the match's time control (`clock`, protocol 1.1);
        CallFailedError(incompatible) when its protocol major version differs."""
        request = pb.HandshakeRequest(
            protocol_version=PROTOCOL_VERSION,
            referee=referee_version(),
            time_limit_ms=max(1, round(timeout * 1000)),
            clock=clock,
        ).SerializeToString()
        try:
            raw = self._handshake(request, timeout=timeout)
        except grpc.RpcError as error:
            if error.code() is grpc.StatusCode.UNIMPLEMENTED:
                return BotInfo(handshake=False)
            raise failure(error, "Handshake", timeout) from None
        answer = _decode(pb.HandshakeResponse, raw, "Handshake")
        try:
            major, _ = parse_version(answer.protocol_version)
        except ProtocolError:
            major = -1
        if major != PROTOCOL_MAJOR:
            raise CallFailedError(
                faults.INCOMPATIBLE,
                f"the bot speaks protocol {answer.protocol_version!r}; this referee speaks "
                f"{PROTOCOL_VERSION} (take5.v{PROTOCOL_MAJOR}): rebuild the bot with a take5 SDK "
                f"for protocol {PROTOCOL_MAJOR}.x",
            )
        return BotInfo(
            name=clean_field(
                answer.name
            ),  # bot-controlled text: escaped and capped here, at ingress
            version=clean_field(answer.version),
            author=clean_field(answer.author),
            sdk=clean_field(answer.sdk),
            protocol_version=clean_field(answer.protocol_version or PROTOCOL_VERSION),
        )

    # -- decisions -----------------------------------------------------------------------------

    def pick_card_future(self, request: bytes, timeout: float) -> Future[bytes]:
        """Send an encoded PickCardRequest without waiting: the referee asks every seat at once."""
        return self._threads.submit(self._pick, request, timeout=timeout)

    def card_from(self, future: Future[bytes], timeout: float) -> int:
        """The card of a PickCard future (its deadline bounds the wait)."""
        return card_from(future, timeout)

    def choose_row(self, request: bytes, timeout: float) -> int:
        """Send an encoded ChooseRowRequest and wait for the row."""
        return self.row_from(self.choose_row_future(request, timeout), timeout)

    def choose_row_future(self, request: bytes, timeout: float) -> Future[bytes]:
        """Send an encoded ChooseRowRequest without waiting (the referee watches the bot's clock
        meanwhile)."""
        return self._threads.submit(self._choose, request, timeout=timeout)

    def row_from(self, future: Future[bytes], timeout: float) -> int:
        """The row of a ChooseRow future (its deadline bounds the wait)."""
        return row_from(future, timeout)

    def game_over_future(self, request: bytes, timeout: float) -> Future[bytes]:
        """Tell the bot how the game ended; the answer does not matter."""
        return self._threads.submit(self._over, request, timeout=timeout)
