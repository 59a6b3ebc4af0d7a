"""Helpers the Docker tests share: whether an image exists, and pruning the images they built
(through the Engine API, like the referee; bot images are labelled take5.bot=NAME)."""

from __future__ import annotations

from collections.abc import Iterable

import docker
import docker.errors
from support import unavailable

from take5_arena.referee.sandbox.manifest import RUNTIMES


def image_exists(ref: str, client: docker.DockerClient | None = None) -> bool:
    client = client or docker.from_env()
    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def prune_bot_images(
    names: Iterable[str], *, keep: int = 1, client: docker.DockerClient | None = None
) -> list[str]:
    """Keep the ``keep`` newest images of each named bot; remove the rest (images in use stay)."""
    client = client or docker.from_env()
    removed: list[str] = []
    for name in names:
        images = client.images.list(filters={"label": f"take5.bot={name}"})
        images.sort(key=lambda i: i.attrs.get("Created", ""), reverse=True)
        for image in images[keep:]:
            try:
                client.images.remove(image.id, force=False)
                removed.append(image.id)
            except docker.errors.APIError:
                pass  # in use by a container, or already gone
    return removed


BASE_IMAGES = tuple(RUNTIMES.values())  # the images bot folders are built on


def client_with_base_images(timeout: int = 120) -> docker.DockerClient:
    """A client of an engine that answers and has every base image, or skip/fail (see above)."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        unavailable(f"no Docker engine: {exc}")
        raise
    for base in BASE_IMAGES:
        if not image_exists(base, client):
            unavailable(f"base image {base} is missing (run scripts/setup-docker.sh)")
    return client
