"""One bot process of the Docker launcher, its image's way of starting, and what it wrote.

`BotImage` is how an image is run (its own command, through its shell when the output can go to a
file); `Instance` is one bot process (starting, running or ended) in a container of its own or in a
warm one, with the referee's pin on its socket and the deals it has seen; `Output` keeps what a
bot wrote across its containers. The launcher (launcher.py) makes and tends them; the handle
(dockerbot.py) plays games with them.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Any

from . import containers, sockets, warm
from .images import ImageInfo
from .limits import SOCKET_NAME

TAIL_BYTES = 8192
"""Bytes of a bot's output kept for its faults (the tail), per container."""


@dataclasses.dataclass(eq=False)
class BotImage:
    info: ImageInfo
    entrypoint: list[str] | None
    command: list[str] | None
    file_output: bool
    """The bot's output goes to OUTPUT_NAME in its socket tmpfs (else through Docker's logs)."""
    forkserver: bool = False
    """The image may run in a warm container (label take5.forkserver=1, set by images.py)."""
    volumes: tuple[str, ...] = ()


class Instance:
    """One bot process (starting, running or ended), in a container of its own or in a warm one,
    and the referee's pin on its socket."""

    def __init__(
        self,
        image: BotImage,
        socket_dir: Path,
        game_id: str,
        warm: warm.WarmContainer | None = None,
    ) -> None:
        self.image = image
        self.socket_dir = socket_dir
        self.game_id = game_id
        self.warm = warm
        """The warm container this process was forked in (None: a container of its own)."""
        self.bot_pid: int | None = None
        self.seen: set[int] = set()
        """The deals this process (and whatever it left in its container) may remember."""
        self.output_offset = 0
        """Bytes of its output already collected (a process kept for several games)."""
        self.output_taken = 0
        """Bytes of its output file already handed to the match, turn by turn (take_output)."""
        self.log_taken_ns = 0
        """Without an output file: the stamp of the last line of its Docker log handed over."""
        self.future: concurrent.futures.Future[containers.Container] = concurrent.futures.Future()
        self.pin: int | None = None
        self.oom: bool | None = None
        self.last_inspect = 0.0
        self.inspected_code: int | None = None
        self.retired = False
        self.idle_since = time.monotonic()
        """When it was last put among the spares (the least recently used are evicted first)."""
        self.abandon = threading.Event()
        """Set when the wait for this process's start was given up (`DockerBot.ready`) or the
        launcher closes: a warm container's start then ends."""

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / SOCKET_NAME

    @property
    def output_file(self) -> Path | None:
        """The file its output goes to (None: Docker's log, an image without a shell)."""
        if self.image.file_output or self.warm is not None:
            return self.socket_dir / sockets.OUTPUT_NAME
        return None

    @property
    def container(self) -> containers.Container | None:
        if self.future.done() and not self.future.cancelled() and self.future.exception() is None:
            return self.future.result()
        return None

    def unpin(self) -> None:
        if self.pin is not None:
            try:
                os.close(self.pin)
            except OSError:
                pass
            self.pin = None


class Output:
    """What a bot wrote, kept across its containers: a bounded tail, and its log file if any."""

    def __init__(self, log_path: Path | None) -> None:
        self.log_path = log_path
        self.tails: collections.deque[str] = collections.deque(maxlen=3)
        self.lock = threading.Lock()
        self.sections = 0

    def collect(self, inst: Instance, container: containers.Container, client: Any) -> int:
        """Keep what `inst` wrote since its last collection; the new offset in its output file."""
        offset = inst.output_offset
        if inst.output_file is not None:
            data = sockets.read_output(inst.output_file, None)[offset:]
            offset += len(data)
            if self.log_path is None:
                data = data[-TAIL_BYTES:]
            text = data[-TAIL_BYTES:].decode("utf-8", errors="replace")
        else:
            text = containers.logs_tail(client, container.id, lines=100, max_bytes=TAIL_BYTES)
            data = text.encode()
        with self.lock:
            self.sections += 1
            if text.strip():
                self.tails.append(text)
            if self.log_path is not None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                mode = "ab" if self.sections > 1 else "wb"
                with open(self.log_path, mode) as fh:
                    heading = f"[take5: container {container.name}, game {inst.game_id or '-'}]\n"
                    fh.write(heading.encode())
                    fh.write(data)
                    if data and not data.endswith(b"\n"):
                        fh.write(b"\n")
        return offset

    def text(self, limit: int) -> str:
        with self.lock:
            return "\n".join(self.tails)[-limit:]


__all__ = ["TAIL_BYTES", "BotImage", "Instance", "Output"]
