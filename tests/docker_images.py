"""Helpers the Docker tests share: whether an image exists, and pruning the images they built
(through the Engine API, like the referee; bot images are labelled take5.bot=NAME)."""

from __future__ import annotations

from collections.abc import Iterable

import docker
import docker.errors


def image_exists(ref: str, client: docker.DockerClient | None = None) -> bool:
    client = client or docker.from_env()
    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def prune_bot_images(names: Iterable[str], *, keep: int = 1, client: docker.DockerClient | None = None) -> list[str]:
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
