"""Checking Swisses and knockouts: every stage paired again from the recorded results before it,
and compared with the stage stored (``referee verify --tournament``, and from a published site
alone, ``referee verify --site``).

A staged format (staged.py) stores each stage with its format's definition (the table size, the
seed, the seeding, the authors kept apart: everything that pairs it besides the results). This
module reads them back as :class:`Competition` (from the store here, from a site's competitions.json
in published.py), takes each stage's recorded games as its results, pairs every stage again with
the same pure functions the run used (plan/swiss.py, plan/knockout.py) and compares every game's
table and seats: an organiser who moved a bot to another table, dropped a game to change a
standing or edited the seeding after the fact is caught. Tables and seats, not game ids, are
compared, so a stage dealt from a key still secret checks as well as one dealt from a revealed key
(verify checks the seeds themselves)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..store import Store
from .errors import TournamentError
from .plan.adaptive import PlayedGame
from .plan.knockout import KnockoutSettings, replay
from .plan.schedule import ScheduledGame
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
    passed_over: tuple[str, ...] = ()
    """A knockout of a Swiss's top N: those of the Swiss's standing above its last qualifier
    that its field passed over, not current when it began (withdrawn, or replaced by a later
    version): the verifier sees whom."""


@dataclass(frozen=True)
class StageGame:
    """One game of a stage as it was stored: its table and who sat where (entrant keys)."""

    game_id: str
    table_no: int
    seats: tuple[str, ...]


@dataclass(frozen=True)
class Competition:
    """One Swiss or knockout as a verifier needs it, wherever it comes from (the store, or a
    published site's competitions.json): the first stage's stored settings (the format's
    definition under :data:`FORMAT_KEY` and the game settings), its entrants and every stage's
    games in order."""

    prefix: str
    created_at: str
    settings: Mapping[str, Any]
    entrants: tuple[str, ...]
    stages: tuple[tuple[str, tuple[StageGame, ...]], ...]
    """(schedule id, its games) of each stage, by schedule id."""


def competitions(store: Store) -> list[Competition]:
    """Every Swiss and knockout of the store, its stages as stored."""
    groups: dict[str, list[str]] = {}
    for info in store.schedules.all():
        match = STAGE_ID.match(info.schedule_id)
        if match:
            groups.setdefault(f"{match[1]}-{match[2]}", []).append(info.schedule_id)
    keys = {v.id: v.key for v in store.versions.all()}
    out = []
    for prefix, ids in groups.items():
        ids.sort()
        first = store.schedules.get(ids[0])
        assert first is not None
        stages = tuple(
            (
                sid,
                tuple(
                    StageGame(g.game_id, g.table_no, tuple(keys.get(v, "?") for v in g.seats))
                    for g in store.schedules.games(sid)
                ),
            )
            for sid in ids
        )
        out.append(
            Competition(
                prefix,
                str(first["created_at"]),
                dict(first["settings"]),
                tuple(first["entrants"]),
                stages,
            )
        )
    return out


def check_pairings(store: Store) -> list[PairingCheck]:
    """Every Swiss and knockout in the store, each stage paired again from the results before it
    (module text)."""
    keys = {v.id: v.key for v in store.versions.all()}
    return check_competitions(competitions(store), recorded_games(store, keys))


def check_competitions(
    found: Sequence[Competition], recorded: Mapping[str, PlayedGame]
) -> list[PairingCheck]:
    """Each competition paired again, stage by stage, from the ``recorded`` games (by id) of the
    stages before (the store's, or a published site's records)."""
    return [_check(c, found, recorded) for c in found]


def _check(
    comp: Competition, every: Sequence[Competition], recorded: Mapping[str, PlayedGame]
) -> PairingCheck:
    prefix = comp.prefix
    try:
        found = _definition(comp)
        if found is None:
            return PairingCheck(prefix, 0, unchecked="stored without its format's definition")
        if found[0].get("seed") is None:
            return PairingCheck(prefix, 0, unchecked=WITHHELD)
        definition, settings, entrants = found
        pair = _pairer(settings, entrants)
    except _UNPAIRABLE as error:
        return PairingCheck(prefix, 0, f"its stored definition does not pair: {error}")
    qualified = definition.get("qualified")
    passed: tuple[str, ...] = ()
    if isinstance(qualified, dict):  # the field: the top N of a Swiss, in its order
        try:
            swiss, standing = standing_of(every, recorded, str(qualified["swiss"]))
            passed = _passed_over(qualified, standing)
            top = [e for e in standing if e not in passed][: int(qualified["top"])]
        except _UNPAIRABLE as error:
            return PairingCheck(prefix, 0, f"its field's Swiss: {error}")
        if list(definition.get("seeding") or []) != top:
            return PairingCheck(
                prefix, 0, f"its field is not the top {qualified['top']} of {swiss} in order"
            )
    results: list[list[PlayedGame]] = []
    for n, (sid, stored) in enumerate(comp.stages, 1):
        if sid != f"{prefix}-{n:04d}":
            return PairingCheck(prefix, n - 1, f"stage {n} is missing (found {sid})")
        try:
            games = pair(results)
        except _UNPAIRABLE as error:
            return PairingCheck(prefix, n - 1, f"stage {n} ({sid}): {error}")
        if games is None:
            return PairingCheck(prefix, n - 1, f"stage {n} ({sid}) follows a decided knockout")
        # every game by table and seats (rotations of a duplicate deal included): a table moved,
        # a game added or left out is another multiset
        want = sorted((g.table, g.seats) for g in games)
        have = sorted((g.table_no, g.seats) for g in stored)
        if want != have:
            return PairingCheck(
                prefix, n - 1, f"stage {n} ({sid}) is not the pairing its results before it give"
            )
        played = [recorded[g.game_id] for g in stored if g.game_id in recorded]
        if len(played) < len(stored) and n < len(comp.stages):
            return PairingCheck(
                prefix, n - 1, f"stage {n + 1} was paired before every game of stage {n} was"
            )
        results.append(played)
    return PairingCheck(prefix, len(comp.stages), passed_over=passed)


def _passed_over(qualified: Mapping[str, Any], standing: Sequence[str]) -> tuple[str, ...]:
    """The entrants a knockout's field passed over (stored with its field: the run takes the
    top N of those still current, so a withdrawal between the Swiss and the knockout is left out
    of it): each one of the Swiss's, named once. ValueError otherwise."""
    raw = qualified.get("passed_over") or []
    if not isinstance(raw, list) or not all(isinstance(e, str) for e in raw):
        raise ValueError("its entrants passed over are not a list of names")
    if len(set(raw)) != len(raw) or not set(raw) <= set(standing):
        raise ValueError("its entrants passed over are not the Swiss's, each once")
    return tuple(raw)


#: What a definition that does not pair raises (from a published site: anything of any type).
_UNPAIRABLE = (TournamentError, TypeError, ValueError, KeyError, AttributeError, IndexError)

#: Why a competition published with its seed withheld is not checked from the site.
WITHHELD = (
    "its seed is withheld while its deals come from it (public deals): "
    "`referee verify --tournament` checks it"
)


def swiss_standing(store: Store, prefix: str | None = None) -> tuple[str, list[str]]:
    """The standing (entrants best first) of the store's latest Swiss whose every game is
    recorded, with its prefix: how a knockout final seeds its qualifiers (``--from-swiss N``).
    The same pure functions as the run's, so anyone re-derives it from the results. ValueError
    when there is none."""
    keys = {v.id: v.key for v in store.versions.all()}
    return standing_of(competitions(store), recorded_games(store, keys), prefix)


def standing_of(
    found: Sequence[Competition], recorded: Mapping[str, PlayedGame], prefix: str | None = None
) -> tuple[str, list[str]]:
    """:func:`swiss_standing` over given competitions and recorded games (the store's or a
    site's): the Swiss ``prefix``, or the latest with every game recorded."""
    swisses = [c for c in found if c.prefix.startswith("swiss-")]
    if prefix is not None:
        swisses = [c for c in swisses if c.prefix == prefix]
    for comp in sorted(swisses, key=lambda c: (c.created_at, c.prefix), reverse=True):
        try:
            defined = _definition(comp)
        except _UNPAIRABLE:
            continue
        if defined is None or not isinstance(defined[1], SwissSettings):
            continue
        ss, entrants = defined[1], defined[2]
        if any(g.game_id not in recorded for _, stage in comp.stages for g in stage):
            continue
        results = [[recorded[g.game_id] for g in stage] for _, stage in comp.stages]
        try:
            rounds = rederive(entrants, ss, results)
            points = standings(entrants, [g for rs in results for g in rs], rounds, ss)
            return comp.prefix, standing_order(entrants, points, ss)
        except _UNPAIRABLE:  # its own check says why
            continue
    raise ValueError(
        f"{prefix} is not a Swiss with every game recorded"
        if prefix is not None
        else "this tournament has no Swiss with every game recorded"
    )


def recorded_games(
    store: Store, keys: Mapping[int, str], *, published_only: bool = False
) -> dict[str, PlayedGame]:
    """Every recorded game among versions in ``keys``, by game id (``published_only``: not those
    of a deal with rotations still to play)."""
    return {
        r.game_id: PlayedGame(
            r.game_id, tuple(keys[v] for v in r.versions), tuple(r.places), r.duplicate_set
        )
        for r in store.results.seat_results(published_only=published_only)
        if all(v in keys for v in r.versions)
    }


def final_order(comp: Competition, recorded: Mapping[str, PlayedGame]) -> tuple[str, ...] | None:
    """A finished competition's entrants, best first: a Swiss's standing once every game of its
    stages is recorded, a decided knockout's places (None: not finished, or not readable)."""
    try:
        if comp.prefix.startswith("swiss-"):
            return tuple(standing_of([comp], recorded, comp.prefix)[1])
        defined = _definition(comp)
        if defined is None or not isinstance(defined[1], KnockoutSettings):
            return None
        if any(g.game_id not in recorded for _, stage in comp.stages for g in stage):
            return None
        results = [[recorded[g.game_id] for g in stage] for _, stage in comp.stages]
        outcome = replay(defined[2], defined[1], results).outcome
    except _UNPAIRABLE:
        return None
    return None if outcome is None else outcome.order


Pair = Callable[[Sequence[Sequence[PlayedGame]]], "tuple[ScheduledGame, ...] | None"]
"""The games of the stage after the stages whose games are given (None: none follows)."""


def _definition(
    comp: Competition,
) -> tuple[dict[str, Any], SwissSettings | KnockoutSettings, list[str]] | None:
    """A competition's stored format definition, the settings it makes (with the stored game
    settings) and the format's entrants; None when it was stored without one. Raises
    TournamentError, TypeError, ValueError or KeyError when the definition does not make
    settings."""
    stored_settings = dict(comp.settings)
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
    return definition, settings, list(comp.entrants)


def _pairer(settings: SwissSettings | KnockoutSettings, entrants: Sequence[str]) -> Pair:
    """The games of the stage after given results, for the format of ``settings``."""
    if isinstance(settings, SwissSettings):
        ss = settings
        rounds: list[SwissRound] = []

        def swiss(results: Sequence[Sequence[PlayedGame]]) -> tuple[ScheduledGame, ...] | None:
            del rounds[len(results) :]
            rnd = next_round(entrants, ss, rounds, [g for rs in results for g in rs])
            rounds.append(rnd)
            return rnd.games

        return swiss
    ks = settings

    def knockout(results: Sequence[Sequence[PlayedGame]]) -> tuple[ScheduledGame, ...] | None:
        stage = replay(entrants, ks, results).next
        return None if stage is None else stage.games

    return knockout


__all__ = [
    "FORMAT_KEY",
    "STAGE_ID",
    "WITHHELD",
    "Competition",
    "Pair",
    "PairingCheck",
    "StageGame",
    "check_competitions",
    "check_pairings",
    "competitions",
    "final_order",
    "recorded_games",
    "standing_of",
    "swiss_standing",
]
