"""The arena's server logging, configured in one place: every line starts with its UTC time and its
level, so that a server's log can be read (and merged with others) after the fact, and
``--log-format json`` writes one JSON object a line for log shippers.

``referee serve`` calls :func:`configure` once, a Dask worker through its preload
(take5_arena/service/worker.py); the service's parts log through :func:`logger` (the service's
own lines: ``logger("ladder")``, ``logger("submissions")``, ...), the referee's code through its
module loggers. The stdlib's logging module carries the records; this module owns the only
formatters.

Bot strings (a bot's name, a validation's detail, an exception's text) reach the log inside
messages, so every message is made inert by the one escaper (take5.text): a control character, a
bidirectional override or a newline becomes a visible escape, so that no string can fake a line of
the log or reach a terminal raw. A traceback (``exc_info``) is the only thing written on several
lines (escaped the same way but for its newlines): in the text format each of its lines carries the
record's prefix, in JSON it is the ``exc`` field of the same object.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from take5.text import inert

NAME = "take5_arena.service"
#: The loggers whose records ``--log-level`` chooses: the service's and the referee's (the rest,
#: gRPC's and Dask's, say only warnings).
OWN_LOGGERS = ("take5_arena", "take5")
FORMATS = ("text", "json")
LEVELS = ("debug", "info", "warning", "error")
DEFAULT_FORMAT = "text"
DEFAULT_LEVEL = "info"
_HANDLER_MARK = "_take5_arena_service"


def utc_stamp(created: float) -> str:
    """``2026-12-01T23:59:59.123Z``: the time of a record, in UTC to the millisecond."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{stamp}.{int(created * 1000) % 1000:03d}Z"


def message(record: logging.LogRecord) -> str:
    """The record's message on one line, every character a bot may have chosen made inert."""
    return inert(record.getMessage(), keep_lines=False)


class TextFormatter(logging.Formatter):
    """``2026-12-01T23:59:59.123Z INFO message``; a traceback follows on lines of the same
    prefix."""

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"{utc_stamp(record.created)} {record.levelname}"
        lines = [f"{prefix} {message(record)}"]
        lines += [f"{prefix} {line}" for line in _exception(self, record).splitlines()]
        return "\n".join(lines)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time``, ``level``, ``logger``, ``message`` and, with a
    traceback, ``exc``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": utc_stamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": message(record),
        }
        exc = _exception(self, record)
        if exc:
            entry["exc"] = exc
        return json.dumps(entry, ensure_ascii=True)


def _exception(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    if record.exc_info and not record.exc_text:
        record.exc_text = formatter.formatException(record.exc_info)
    # an exception's text may hold a bot's: escaped too, its lines kept (each gets the prefix)
    return inert("\n".join(x for x in (record.exc_text, record.stack_info) if x))


def formatter(format: str = DEFAULT_FORMAT) -> logging.Formatter:
    """The formatter of ``--log-format`` (``text`` or ``json``)."""
    if format not in FORMATS:
        raise ValueError(f"log format {format!r} is not one of {', '.join(FORMATS)}")
    return JsonFormatter() if format == "json" else TextFormatter()


def configure(
    stream: TextIO | None = None,
    level: str = DEFAULT_LEVEL,
    format: str = DEFAULT_FORMAT,
    *,
    also: Sequence[str] = (),
) -> logging.Logger:
    """Send the arena's records at ``level`` and above, and everyone's warnings, to ``stream``
    (stderr by default) in ``format``; ``also`` names other loggers whose records are taken at
    ``level`` too and only here (a Dask worker's own). Calling it again replaces the handler."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(format))
    setattr(handler, _HANDLER_MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    for name in (*OWN_LOGGERS, *also):
        logging.getLogger(name).setLevel(number)
    for name in also:  # their own handlers would write each record a second time, unstamped
        taken = logging.getLogger(name)
        for old in list(taken.handlers):
            taken.removeHandler(old)
        taken.propagate = True
    return logger()


def logger(part: str = "") -> logging.Logger:
    """The service's logger, or the logger of one of its parts (``logger("ladder")``)."""
    return logging.getLogger(f"{NAME}.{part}" if part else NAME)


__all__ = [
    "DEFAULT_FORMAT",
    "DEFAULT_LEVEL",
    "FORMATS",
    "LEVELS",
    "NAME",
    "OWN_LOGGERS",
    "JsonFormatter",
    "TextFormatter",
    "configure",
    "formatter",
    "logger",
    "message",
    "utc_stamp",
]
