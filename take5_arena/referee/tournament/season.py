"""A season with dates: entries until a cut-off, its deal key committed at the start and revealed
at the end (``referee season open|status|close``, docs/organisers/seasons.md).

A season is the tournament's current deal season (store/deals.py) with a calendar: when it starts,
when entries freeze and when it ends. Opening one commits its key at once (the key's SHA-256 is in
the store and every publication from then), so no deal can be chosen afterwards; from the cut-off
on, :func:`entries_closed` refuses every new version (``referee submit`` and the arena's
submissions both go through submission.py, which asks it), so the field the formats pair is the
field entered in time; closing, once the end has passed, reveals the key (games of the season not
played by then are given up: revealing would make them predictable) and starts the next deal
season. The archive of the season (its final standings and every game, verifiable) is the site
``referee season close --archive DIR`` publishes into ``DIR/season-N`` (cli/season.py).

The calendar is kept in the store (``store.settings.calendar``), beside the settings, so every
process of the tournament (the referee, the arena's submissions) reads the same one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..store import Store
from ..store.deals import DealKeyError, Revealed, current_key, current_season, reveal
from .errors import TournamentError


@dataclass(frozen=True)
class Season:
    """A season's calendar (times in UTC) and its deal season."""

    number: int
    """Its deal season (the key that deals its games)."""
    starts: datetime
    cutoff: datetime
    """From then on no new version is entered."""
    ends: datetime
    commitment: str
    closed_at: str | None = None
    """When ``referee season close`` revealed its key (None: not yet)."""

    def phase(self, now: datetime) -> str:
        """``closed``, ``over`` (past its end, not closed yet), ``frozen`` (past the cut-off),
        ``open``, or ``not started``."""
        if self.closed_at is not None:
            return "closed"
        if now >= self.ends:
            return "over"
        if now >= self.cutoff:
            return "frozen"
        return "open" if now >= self.starts else "not started"

    def to_json(self) -> dict[str, Any]:
        return {
            "season": self.number,
            "starts": _text(self.starts),
            "cutoff": _text(self.cutoff),
            "ends": _text(self.ends),
            "commitment": self.commitment,
            "closed_at": self.closed_at,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Season:
        return cls(
            int(doc["season"]),
            parse_time(doc["starts"]),
            parse_time(doc["cutoff"]),
            parse_time(doc["ends"]),
            str(doc["commitment"]),
            doc.get("closed_at"),
        )


def parse_time(text: str) -> datetime:
    """An ISO 8601 date or time (``2027-03-01``, ``2027-03-01T18:00``, with ``Z`` or an offset;
    without one, UTC) as an aware datetime; TournamentError naming the text otherwise."""
    try:
        when = datetime.fromisoformat(str(text).strip())
    except ValueError:
        raise TournamentError(
            f"{text!r} is not a date or time (ISO 8601: 2027-03-01 or 2027-03-01T18:00Z)"
        ) from None
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when


def _text(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def season_of(store: Store) -> Season | None:
    """The tournament's latest season (None: it never opened one)."""
    raw = store.settings.calendar()
    if raw is None:
        return None
    try:
        return Season.from_json(json.loads(raw))
    except (ValueError, KeyError, TypeError) as error:
        raise TournamentError(f"the stored season is unreadable ({error})") from None


def open_season(
    store: Store, *, starts: datetime, cutoff: datetime, ends: datetime, now: datetime
) -> Season:
    """Open a season with this calendar: its deal key is made and committed now. Refused while
    another season is not closed, for a calendar out of order or already over, and for a
    tournament that deals from a public seed (nothing to commit to)."""
    if not starts <= cutoff <= ends:
        raise TournamentError("a season starts, then freezes its entries, then ends, in that order")
    if ends <= now:
        raise TournamentError(f"the season would end in the past ({_text(ends)})")
    before = season_of(store)
    if before is not None and before.closed_at is None:
        raise TournamentError(
            f"season {before.number} is not closed yet (`referee season close`, after "
            f"{_text(before.ends)})"
        )
    if store.settings.get().get("deals") == "public":
        raise TournamentError(
            "this tournament deals from a public seed: a season needs secret deals "
            "(its key is committed at the start and revealed at the end)"
        )
    try:
        key = current_key(store)
    except DealKeyError as error:
        raise TournamentError(str(error)) from None
    season = Season(key.season, starts, cutoff, ends, key.commitment)
    store.settings.set_calendar(json.dumps(season.to_json(), sort_keys=True))
    return season


def entries_closed(store: Store, now: datetime) -> str | None:
    """Why no new version may be entered now (None: entries are open): the season's cut-off has
    passed and the season is not closed yet."""
    season = season_of(store)
    if season is None or season.phase(now) not in ("frozen", "over"):
        return None
    return (
        f"entries to season {season.number} closed at {_text(season.cutoff)}; "
        "the next season opens after it ends"
    )


def close_season(
    store: Store, *, now: datetime, early: bool = False
) -> tuple[Season, Revealed | None]:
    """Close the season: its key revealed (games not played given up) and the next deal season
    begun; None for the key when it was revealed already (``referee tournament reveal``).
    Refused before its end unless ``early``, and when no season is open. The caller holds the run
    lock (``reveal``'s rule)."""
    season = season_of(store)
    if season is None or season.closed_at is not None:
        raise TournamentError("no season is open (`referee season open`)")
    if season.phase(now) != "over" and not early:
        raise TournamentError(
            f"season {season.number} ends at {_text(season.ends)}; --early closes it now"
        )
    deal = current_season(store)
    revealed = None
    if deal is not None and deal.season == season.number:
        try:
            revealed = reveal(store, abandon=True)
        except DealKeyError as error:
            raise TournamentError(str(error)) from None
    closed = Season(
        season.number, season.starts, season.cutoff, season.ends, season.commitment, _text(now)
    )
    store.settings.set_calendar(json.dumps(closed.to_json(), sort_keys=True))
    return closed, revealed


__all__ = [
    "Season",
    "close_season",
    "entries_closed",
    "open_season",
    "parse_time",
    "season_of",
    "utc_now",
]
