"""The RECORD argument of the commands that read one game's record (`referee replay`, `referee
analyse`): one loader, so that each says the same of a file that is no record or one that breaks
the rules, in one line (a record's text is hostile: shown escaped)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from take5.audit import MalformedRecord
from take5.record import load_record, verify_record
from take5.text import inert


def fail(command: str, message: object, code: int) -> NoReturn:
    """One line on stderr, `referee COMMAND: message` escaped, then exit with ``code``."""
    click.echo(f"referee {command}: {inert(message, keep_lines=False)}", err=True)
    sys.exit(code)


def load_verified_record(path: Path, command: str) -> dict[str, Any]:
    """The record at ``path``, replayed through the engine: a file that is no record exits 2, a
    record that does not follow the rules 1 (`referee verify` says why at length)."""
    try:
        doc = load_record(path)
        divergence = verify_record(doc)
    except MalformedRecord as error:
        fail(command, error, 2)
    if divergence is not None:
        fail(
            command,
            f"the record does not follow the rules ({divergence}); `referee verify` says the same",
            1,
        )
    return doc


__all__ = ["fail", "load_verified_record"]
