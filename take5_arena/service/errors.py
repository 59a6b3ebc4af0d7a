"""The arena service's errors (``referee serve`` and its client), under one base::

    ServiceError ├── RequestError                  a call the server refuses; ``code``: its gRPC
    status │   ├── AuthenticationError       UNAUTHENTICATED: no token, a wrong or revoked one │
    ├── PermissionDeniedError     PERMISSION_DENIED: the bot belongs to another author │   ├──
    NotFoundError             NOT_FOUND: no such author, bot, submission or game (also LookupError)
    │   ├── LimitExceededError        RESOURCE_EXHAUSTED: a per-author or a server limit │   └──
    BadRequestError           INVALID_ARGUMENT: a bad name, a stream without metadata (also
    ValueError) ├── ServeError                    the server cannot start (address, certificate,
    tournament) └── ClientError                   a call from the client failed
    (take5_arena/service/client.py); ``code``: the status the server answered, or None

Every message is one line for the user. The servicer turns a :class:`RequestError` into its status
code (take5_arena/service/servicer.py); the client turns the status back into a
:class:`ClientError`, and the command line into an exit code (take5_arena/cli/service.py).
:class:`ServiceError` is a ``take5_arena.errors.ArenaError``, the base of the platform's errors.
"""

from __future__ import annotations

import errno
from typing import ClassVar

import grpc

from take5_arena.errors import ArenaError
from take5_arena.referee.store.health import StoreFaultError


class ServiceError(ArenaError):
    """Base of the arena service's errors."""


class RequestError(ServiceError):
    """A call the server refuses; the client sees ``code`` and the message."""

    code: ClassVar[grpc.StatusCode] = grpc.StatusCode.INVALID_ARGUMENT


class AuthenticationError(RequestError):
    """No token, an unknown or wrong one, or a revoked one."""

    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDeniedError(RequestError):
    """The bot belongs to another author."""

    code = grpc.StatusCode.PERMISSION_DENIED


class NotFoundError(RequestError, LookupError):
    """No such author, bot, submission or game."""

    code = grpc.StatusCode.NOT_FOUND


class LimitExceededError(RequestError):
    """A limit: active bots, submissions per hour, archive size, uploads at once."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class BadRequestError(RequestError, ValueError):
    """A malformed request: a bad name, a stream without metadata, ..."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class ServeError(ServiceError):
    """The server cannot start (bad address, certificate, tournament); the message is for the
    user."""


class ClientError(ServiceError):
    """A call failed: ``code`` is the gRPC status (None: before any call), the message one line."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        self.code = code
        super().__init__(message)


_HOST_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def host_fault(error: BaseException) -> str | None:
    """The one line for an author when the arena's host failed a call (a full or read-only disk,
    met by the store or by a file beside it: an upload's spool), else None. The server logs it as
    one line, never a traceback: it is the operator's to fix (docs/operations.md, "When the host
    fails"), and the author's to try again later."""
    if isinstance(error, StoreFaultError) or (
        isinstance(error, OSError) and error.errno in _HOST_ERRNOS
    ):
        return (
            "the arena cannot store anything now (its disk is full or read-only): try again later"
        )
    return None


__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ClientError",
    "LimitExceededError",
    "NotFoundError",
    "PermissionDeniedError",
    "RequestError",
    "ServeError",
    "ServiceError",
    "host_fault",
]
