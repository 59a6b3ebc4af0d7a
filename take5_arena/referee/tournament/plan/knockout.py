"""Knockout for tables of k: heats of k where the top m go through, round after round, down to one
final table; ties at a cut played off on fresh deals; anyone replays the bracket from the results.

Like the Swiss (swiss.py), a knockout is played stage by stage, and the bracket is a pure function
(:func:`replay`) of the entrants, the settings and the results of the stages played so far: no
clock, no I/O, no global random state. The run loop asks it for the next stage; a verifier asks it
for every stage again and compares.

**Seeding**: the entrants best first, as the settings give them (``seeding``: for example a
qualifying Swiss's standing) or else drawn by a hash of the seed and the entrant (not the id's
spelling, which an author chooses). Seeds keep their rank through the whole knockout.

**A round**: with more entrants than a table seats, they are dealt into ``h = ceil(n / k)`` heats in
snake order of seed (seed 1 to heat 1, ..., seed h to heat h, seed h + 1 to heat h, back up), so
every heat gets a like share of the strong and the weak. The heats' sizes differ by one at most; the
smaller heats go to the best seeds (with k = 2 and an odd field, the best seed's "heat" of one is a
bye). Two bots of one author are kept out of one heat when a swap within their snake row allows it.
A heat of ``s`` seats sends ``round(s * m / k)`` through (at least 1, at most ``s - 1``), so a heat
smaller than a table sends its share. With no more entrants than a table seats, they play the
**final**: one table of everyone, ``final_deals`` deals.

**Games and order**: each heat plays ``deals`` deals (every heat of a stage the same deals, each in
every rotation with duplicate deals on); an entrant's points are those of the Swiss (one per
opponent placed below, a half per tie) over its heat's games, and the heat is ordered by points.

**Ties at a cut** (equal points across the line between going through and going out; in the final,
between first and second): the tied bots play a **tie-break** stage, one table per tied group of
``tiebreak_deals`` deals, ordered by those games' points alone; up to ``tiebreaks`` tie-break
stages, then a draw by a hash of the seed, the stage and the entrant. Ties that no cut depends on
are ordered by seed.

**Final order**: the final's order, then those out in the last round before it, and so on back to
the first round; within a round, by place in their heat, then by seed.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from take5.shuffle import SplitMix64

from .adaptive import PlayedGame
from .schedule import (
    DealSource,
    ScheduledGame,
    ScheduleError,
    Seating,
    games_of_table,
    public_deals,
)

#: Deals a stage may play at most (per heat or tie-break table): a stage's deals are numbered
#: ``stage * MAX_DEALS + d`` in the deal source, so they never collide.
MAX_DEALS = 100


class StageKind(str, enum.Enum):
    """What a stage of a knockout is."""

    HEATS = "heats"
    FINAL = "final"
    TIEBREAK = "tiebreak"


@dataclass(frozen=True)
class KnockoutSettings:
    """What a knockout is drawn by (besides the entrants and the results)."""

    table_size: int
    advance: int | None = None
    """How many of a full heat go through (None: half of it, at least one)."""
    deals: int = 1
    """Deals each heat plays."""
    final_deals: int = 3
    tiebreak_deals: int = 1
    """Deals of each tie-break stage."""
    tiebreaks: int = 2
    """Tie-break stages at most for one cut, before the seeded draw decides."""
    seed: int = 0
    duplicate: bool = True
    seeding: tuple[str, ...] | None = None
    """The entrants best first (None: drawn by the seed)."""
    context: Any = None
    """The game settings, part of every game id."""
    deal_source: DealSource | None = field(default=None, compare=False, repr=False)
    """Where the stages' deals come from (None: the public seed)."""
    authors: Mapping[str, str | None] | None = field(default=None, compare=False)
    """Entrant -> author: an author's two bots are kept out of one heat where a swap allows."""

    @property
    def through(self) -> int:
        """How many of a full heat go through."""
        k = self.table_size
        return self.advance if self.advance is not None else max(1, k // 2)


@dataclass(frozen=True)
class Heat:
    """One heat (or the final, or a tie-break table): its entrants best seed first, and how many
    of them go through (the final: 1, its winner)."""

    entrants: tuple[str, ...]
    through: int


@dataclass(frozen=True)
class Stage:
    """One stage: its heats, their tables (a heat of ``d`` deals is ``d`` tables of the same
    seats, numbered on from the earlier stages'), its games."""

    number: int
    kind: StageKind
    round: int
    """The knockout round it belongs to (a tie-break belongs to the round of its heats)."""
    heats: tuple[Heat, ...]
    tables: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...] = field(repr=False)

    @property
    def byes(self) -> tuple[str, ...]:
        """Entrants of a heat of one: through without playing."""
        return tuple(h.entrants[0] for h in self.heats if len(h.entrants) == 1)


@dataclass(frozen=True)
class Outcome:
    """A decided knockout: every entrant's place (winner first), the round each went out in."""

    order: tuple[str, ...]
    out_in: Mapping[str, int]
    """Entrant -> the round it went out in (the final's round for every finalist)."""


@dataclass(frozen=True)
class Bracket:
    """Where a knockout stands after the results given: the stages played, then either the next
    stage to play or the outcome."""

    stages: tuple[Stage, ...]
    next: Stage | None
    outcome: Outcome | None


def _hash_int(*parts: Any) -> int:
    text = json.dumps(parts, separators=(",", ":"), sort_keys=True)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def check(entrants: Sequence[str], settings: KnockoutSettings) -> None:
    k = settings.table_size
    if len(set(entrants)) != len(entrants):
        raise ScheduleError("entrant ids must be distinct")
    if not isinstance(k, int) or not 2 <= k <= 10:
        raise ScheduleError(f"tables seat 2 to 10 players, not {k!r}")
    if len(entrants) < 2:
        raise ScheduleError(f"a knockout needs two entrants at least, not {len(entrants)}")
    if not 1 <= settings.through < k:
        raise ScheduleError(f"of a heat of {k}, 1 to {k - 1} go through, not {settings.through}")
    for name in ("deals", "final_deals", "tiebreak_deals"):
        value = getattr(settings, name)
        if not 1 <= value <= MAX_DEALS:
            raise ScheduleError(f"{name.replace('_', ' ')} must be 1 to {MAX_DEALS}, not {value}")
    if settings.tiebreaks < 0:
        raise ScheduleError(f"tie-breaks cannot be negative ({settings.tiebreaks})")
    if settings.seeding is not None:
        seeding = list(settings.seeding)
        unknown = sorted(set(seeding) - set(entrants))
        missing = sorted(set(entrants) - set(seeding))
        twice = sorted({e for e in seeding if seeding.count(e) > 1})
        for what, names in (("names no entrant", unknown), ("leaves out", missing)):
            if names:
                raise ScheduleError(f"the seeding {what}: {', '.join(names)}")
        if twice:
            raise ScheduleError(f"the seeding names twice: {', '.join(twice)}")


def seeded(entrants: Sequence[str], settings: KnockoutSettings) -> list[str]:
    """The entrants best seed first (module text)."""
    if settings.seeding is not None:
        return list(settings.seeding)
    return sorted(entrants, key=lambda e: (_hash_int("knockout-seed", settings.seed, e), e))


def heats(field_: Sequence[str], settings: KnockoutSettings) -> list[Heat]:
    """A round's heats over ``field_`` (best seed first; more than a table): snake order, the
    smaller heats to the best seeds, authors apart where a swap in the snake row allows."""
    k, n = settings.table_size, len(field_)
    h = -(-n // k)
    small, big = divmod(n, h)  # h - big heats of `small`, big heats of `small + 1`
    sizes = [small] * (h - big) + [small + 1] * big
    rows: list[list[str]] = []
    members: list[list[str]] = [[] for _ in range(h)]
    i = 0
    depth = 0
    while i < n:  # row by row of the snake, skipping heats already full
        order = list(range(h)) if depth % 2 == 0 else list(range(h - 1, -1, -1))
        open_heats = [j for j in order if len(members[j]) < sizes[j]]
        row = list(field_[i : i + len(open_heats)])
        rows.append(row)
        for j, e in zip(open_heats, _apart(row, open_heats, members, settings)):
            members[j].append(e)
        i += len(row)
        depth += 1
    rank = {e: r for r, e in enumerate(field_)}
    return [
        Heat(tuple(sorted(m, key=rank.__getitem__)), _through(len(m), settings)) for m in members
    ]


def _apart(
    row: list[str], heat_ids: list[int], members: list[list[str]], settings: KnockoutSettings
) -> list[str]:
    """The row's entrants in the order they go to ``heat_ids``: the snake's, with swaps within the
    row where one puts an entrant away from a heat its author is in already."""
    author = {e: a for e, a in (settings.authors or {}).items() if a}
    if not author:
        return row
    out = list(row)

    def clash(e: str, j: int) -> bool:
        return e in author and any(author.get(m) == author[e] for m in members[j])

    for a in range(len(out)):
        if not clash(out[a], heat_ids[a]):
            continue
        for b in range(len(out)):
            if b != a and not clash(out[b], heat_ids[a]) and not clash(out[a], heat_ids[b]):
                out[a], out[b] = out[b], out[a]
                break
    return out


def _through(size: int, settings: KnockoutSettings) -> int:
    """How many of a heat of ``size`` go through: its share of the full heat's, rounded half up,
    at least 1 and at most ``size - 1`` (a heat of one is a bye: it goes through)."""
    if size == 1:
        return 1
    k = settings.table_size
    return max(1, min(size - 1, (2 * size * settings.through + k) // (2 * k)))


def _stage(
    number: int,
    kind: StageKind,
    round_no: int,
    heats_: Sequence[Heat],
    settings: KnockoutSettings,
    first_table: int,
) -> Stage:
    deals = {
        StageKind.HEATS: settings.deals,
        StageKind.FINAL: settings.final_deals,
        StageKind.TIEBREAK: settings.tiebreak_deals,
    }[kind]
    source = settings.deal_source or public_deals(settings.seed)
    stage_deals = [source(number * MAX_DEALS + d, ()) for d in range(deals)]
    tables: list[Seating] = []
    games: list[ScheduledGame] = []
    for heat in heats_:
        if len(heat.entrants) < 2:
            continue
        for deal in stage_deals:
            index = first_table + len(tables)
            rng = SplitMix64(_hash_int("knockout-seats", settings.seed, index))
            seats = tuple(rng.shuffled(sorted(heat.entrants)))
            tables.append(Seating(index, seats, deal.seed))
            rotations = len(seats) if settings.duplicate else 1
            games.extend(games_of_table(index, seats, deal, rotations, settings.context))
    return Stage(number, kind, round_no, tuple(heats_), tuple(tables), tuple(games))


def _points(members: Sequence[str], played: Sequence[PlayedGame]) -> dict[str, float]:
    """Swiss points of ``members`` over the games among exactly them (one per opponent below, a
    half per tie)."""
    points = dict.fromkeys(members, 0.0)
    wanted = set(members)
    for g in played:
        if set(g.entrants) != wanted:
            continue
        for e, p in zip(g.entrants, g.places):
            points[e] += sum(1.0 if p < q else 0.5 if p == q else 0.0 for q in g.places) - 0.5
    return points


@dataclass
class _Cut:
    """A heat's order so far, and where it is undecided: ``tied`` (in order) straddle the line
    after ``through``, of whom ``slots`` go through."""

    order: list[str]
    through: int
    tied: list[str] = field(default_factory=list)
    slots: int = 0


def _cut(heat: Heat, played: Sequence[PlayedGame], rank: Mapping[str, int]) -> _Cut:
    """Order a heat by its games' points (ties by seed) and find a tie across its cut."""
    points = _points(heat.entrants, played)
    order = sorted(heat.entrants, key=lambda e: (-points[e], rank[e]))
    cut = _Cut(order, heat.through)
    a = heat.through
    if len(order) > a and points[order[a - 1]] == points[order[a]]:
        line = points[order[a]]
        cut.tied = [e for e in order if points[e] == line]
        cut.slots = sum(1 for e in order[:a] if points[e] == line)
    return cut


def _settle(cut: _Cut, played: Sequence[PlayedGame], rank: Mapping[str, int]) -> None:
    """Reorder a cut's tied group by a tie-break stage's games (``played``); what is still tied
    across the line stays in ``cut.tied``."""
    points = _points(cut.tied, played)
    group = sorted(cut.tied, key=lambda e: (-points[e], rank[e]))
    start = cut.order.index(cut.tied[0])
    cut.order[start : start + len(group)] = group
    s = cut.slots
    if points[group[s - 1]] == points[group[s]]:
        line = points[group[s]]
        cut.slots = sum(1 for e in group[:s] if points[e] == line)
        cut.tied = [e for e in group if points[e] == line]
    else:
        cut.tied, cut.slots = [], 0


def _draw(cut: _Cut, settings: KnockoutSettings, stage: int) -> None:
    """The seeded draw for a tie the tie-breaks left."""
    group = sorted(cut.tied, key=lambda e: (_hash_int("knockout-draw", settings.seed, stage, e), e))
    start = cut.order.index(cut.tied[0])
    cut.order[start : start + len(group)] = group
    cut.tied, cut.slots = [], 0


def replay(
    entrants: Sequence[str],
    settings: KnockoutSettings,
    results: Sequence[Sequence[PlayedGame]],
) -> Bracket:
    """The knockout after ``results`` (``results[s]``: the games of stage ``s + 1``): the stages
    they played, and the next stage or the outcome (module text). Stages beyond the outcome in
    ``results`` are an error, as is a stage's game among other entrants than its tables'."""
    check(entrants, settings)
    field_ = seeded(entrants, settings)
    rank = {e: i for i, e in enumerate(field_)}
    stages: list[Stage] = []
    out_in: dict[str, int] = {}
    out_order: list[list[str]] = []  # per round: who went out, in order
    round_no = 1

    def first_table() -> int:
        return sum(len(s.tables) for s in stages)

    def step(stage: Stage) -> Sequence[PlayedGame] | None:
        """The stage's results, or None when it is the next to play."""
        if len(stages) == len(results):
            return None
        stages.append(stage)
        return results[len(stages) - 1]

    while True:
        final = len(field_) <= settings.table_size
        kind = StageKind.FINAL if final else StageKind.HEATS
        round_heats = [Heat(tuple(field_), 1)] if final else heats(field_, settings)
        stage = _stage(len(stages) + 1, kind, round_no, round_heats, settings, first_table())
        played = step(stage)
        if played is None:
            return Bracket(tuple(stages), stage, None)
        cuts = [_cut(h, played, rank) for h in round_heats]
        for _ in range(settings.tiebreaks):
            open_cuts = [c for c in cuts if c.tied]
            if not open_cuts:
                break
            groups = [Heat(tuple(sorted(c.tied, key=rank.__getitem__)), c.slots) for c in open_cuts]
            tiebreak = _stage(
                len(stages) + 1, StageKind.TIEBREAK, round_no, groups, settings, first_table()
            )
            played = step(tiebreak)
            if played is None:
                return Bracket(tuple(stages), tiebreak, None)
            for c in open_cuts:
                _settle(c, played, rank)
        for c in cuts:
            if c.tied:
                _draw(c, settings, len(stages))
        if final:
            order = cuts[0].order
            for e in order:
                out_in[e] = round_no
            rest = [e for r in reversed(out_order) for e in r]
            if len(stages) != len(results):
                raise ScheduleError(
                    f"results of {len(results)} stages, but the knockout was decided in "
                    f"{len(stages)}"
                )
            return Bracket(tuple(stages), None, Outcome(tuple(order + rest), out_in))
        going = [e for c in cuts for e in c.order[: c.through]]
        gone = [(pos, rank[e], e) for c in cuts for pos, e in enumerate(c.order[c.through :])]
        out_order.append([e for _, _, e in sorted(gone)])
        for e in out_order[-1]:
            out_in[e] = round_no
        field_ = sorted(going, key=rank.__getitem__)
        round_no += 1


__all__ = [
    "MAX_DEALS",
    "Bracket",
    "Heat",
    "KnockoutSettings",
    "Outcome",
    "Stage",
    "StageKind",
    "check",
    "heats",
    "replay",
    "seeded",
]
