"""The Docker engine, through the Docker SDK for Python (docker-py) and its Engine API.

Every container operation of the sandbox (create, start, inspect, list by label, remove, events,
image inspection) is one HTTP request on the engine's socket, about 2 ms, where a ``docker``
command-line process costs 25-70 ms of wall time and 12-14 ms of CPU. Errors come typed:
`docker.errors.NotFound` (no such container or image), `docker.errors.APIError` (the engine
refused), and anything that means "no engine" (no socket, connection refused, permission denied,
a timeout) becomes one error, `EngineUnavailableError`.

The command line is used nowhere: images are built through the Engine API too
(take5_arena/referee/sandbox/images.py), and the referee spawns no ``docker`` process during a match
(a test checks it with a PATH without ``docker``).

The engine is found as the ``docker`` client finds it: ``DOCKER_HOST`` (and ``DOCKER_TLS_VERIFY``,
``DOCKER_CERT_PATH``), else ``unix:///var/run/docker.sock``.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from .. import defaults
from .errors import EngineUnavailableError

if TYPE_CHECKING:
    import docker

_lock = threading.Lock()
_client: docker.DockerClient | None = None
_client_pid = 0

POOL_SIZE = 32
"""HTTP connections kept to the engine: container starts and removals run in parallel threads."""


def connect(*, timeout: float = defaults.ENGINE_TIMEOUT) -> docker.DockerClient:
    """A new client that has seen the engine answer a ping; EngineUnavailableError (with the reason)
    if not."""
    import docker
    import requests

    try:
        client = docker.DockerClient.from_env(timeout=int(timeout), max_pool_size=POOL_SIZE)
    except docker.errors.DockerException as error:
        raise EngineUnavailableError(_reason(error)) from None
    try:
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as error:
        client.close()
        raise EngineUnavailableError(_reason(error)) from None
    return client


def client() -> docker.DockerClient:
    """The shared client of this process (made on first use; thread-safe). A forked child makes
    its own: the parent's pooled connections must not be shared."""
    global _client, _client_pid
    with _lock:
        if _client is None or _client_pid != os.getpid():
            _client = connect()
            _client_pid = os.getpid()
        return _client


def engine_answers(*, timeout: float = 20.0) -> bool:
    """Whether an engine answers now (asked afresh, on a new connection)."""
    try:
        connect(timeout=timeout).close()
        return True
    except EngineUnavailableError:
        return False


def engine_version() -> str:
    """The engine's version, e.g. ``20.10.24``; EngineUnavailableError if none answers."""
    import docker

    try:
        return str(client().version().get("Version", "?"))
    except docker.errors.DockerException as error:
        raise EngineUnavailableError(_reason(error)) from None


def is_unavailable(error: BaseException) -> bool:
    """Whether an exception raised by a request means the engine went away (not a refused
    request)."""
    import docker
    import requests

    if isinstance(error, docker.errors.APIError):
        return False
    return isinstance(
        error, (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
    )


def _reason(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    # requests' connection errors nest the cause in a long repr: keep the gist, on one line.
    text = " ".join(text.split())
    if len(text) > 300:
        text = text[:300] + "..."
    return f"no Docker engine answers ({text}); start one with scripts/setup-docker.sh"


__all__ = [
    "POOL_SIZE",
    "EngineUnavailableError",
    "client",
    "connect",
    "engine_answers",
    "engine_version",
    "is_unavailable",
]
