"""The arena server's logging, configured in one place: every line of every record starts with its
UTC time and its level, so that a server's log can be read (and merged with others) after the fact.

``referee serve`` calls :func:`configure` once; its parts log through :func:`logger` (the service's
own lines) or their own module loggers (the referee's warnings). A record of several lines (a
traceback) gets the prefix on each line. A structured format (JSON lines) would be a second
formatter here, chosen by :func:`configure`.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TextIO

NAME = "take5_arena.service"
_HANDLER_MARK = "_take5_arena_service"


class UTCFormatter(logging.Formatter):
    """``2026-12-01T23:59:59.123Z INFO message``, the prefix repeated on every line."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        head, _, rest = text.partition("\n")
        if not rest:
            return head
        prefix = head[: len(head) - len(record.getMessage().partition("\n")[0])]
        return "\n".join([head, *(prefix + line for line in rest.splitlines())])


def configure(stream: TextIO | None = None, level: int = logging.INFO) -> logging.Logger:
    """Send the service's records (at ``level`` and above) and everyone's warnings to ``stream``
    (stderr by default), each line stamped; calling it again replaces the handler."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(UTCFormatter())
    setattr(handler, _HANDLER_MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    service = logger()
    service.setLevel(level)
    return service


def logger() -> logging.Logger:
    """The service's own logger."""
    return logging.getLogger(NAME)


__all__ = ["NAME", "UTCFormatter", "configure", "logger"]
