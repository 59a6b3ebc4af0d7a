"""`referee verify --tournament`: every record in a tournament store, and who sat where.

A record on its own says which bot played each seat, but nothing in it proves the names right: two
names swapped give an equally consistent record. The store is what binds them: its schedule says
which entrant version sits at each seat of each game. So, besides the rules (take5.record.judge),
each stored record's seats must name exactly the entrant and version the schedule seated there, and
where the record has a source digest, the digest of the archive submitted for that version
(take5_arena/referee/artifacts.py: games play that archive, so a digest that differs means a record
edited or played from code that was never submitted). Records are read as raw text so that one
hostile row cannot stop the others.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from take5.audit import MalformedRecord, short
from take5.record import Judgement, Verdict, judge, parse_record

from .store import Store, StoreError


def seat_binding(doc: Any, seated: list[dict[str, Any]]) -> str | None:
    """Why the record's seats differ from the entrants the schedule seated, or None."""
    seats = doc.get("seats") if isinstance(doc, dict) else None
    if not isinstance(seats, list) or len(seats) != len(seated):
        return (
            f"the record has {len(seats) if isinstance(seats, list) else 'no'} seats, the "
            f"schedule {len(seated)}"
        )
    for seat, (entry, want) in enumerate(zip(seats, seated)):
        if not isinstance(entry, dict):
            return f"seat {seat}: not a seat entry"
        for key, value in want.items():
            if (key in entry or key == "name") and entry.get(key) != value:
                return (
                    f"seat {seat}: the record says {key} {short(entry.get(key))}, "
                    f"the schedule seated {short(value)}"
                )
    return None


def stored_judgements(directory: Path) -> Iterator[tuple[str, Judgement]]:
    """(game id, judgement) of every game recorded in the tournament at `directory`, in order.

    Raises StoreError when the store cannot be read at all (not a database, a damaged file).
    """
    try:
        yield from _judgements(directory)
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{directory}: the tournament store cannot be read ({error})") from None


def _judgements(directory: Path) -> Iterator[tuple[str, Judgement]]:
    with Store(directory, readonly=True) as store:
        versions = {v.id: v for v in store.versions()}
        rows = store.db.execute(
            "SELECT r.game_id, r.record, g.seats FROM results r LEFT JOIN games g ON g.game_id = "
            "r.game_id ORDER BY r.seq"
        )
        for game_id, text, seats_text in rows:
            try:
                doc: Any = parse_record(text, f"game {game_id}")
            except MalformedRecord as error:
                yield game_id, Judgement(Verdict.MALFORMED, str(error))
                continue
            judgement = judge(doc)
            if judgement.verdict is Verdict.VALID:
                seated = []
                for version_id in json.loads(seats_text or "[]"):
                    v = versions.get(version_id)
                    if v is None:
                        seated.append({"name": f"<unknown version {version_id}>"})
                        continue
                    want: dict[str, Any] = {"name": v.name, "entrant": v.key, "version": v.version}
                    if v.artifact:  # versions from before archives have no digest to hold them to
                        want["digest"] = v.artifact
                    seated.append(want)
                problem = seat_binding(doc, seated)
                if problem:
                    judgement = Judgement(Verdict.INVALID, problem)
            yield game_id, judgement
