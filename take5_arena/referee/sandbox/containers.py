"""Bot containers: the one way one is created and started, and how they are inspected and removed.

`start_container` is the only function in the code base that creates a container of an image a bot
author influenced, at game time and for probes alike; it always applies the sandbox flags of
`take5_arena.referee.sandbox.limits.container_kwargs`. tests/test_docker_sandbox.py lists every
container creation or run in referee/, arena/, bench/ and scripts/ and fails if one bypasses it.

What the sandbox needs to know about an image comes from the image's config and labels, read with
an image inspection (`image_facts`): its command (ENTRYPOINT and CMD), its declared VOLUMEs (each
becomes a size-capped tmpfs, see `limits.volume_tmpfs`) and its labels. No container is ever run
to find out something about an image.

All of it goes through the Engine API (docker-py): one request per step, typed errors
(`docker.errors.NotFound`, `docker.errors.APIError`), no ``docker`` process.
"""

from __future__ import annotations

import calendar
import contextlib
import dataclasses
import secrets
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cgroups, engine
from .errors import ContainerStartError, EngineUnavailableError
from .limits import LABEL_ARENA, LABEL_RUN, SandboxLimits, container_kwargs

if TYPE_CHECKING:
    import docker


@dataclasses.dataclass(frozen=True)
class ImageFacts:
    """What the sandbox reads from an image's config (never by running it)."""

    id: str
    entrypoint: tuple[str, ...]
    cmd: tuple[str, ...]
    volumes: tuple[str, ...]
    labels: Mapping[str, str]

    @property
    def command(self) -> tuple[str, ...]:
        """What the image runs: ENTRYPOINT followed by CMD."""
        return self.entrypoint + self.cmd


_facts: dict[str, ImageFacts] = {}
_facts_lock = threading.Lock()


def image_facts(client: docker.DockerClient, image: str) -> ImageFacts:
    """The config of `image` (a tag or id), cached by the id it resolves to at first use.

    Raises ContainerStartError when there is no such image."""
    import docker

    with _facts_lock:
        if image in _facts:
            return _facts[image]
    try:
        data = client.api.inspect_image(image)
    except docker.errors.NotFound:
        raise ContainerStartError(f"no such image: {image}") from None
    except docker.errors.APIError as error:
        raise ContainerStartError(
            f"inspecting image {image}: {error.explanation or error}"
        ) from None
    except Exception as error:
        if engine.is_unavailable(error):
            raise EngineUnavailableError(str(error)) from None
        raise
    config = data.get("Config") or {}
    facts = ImageFacts(
        id=data["Id"],
        entrypoint=tuple(config.get("Entrypoint") or ()),
        cmd=tuple(config.get("Cmd") or ()),
        volumes=tuple(sorted((config.get("Volumes") or {}).keys())),
        labels=dict(config.get("Labels") or {}),
    )
    with _facts_lock:
        _facts[image] = facts
    return facts


@dataclasses.dataclass(frozen=True)
class ContainerStatus:
    """A container's state from an inspection."""

    running: bool
    exit_code: int | None
    oom_killed: bool
    status: str = ""


@dataclasses.dataclass
class Container:
    """A started bot container."""

    id: str
    name: str
    image: str
    socket_dir: Path | None
    started: float
    """time.monotonic() before it was created."""


_counter = 0
_counter_lock = threading.Lock()


def container_name(run_id: str) -> str:
    """``take5-RUN-NNNN-xxxx``: unique, and telling which run it belongs to."""
    global _counter
    with _counter_lock:
        _counter += 1
        return f"take5-{run_id}-{_counter:04d}-{secrets.token_hex(2)}"


def start_container(
    client: docker.DockerClient,
    image: str,
    *,
    limits: SandboxLimits,
    run_id: str,
    socket_dir: Path | None,
    labels: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    entrypoint: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
    name: str | None = None,
    warm_root: str | None = None,
) -> Container:
    """Create and start a container of `image` with the sandbox flags (THE way to run a bot image).

    `entrypoint`/`command` replace the image's own (None: the image's own command runs);
    `warm_root` makes it a warm container (see `limits.container_kwargs`). The
    container is labelled take5.arena=1 and take5.run=`run_id` (plus `labels`), so that it can be
    found and removed whatever happens to the referee. On any failure nothing is left behind.

    Raises ContainerStartError (no such image, refused VOLUMEs, the engine refused) or
    EngineUnavailableError."""
    return _create(
        client,
        image,
        limits=limits,
        run_id=run_id,
        socket_dir=socket_dir,
        labels=labels,
        env=env,
        entrypoint=entrypoint,
        command=command,
        name=name,
        warm_root=warm_root,
        start=True,
    )


@contextlib.contextmanager
def unstarted(client: docker.DockerClient, image: str, *, run_id: str) -> Iterator[Container]:
    """A container of `image` created with the sandbox flags and never started, removed after:
    its files can be read through the engine (`get_archive`) without running anything of the
    image (images.py checks a bot's command this way). Raises as `start_container`."""
    container = _create(
        client, image, limits=SandboxLimits(), run_id=run_id, socket_dir=None, start=False
    )
    try:
        yield container
    finally:
        remove(client, container.id)


def _create(
    client: docker.DockerClient,
    image: str,
    *,
    limits: SandboxLimits,
    run_id: str,
    socket_dir: Path | None,
    labels: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    entrypoint: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
    name: str | None = None,
    warm_root: str | None = None,
    start: bool,
) -> Container:
    import docker
    from docker.models.containers import _create_container_args

    facts = image_facts(client, image)
    name = name or container_name(run_id)
    kwargs = container_kwargs(
        name=name,
        limits=limits,
        socket_dir=None if socket_dir is None else str(socket_dir),
        labels={LABEL_RUN: run_id, **(labels or {})},
        env=env,
        entrypoint=entrypoint,
        command=command,
        volumes=facts.volumes,
        warm_root=warm_root,
    )
    masked = kwargs.pop("masked_paths")
    readonly = kwargs.pop("readonly_paths")
    # What client.containers.create(image, **kwargs) does, without the inspection that follows
    # it there (one request less per container).
    args = _create_container_args(
        {**kwargs, "image": image, "command": kwargs.get("command"), "version": client.api._version}
    )
    args["host_config"]["MaskedPaths"] = masked
    args["host_config"]["ReadonlyPaths"] = readonly
    started = time.monotonic()
    try:
        created_id = str(client.api.create_container(**args)["Id"])
    except docker.errors.APIError as error:
        remove(client, name)  # a create that timed out may still have made it
        raise ContainerStartError(
            f"creating a container of {image}: {error.explanation or error}"
        ) from None
    except Exception as error:
        if engine.is_unavailable(error):
            raise EngineUnavailableError(f"creating a container of {image}: {error}") from None
        raise
    if not start:
        return Container(id=created_id, name=name, image=image, socket_dir=socket_dir, started=0.0)
    try:
        client.api.start(created_id)
    except BaseException as error:
        remove(client, created_id)
        if isinstance(error, docker.errors.APIError):
            raise ContainerStartError(
                f"starting a container of {image}: {error.explanation or error}"
            ) from None
        if isinstance(error, Exception) and engine.is_unavailable(error):
            raise EngineUnavailableError(f"starting a container of {image}: {error}") from None
        raise
    return Container(id=created_id, name=name, image=image, socket_dir=socket_dir, started=started)


def run_to_completion(
    client: docker.DockerClient,
    image: str,
    command: Sequence[str],
    *,
    limits: SandboxLimits,
    run_id: str,
    timeout: float = 60.0,
) -> tuple[int, str]:
    """Run `command` in a sandboxed container of `image` (no socket folder); (exit code, output).

    For the few commands the sandbox runs in an image itself (e.g. asking a foreign base image for
    its Python version): the same flags as a bot container, then removed."""
    import docker
    import requests

    container = start_container(
        client,
        image,
        limits=limits,
        run_id=run_id,
        socket_dir=None,
        entrypoint=list(command[:1]),
        command=list(command[1:]),
    )
    try:
        try:
            code = int(client.api.wait(container.id, timeout=timeout).get("StatusCode", -1))
        except (requests.exceptions.RequestException, docker.errors.APIError):
            code = -1
        output = logs_tail(client, container.id, lines=200)
        return code, output
    finally:
        remove(client, container.id)


def status(client: docker.DockerClient, container_id: str) -> ContainerStatus | None:
    """Running/exit code/OOM flag from an inspection; None if the container is gone."""
    import docker

    try:
        state = client.api.inspect_container(container_id).get("State") or {}
    except docker.errors.NotFound:
        return None
    running = bool(state.get("Running"))
    code = state.get("ExitCode")
    return ContainerStatus(
        running=running,
        exit_code=None if running or code is None else int(code),
        oom_killed=bool(state.get("OOMKilled")),
        status=str(state.get("Status", "")),
    )


def logs_tail(
    client: docker.DockerClient, container_id: str, *, lines: int = 100, max_bytes: int = 64 << 10
) -> str:
    """The last lines of a container's stdout and stderr through Docker's logs ("" if gone)."""
    import docker

    try:
        data = client.api.logs(container_id, stdout=True, stderr=True, tail=lines)
    except docker.errors.APIError:
        return ""
    text: str = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
    return text[-max_bytes:]


def logs_since(
    client: docker.DockerClient, container_id: str, seen_ns: int, max_bytes: int
) -> tuple[str, int]:
    """What a container wrote to its stdout and stderr after the line Docker stamped ``seen_ns``
    (nanoseconds since the epoch; 0: from the start), at most ``max_bytes`` of it in whole lines,
    and the stamp of the last line given: an image without a shell (the static runtime: the Go
    example) writes there rather than to an output file, and the match takes it turn by turn
    (launcher.DockerBot.take_output). Docker's ``since`` counts whole seconds and includes its
    second, so up to a second of lines is read again and skipped by its stamp. ("", seen_ns) when
    the container is gone."""
    import docker

    since = {"since": seen_ns // 1_000_000_000} if seen_ns >= 1_000_000_000 else {}
    try:
        data = client.api.logs(container_id, stdout=True, stderr=True, timestamps=True, **since)
    except docker.errors.APIError:
        return "", seen_ns
    raw = data if isinstance(data, bytes) else str(data).encode()
    taken: list[bytes] = []
    size = 0
    for line in raw.splitlines(keepends=True):
        stamp, _, text = line.partition(b" ")
        ns = _stamp_ns(stamp)
        if ns is None or ns <= seen_ns:
            continue
        if taken and size + len(text) > max_bytes:
            break
        taken.append(text[:max_bytes])
        size += len(text)
        seen_ns = ns
    return b"".join(taken).decode("utf-8", errors="replace"), seen_ns


def _stamp_ns(stamp: bytes) -> int | None:
    """Docker's RFC 3339 stamp of a log line (``2026-12-05T00:26:19.123456789Z``) in
    nanoseconds, or None if it is not one."""
    text = stamp.decode("ascii", errors="replace")
    if len(text) < 20 or not text.endswith("Z"):
        return None
    try:
        seconds = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None
    fraction = text[20:-1] if text[19] == "." else ""
    if not fraction.isdigit() and fraction:
        return None
    return seconds * 1_000_000_000 + int((fraction or "0").ljust(9, "0")[:9])


def remove(client: docker.DockerClient, container: str) -> bool:
    """Remove a container (id or name) and its anonymous volumes, killing it if it runs.

    True if it was removed, False if it did not exist."""
    import docker

    try:
        client.api.remove_container(container, force=True, v=True)
        return True
    except docker.errors.NotFound:
        return False
    except docker.errors.APIError as error:
        if error.status_code == 409:  # removal already in progress
            return True
        raise


def list_containers(
    client: docker.DockerClient, *, run_id: str | None = None, labels: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The take5 containers on this engine (running or not), of `run_id` if given.

    Each is the engine's summary: ``Id``, ``Names``, ``Labels``, ``State`` ..."""
    wanted = [
        f"{LABEL_ARENA}=1",
        *([f"{LABEL_RUN}={run_id}"] if run_id is not None else []),
        *labels,
    ]
    return list(client.api.containers(all=True, filters={"label": wanted}))


def remove_run(client: docker.DockerClient, run_id: str) -> int:
    """Remove every container of a run; how many there were."""
    removed = 0
    for summary in list_containers(client, run_id=run_id):
        if remove(client, summary["Id"]):
            removed += 1
    return removed


def cpu_seconds(container_id: str) -> float:
    """CPU seconds a container has used, from its cgroup (`cgroups.cpu_seconds`); 0.0 if unknown."""
    return cgroups.cpu_seconds(container_id) or 0.0


__all__ = [
    "Container",
    "ContainerStatus",
    "ImageFacts",
    "container_name",
    "cpu_seconds",
    "image_facts",
    "list_containers",
    "logs_since",
    "logs_tail",
    "remove",
    "remove_run",
    "run_to_completion",
    "start_container",
    "status",
    "unstarted",
]
