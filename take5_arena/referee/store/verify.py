"""`referee verify --tournament`: every record in a tournament store, and who sat where.

A record on its own says which bot played each seat, but nothing in it proves the names right: two
names swapped give an equally consistent record. The store is what binds them: its schedule says
which entrant version sits at each seat of each game. So, besides the rules (take5.record.judge),
each stored record's seats must name exactly the entrant and version the schedule seated there, and
where the record has a source digest, the digest of the archive submitted for that version
(take5_arena/referee/artifacts.py: games play that archive, and the worker checks the code against
it when each game starts and ends, so a digest that differs, or none, means a record edited or
played from code that was never submitted). A seat that names its ``owner`` must name the
version's author as the store keeps it (schema 4: per version). Records are read as raw text so
that one hostile row cannot stop the others.

And the results table must follow from the records (take5_arena/referee/store/integrity.py):
every seat row derived again from its record, every played game recorded, every record scheduled,
no recorded game deleted. A game's findings make its judgement INVALID; findings about no recorded
game (a deleted one, a schedule shortened) come as judgements of their own, named ``results``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from take5.audit import MalformedRecord, short
from take5.record import Judgement, Verdict, judge, parse_record

from .base import StoreError
from .integrity import findings
from .store import Store
from .versions import EntrantVersion

#: What a record's seat must state, not only state right: a seat of a version with an archive
#: that names no digest would say nothing of the code that played it.
REQUIRED = ("name", "digest")


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
            if (key in entry or key in REQUIRED) and entry.get(key) != value:
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
    with Store(directory, readonly=True) as store, store.snapshot():
        # one state of the store throughout: an arena's ladder may record games meanwhile
        problems: dict[str | None, list[str]] = {}
        for finding in findings(store):
            problems.setdefault(finding.game_id, []).append(finding.problem)
        versions = {v.id: v for v in store.versions.all()}
        for game_id, text, seats_text in store.audit.records_with_seats():
            judgement = _judge(game_id, text, seats_text, versions)
            table = problems.pop(str(game_id), None)
            if table and judgement.verdict is Verdict.VALID:
                judgement = Judgement(Verdict.INVALID, "; ".join(table))
            elif table:
                judgement = Judgement(judgement.verdict, "; ".join([judgement.reason, *table]))
            yield game_id, judgement
        for game_id, found in problems.items():  # about games without a record, or none at all
            yield game_id or "results", Judgement(Verdict.INVALID, "; ".join(found))


def _judge(
    game_id: Any, text: Any, seats_text: Any, versions: dict[int, EntrantVersion]
) -> Judgement:
    """One stored record against the rules and against the seats its schedule gave."""
    try:
        doc: Any = parse_record(text, f"game {game_id}")
    except MalformedRecord as error:
        return Judgement(Verdict.MALFORMED, str(error))
    judgement = judge(doc)
    if judgement.verdict is not Verdict.VALID:
        return judgement
    try:
        seats = json.loads(seats_text or "[]")
    except ValueError:
        seats = None
    if not isinstance(seats, list):
        return Judgement(Verdict.INVALID, "the schedule's seats of this game cannot be read")
    seated = []
    for version_id in seats:
        v = versions.get(version_id) if isinstance(version_id, int) else None
        if v is None:
            seated.append({"name": f"<unknown version {short(version_id)}>"})
            continue
        want: dict[str, Any] = {"name": v.name, "entrant": v.key, "version": v.version}
        if v.artifact:  # versions from before archives have no digest to hold them to
            want["digest"] = v.artifact
        if v.author is not None:  # a record that names an owner names the version's author
            want["owner"] = v.author
        seated.append(want)
    problem = seat_binding(doc, seated)
    return judgement if problem is None else Judgement(Verdict.INVALID, problem)
