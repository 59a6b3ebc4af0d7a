"""Checking a store's Swisses and knockouts: every stage paired again from the recorded results
before it, and compared with the stage stored (``referee verify --tournament``).

A staged format (staged.py) stores each stage with its format's definition (the table size, the
seed, the seeding, the authors kept apart: everything that pairs it besides the results). This
module reads them back, takes each stage's recorded games as its results, pairs every stage again
with the same pure functions the run used (plan/swiss.py, plan/knockout.py) and compares the tables
by seat: an organiser who moved a bot to another table, dropped a game to change a standing or
edited the seeding after the fact is caught. Tables, not game ids, are compared, so a stage dealt
from a key still secret checks as well as one dealt from a revealed key (verify checks the seeds
themselves).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..store import Store
from .plan.adaptive import PlayedGame
from .plan.knockout import KnockoutSettings, replay
from .plan.schedule import ScheduleError, Seating
from .plan.settings import TournamentSettings
from .plan.swiss import SwissRound, SwissSettings, next_round, rederive, standing_order, standings

#: Where a stage's stored settings hold its format's definition (staged.py writes it).
FORMAT_KEY = "format"
#: A stage's schedule id: the format, the key of its entrants and settings, the stage's number.
STAGE_ID = re.compile(r"^(swiss|knockout)-([0-9a-f]{12})-(\d{4})$")


@dataclass(frozen=True)
class PairingCheck:
    """One Swiss or knockout of the store: how many stages were paired again, and the first
    stage that its results do not give (None: every stage checks)."""

    prefix: str
    stages: int
    problem: str | None = None
    unchecked: str | None = None
    """Why it could not be checked (a stage stored before stages held their format's
    definition): not a finding."""


def check_pairings(store: Store) -> list[PairingCheck]:
    """Every Swiss and knockout in the store, each stage paired again from the results before it
    (module text)."""
    groups: dict[str, list[str]] = {}
    for info in store.schedules.all():
        match = STAGE_ID.match(info.schedule_id)
        if match:
            groups.setdefault(f"{match[1]}-{match[2]}", []).append(info.schedule_id)
    keys = {v.id: v.key for v in store.versions.all()}
    recorded = _recorded(store, keys)
    return [_check(store, prefix, sorted(ids), keys, recorded) for prefix, ids in groups.items()]


def _check(
    store: Store,
    prefix: str,
    stage_ids: Sequence[str],
    keys: Mapping[int, str],
    recorded: Mapping[str, PlayedGame],
) -> PairingCheck:
    try:
        found = _definition(store, stage_ids[0])
        if found is None:
            return PairingCheck(prefix, 0, unchecked="stored without its format's definition")
        definition, settings, entrants = found
        pair = _pairer(settings, entrants)
    except (ScheduleError, TypeError, ValueError, KeyError) as error:
        return PairingCheck(prefix, 0, f"its stored definition does not pair: {error}")
    qualified = definition.get("qualified")
    if isinstance(qualified, dict):  # the field: the top N of a Swiss, in its order
        try:
            swiss, standing = swiss_standing(store, str(qualified["swiss"]), recorded=recorded)
        except (ValueError, KeyError) as error:
            return PairingCheck(prefix, 0, f"its field's Swiss: {error}")
        top = [e for e in standing if e in set(keys.values())][: int(qualified["top"])]
        if list(definition.get("seeding") or []) != top:
            return PairingCheck(
                prefix, 0, f"its field is not the top {qualified['top']} of {swiss} in order"
            )
    results: list[list[PlayedGame]] = []
    for n, sid in enumerate(stage_ids, 1):
        if sid != f"{prefix}-{n:04d}":
            return PairingCheck(prefix, n - 1, f"stage {n} is missing (found {sid})")
        stored = store.schedules.games(sid)
        try:
            tables = pair(results)
        except ScheduleError as error:
            return PairingCheck(prefix, n - 1, f"stage {n} ({sid}): {error}")
        if tables is None:
            return PairingCheck(prefix, n - 1, f"stage {n} ({sid}) follows a decided knockout")
        want = sorted((t.index, t.seats) for t in tables)
        have = sorted({(g.table_no, tuple(keys.get(v, "?") for v in g.seats)) for g in stored})
        if want != have:
            return PairingCheck(
                prefix, n - 1, f"stage {n} ({sid}) is not the pairing its results before it give"
            )
        played = [recorded[g.game_id] for g in stored if g.game_id in recorded]
        if len(played) < len(stored) and n < len(stage_ids):
            return PairingCheck(
                prefix, n - 1, f"stage {n + 1} was paired before every game of stage {n} was"
            )
        results.append(played)
    return PairingCheck(prefix, len(stage_ids))


def swiss_standing(
    store: Store, prefix: str | None = None, *, recorded: Mapping[str, PlayedGame] | None = None
) -> tuple[str, list[str]]:
    """The standing (entrants best first) of the store's latest Swiss whose every game is
    recorded, with its prefix: how a knockout final seeds its qualifiers (``--from-swiss N``).
    The same pure functions as the run's, so anyone re-derives it from the results. ValueError
    when there is none."""
    keys = {v.id: v.key for v in store.versions.all()}
    latest: dict[str, str] = {}  # prefix -> created_at of its first round
    for info in store.schedules.all("swiss-"):
        match = STAGE_ID.match(info.schedule_id)
        if match:
            latest.setdefault(f"{match[1]}-{match[2]}", info.created_at)
    if recorded is None:
        recorded = _recorded(store, keys)
    wanted = [prefix] if prefix is not None else sorted(latest, key=lambda p: (latest[p], p))[::-1]
    for prefix in wanted:
        ids = [i.schedule_id for i in store.schedules.all(prefix + "-")]
        if not ids:
            continue
        found = _definition(store, ids[0])
        if found is None or not isinstance(found[1], SwissSettings):
            continue
        ss, entrants = found[1], found[2]
        games = [store.schedules.games(sid) for sid in ids]
        if any(g.game_id not in recorded for stage in games for g in stage):
            continue
        results = [[recorded[g.game_id] for g in stage] for stage in games]
        rounds = rederive(entrants, ss, results)
        points = standings(entrants, [g for rs in results for g in rs], rounds, ss)
        return prefix, standing_order(entrants, points, ss)
    raise ValueError(
        f"{prefix} is not a Swiss with every game recorded"
        if prefix is not None
        else "this tournament has no Swiss with every game recorded"
    )


def _recorded(store: Store, keys: Mapping[int, str]) -> dict[str, PlayedGame]:
    """Every recorded game among versions in ``keys``, by game id."""
    return {
        r.game_id: PlayedGame(
            r.game_id, tuple(keys[v] for v in r.versions), tuple(r.places), r.duplicate_set
        )
        for r in store.results.seat_results()
        if all(v in keys for v in r.versions)
    }


Pair = Callable[[Sequence[Sequence[PlayedGame]]], "tuple[Seating, ...] | None"]
"""The tables of the stage after the stages whose games are given (None: none follows)."""


def _definition(
    store: Store, schedule_id: str
) -> tuple[dict[str, Any], SwissSettings | KnockoutSettings, list[str]] | None:
    """A stage's stored format definition, the settings it makes (with the stored game settings)
    and the format's entrants; None when the stage was stored without one. Raises ScheduleError,
    TypeError, ValueError or KeyError when the definition does not make settings."""
    first = store.schedules.get(schedule_id)
    assert first is not None
    stored_settings = dict(first["settings"])
    definition = stored_settings.pop(FORMAT_KEY, None)
    if not isinstance(definition, dict):
        return None
    context = TournamentSettings.from_json(stored_settings).game_context()
    fields = {k: v for k, v in definition.items() if k not in ("format", "qualified")}
    fields["authors"] = fields.get("authors") or None
    settings: SwissSettings | KnockoutSettings
    if definition.get("format") == "swiss":
        settings = SwissSettings(**fields, context=context)
    elif definition.get("format") == "knockout":
        seeding = fields.pop("seeding", None)
        settings = KnockoutSettings(
            **fields, seeding=tuple(seeding) if seeding is not None else None, context=context
        )
    else:
        raise ValueError(f"unknown format {definition.get('format')!r}")
    return definition, settings, list(first["entrants"])


def _pairer(settings: SwissSettings | KnockoutSettings, entrants: Sequence[str]) -> Pair:
    """The tables of the stage after given results, for the format of ``settings``."""
    if isinstance(settings, SwissSettings):
        ss = settings
        rounds: list[SwissRound] = []

        def swiss(results: Sequence[Sequence[PlayedGame]]) -> tuple[Seating, ...] | None:
            del rounds[len(results) :]
            rnd = next_round(entrants, ss, rounds, [g for rs in results for g in rs])
            rounds.append(rnd)
            return rnd.tables

        return swiss
    ks = settings

    def knockout(results: Sequence[Sequence[PlayedGame]]) -> tuple[Seating, ...] | None:
        stage = replay(entrants, ks, results).next
        return None if stage is None else stage.tables

    return knockout


__all__ = ["FORMAT_KEY", "STAGE_ID", "Pair", "PairingCheck", "check_pairings", "swiss_standing"]
