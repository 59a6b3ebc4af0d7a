"""Divisions: ladders of different strength, with promotion and relegation at a season's end by
rules the organiser sets (docs/organisers/seasons.md, "Divisions"). Pure: standings in, the next
season's divisions out; no store, no clock.

Division 1 is the strongest. At a season's end, across each boundary between division d and d+1,
the top ``promoted`` of d+1 go up and the bottom ``relegated`` of d go down (the counts may differ
per boundary: :class:`Boundary`). Everyone else stays. The next season's division lists those
relegated from above first, then those who stayed, then those promoted from below, each group in
its final standing's order: a seeding, best first, for whatever pairs the division next.

Bots that left (withdrawn) are dropped before anything moves, so a boundary counts only those who
remain; newcomers join the last division at its bottom, in the order given. A division too small to
give up both its promoted and its relegated is an error naming it, never a bot moved twice.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .schedule import ScheduleError


@dataclass(frozen=True)
class Boundary:
    """What crosses one boundary (between division d and d+1) at a season's end."""

    promoted: int = 1
    """The top this many of the lower division go up."""
    relegated: int = 1
    """The bottom this many of the upper division go down."""

    def __post_init__(self) -> None:
        if self.promoted < 0 or self.relegated < 0:
            raise ScheduleError("promotion and relegation count bots: 0 or more")


@dataclass(frozen=True)
class Move:
    entrant: str
    start: int
    """Its division this season (1 the strongest)."""
    end: int
    """Its division next season."""


@dataclass(frozen=True)
class SeasonEnd:
    """The next season's divisions (each best seed first) and who moved."""

    divisions: tuple[tuple[str, ...], ...]
    moves: tuple[Move, ...]


def boundaries_of(rule: Boundary | Sequence[Boundary], divisions: int) -> list[Boundary]:
    """One rule for every boundary, or one per boundary (there are ``divisions - 1``)."""
    if isinstance(rule, Boundary):
        return [rule] * max(0, divisions - 1)
    if len(rule) != max(0, divisions - 1):
        raise ScheduleError(
            f"{divisions} divisions have {max(0, divisions - 1)} boundaries, not {len(rule)} rules"
        )
    return list(rule)


def season_end(
    standings: Sequence[Sequence[str]],
    rule: Boundary | Sequence[Boundary],
    *,
    withdrawn: Collection[str] = (),
    newcomers: Sequence[str] = (),
) -> SeasonEnd:
    """The next season's divisions from this season's final ``standings`` (one list a division,
    division 1 first, each best first), by ``rule`` (module text)."""
    seen: set[str] = set()
    for division in standings:
        for e in division:
            if e in seen:
                raise ScheduleError(f"{e} is in two divisions, or twice in one")
            seen.add(e)
    if not standings:
        raise ScheduleError("there is no division")
    again = [e for e in newcomers if e in seen and e not in withdrawn]
    if again or len(set(newcomers)) != len(newcomers):
        raise ScheduleError(f"a newcomer is already in a division: {(again or list(newcomers))[0]}")
    gone = set(withdrawn)
    rows = [[e for e in division if e not in gone] for division in standings]
    rules = boundaries_of(rule, len(rows))
    up: list[list[str]] = [[] for _ in rows]  # up[d]: leaving division d upwards
    down: list[list[str]] = [[] for _ in rows]
    for d, b in enumerate(rules):  # the boundary between division d and d+1 (0-based)
        for count, at, what in ((b.relegated, d, "relegate"), (b.promoted, d + 1, "promote")):
            if count > len(rows[at]):
                raise ScheduleError(
                    f"division {at + 1} has {len(rows[at])} bots: too few to {what} {count}"
                )
        if b.relegated:
            down[d] = rows[d][-b.relegated :]
        up[d + 1] = rows[d + 1][: b.promoted]
    for d, row in enumerate(rows):
        if len(up[d]) + len(down[d]) > len(row):
            raise ScheduleError(
                f"division {d + 1} has {len(row)} bots, fewer than the {len(up[d])} it promotes "
                f"and the {len(down[d])} it relegates"
            )
    out: list[tuple[str, ...]] = []
    moves: list[Move] = []
    for d, row in enumerate(rows):
        moving = set(up[d]) | set(down[d])
        stay = [e for e in row if e not in moving]
        above = down[d - 1] if d > 0 else []
        below = up[d + 1] if d + 1 < len(rows) else []
        extra = list(newcomers) if d == len(rows) - 1 else []
        out.append((*above, *stay, *below, *extra))
        moves += [Move(e, d, d + 1) for e in above] + [Move(e, d + 2, d + 1) for e in below]
    moves.sort(key=lambda m: (m.start, m.end, m.entrant))
    return SeasonEnd(tuple(out), tuple(moves))


def split(ranking: Sequence[str], sizes: Sequence[int]) -> tuple[tuple[str, ...], ...]:
    """The first season's divisions: a ranking (best first: a ladder's ratings, a Swiss's
    standing) cut into divisions of these sizes, division 1 first."""
    if any(s < 1 for s in sizes) or sum(sizes) != len(ranking):
        raise ScheduleError(
            f"divisions of {', '.join(map(str, sizes))} do not hold {len(ranking)} bots"
        )
    if len(set(ranking)) != len(ranking):
        raise ScheduleError("the ranking names a bot twice")
    out, start = [], 0
    for s in sizes:
        out.append(tuple(ranking[start : start + s]))
        start += s
    return tuple(out)


__all__ = ["Boundary", "Move", "SeasonEnd", "boundaries_of", "season_end", "split"]
