"""What a BOT argument names: a bot folder, a bot.py file, or the gRPC address of a running bot.

Parsing is kept apart from launching so that a bad argument is reported before anything starts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import RefereeError


class BadBotRefError(RefereeError, ValueError):
    """A BOT argument that names nothing the referee can run or reach."""


_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")

BOT_FILE = "bot.py"
RUN_FILE = "run"
DOCKER_FILE = "Dockerfile"


@dataclass(frozen=True)
class BotRef:
    """A parsed BOT argument.

    kind: "python" (run `python3 bot.py` in its folder), "command" (run the folder's executable
    `run` script, for bots in other languages), "address" (connect to a bot someone else runs) or
    "dockerfile" (a folder with only a Dockerfile: runs with --sandbox docker only).
    """

    kind: str
    text: str
    """The argument as given (shown in messages and records)."""
    path: Path | None = None
    """The file to run (python, command)."""
    address: str = ""
    """The gRPC target (address)."""
    label: str = ""
    """What messages call the bot when its folder is the referee's own (an artifact cache's
    ``<digest>/bot``, which names nothing a reader knows): a tournament's entrant, a submitted
    bot's name. Empty: its name and the argument as given."""

    @property
    def described(self) -> str:
        """The bot as a message names it: its label, else its default name and its argument."""
        return self.label or f"{self.default_name} ({self.text})"

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    @property
    def default_name(self) -> str:
        """Name used when the bot does not give one in its handshake."""
        if self.path is not None:
            if self.path.name in (BOT_FILE, RUN_FILE, DOCKER_FILE):
                return self.path.parent.name or "bot"
            return self.path.stem
        return self.address


def parse_bot(text: str) -> BotRef:
    """Parse one BOT argument; BadBotRefError says what was expected."""
    if text.startswith("unix:"):
        if len(text) <= len("unix:"):
            raise BadBotRefError(
                f"{text!r}: a Unix socket address needs a path, like unix:/tmp/bot.sock"
            )
        return BotRef("address", text, address=text)
    path = Path(text)
    if path.is_dir():
        bot_file = path / BOT_FILE
        run_file = path / RUN_FILE
        if bot_file.is_file():
            return BotRef("python", text, path=bot_file.resolve())
        if run_file.is_file() and os.access(run_file, os.X_OK):
            return BotRef("command", text, path=run_file.resolve())
        if (path / DOCKER_FILE).is_file():
            return BotRef("dockerfile", text, path=(path / DOCKER_FILE).resolve())
        raise BadBotRefError(
            f"{text!r}: the folder has neither {BOT_FILE} nor an executable {RUN_FILE} script"
        )
    if path.is_file():
        if path.suffix == ".py":
            return BotRef("python", text, path=path.resolve())
        if os.access(path, os.X_OK):
            return BotRef("command", text, path=path.resolve())
        raise BadBotRefError(f"{text!r}: a bot file must be a .py file (or an executable)")
    if _HOST_PORT.match(text) and not path.exists():
        port = int(text.rsplit(":", 1)[1])
        if not 0 < port < 65536:
            raise BadBotRefError(f"{text!r}: port {port} is out of range")
        return BotRef("address", text, address=text)
    raise BadBotRefError(
        f"no such bot: {text!r} (a BOT is a folder with {BOT_FILE}, a .py file, "
        "or a gRPC address like unix:/path/bot.sock or localhost:50051)"
    )
