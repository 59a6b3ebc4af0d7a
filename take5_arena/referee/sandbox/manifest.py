"""How a bot folder says what runs it: ``bot.py``, its own ``Dockerfile``, or a ``bot.toml``.

A bot in another language than Python declares its runtime and its command in ``bot.toml``::

    runtime = "node"                # "python", "node" or "static"
    command = ["node", "bot.js"]    # run in /bot, as uid 10001, with TAKE5_LISTEN set

``runtime`` picks the base image (:data:`RUNTIMES`; all made offline by scripts/setup-docker.sh);
``command`` is the image's CMD (a relative first word is taken relative to /bot when it names a
file of the folder). The referee runs nothing of the folder while building: a Node bot brings its
``node_modules`` (``npm install --ignore-scripts`` in the folder), a Go or Rust bot its statically
linked binary. When a folder has several of these, a ``Dockerfile`` wins, then ``bot.toml``, then
``bot.py``.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from typing import Any

from .. import defaults
from .build_errors import BuildRefusedError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MANIFEST = "bot.toml"
MAX_COMMAND = 32
MAX_WORD = 512
MAX_MANIFEST_BYTES = 64 * 1024
"""A bot.toml holds four short keys: anything larger is refused before it is parsed."""


class Runtime(enum.Enum):
    PYTHON = "python"
    NODE = "node"
    STATIC = "static"


RUNTIMES: dict[Runtime, str] = {
    Runtime.PYTHON: defaults.BASE_IMAGE,
    Runtime.NODE: "take5/node:18",
    Runtime.STATIC: "take5/static:1",
}
"""The base image of each runtime."""

DEFAULT_COMMANDS: dict[Runtime, tuple[str, ...]] = {
    Runtime.PYTHON: ("python3", "/bot/bot.py"),
    Runtime.NODE: ("node", "/bot/bot.js"),
    Runtime.STATIC: ("/bot/run",),
}


@dataclasses.dataclass(frozen=True)
class Manifest:
    runtime: Runtime
    command: tuple[str, ...]
    name: str | None = None
    version: str | None = None


def parse_manifest(data: bytes, files: frozenset[str] = frozenset()) -> Manifest:
    """Parse ``bot.toml`` (its bytes as copied into the build context). ``files`` are the folder's
    file paths, to resolve a relative command word like ``take5-go-bot`` to ``/bot/take5-go-bot``.
    """
    if len(data) > MAX_MANIFEST_BYTES:
        raise BuildRefusedError(
            f"{MANIFEST} has {len(data):,} bytes; at most {MAX_MANIFEST_BYTES:,} are read"
        )
    try:
        doc: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BuildRefusedError(f"{MANIFEST} is not valid TOML: {exc}") from None
    except RecursionError:  # arrays or tables nested thousands deep: the parser recurses
        raise BuildRefusedError(f"{MANIFEST} is not valid TOML: nested too deeply") from None
    unknown = sorted(set(doc) - {"runtime", "command", "name", "version"})
    if unknown:
        raise BuildRefusedError(
            f"{MANIFEST}: unknown key {unknown[0][:40]!r} (known: runtime, command, name, version)"
        )
    raw_runtime = doc.get("runtime")
    try:
        runtime = Runtime(raw_runtime)
    except ValueError:
        choices = ", ".join(repr(r.value) for r in Runtime)
        raise BuildRefusedError(
            f"{MANIFEST}: runtime must be one of {choices}, not {str(raw_runtime)[:40]!r}"
        ) from None
    command = doc.get("command", list(DEFAULT_COMMANDS[runtime]))
    if (
        not isinstance(command, list)
        or not command
        or len(command) > MAX_COMMAND
        or not all(
            isinstance(w, str) and w and len(w) <= MAX_WORD and w.isprintable() for w in command
        )
    ):
        raise BuildRefusedError(
            f"{MANIFEST}: command must be a list of 1 to {MAX_COMMAND} printable strings, "
            'like ["node", "bot.js"]'
        )
    first = command[0]
    if not first.startswith("/") and (first in files or first.startswith("./")):
        command = [f"/bot/{first.removeprefix('./')}", *command[1:]]
    name, version = doc.get("name"), doc.get("version")
    for key, value in (("name", name), ("version", version)):
        if value is not None and (
            not isinstance(value, str) or not value.isprintable() or len(value) > 64
        ):
            raise BuildRefusedError(
                f"{MANIFEST}: {key} must be printable text of at most 64 characters"
            )
    return Manifest(runtime, tuple(command), name, version)
