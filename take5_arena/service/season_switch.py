"""The arena closes a season by itself at its end date (``referee serve --after-season``).

While a season runs, the ladder deals every table from the season's secret key. Revealing that key
while tables dealt from it are still to play, or while a ladder goes on dealing from it, would
make those games predictable from a public key. So the switch goes in this order, in the ladder's
own thread (take5_arena/service/ladder.py), under the store's planning claim (several referees on
one store plan one at a time, so none deals from the old key while another reveals it):

1. from the season's end no table is planned or picked up any more, and the tables waiting are
   dropped (their games stay pending);
2. the tables in flight get ``grace`` seconds to finish (their games are recorded as usual);
3. the season is closed (take5_arena/referee/tournament/season.py, ``close_season``): the games of
   its key not recorded by then are given up, and a game given up is never recorded afterwards,
   whoever plays it (take5_arena/referee/store/results.py refuses it), then its key is revealed and
   the next deal key committed;
4. with ``archive``, the season's site (its final standings, every game, the revealed key) is
   published into ``archive/season-N``, as ``referee season close --archive`` does;
5. ``after``: ``stop`` leaves the ladder idle until the organiser opens the next season
   (``referee season open``, which the running arena sees), ``next`` opens the next season at once
   with the same lengths (entries until the same time after its start, the same length), dealt from
   the key committed in step 3.

The ladder then deals from the new key: its dealer is made again after the switch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from take5_arena.referee.store import Store
from take5_arena.referee.tournament.season import Season, close_season, open_season, season_of
from take5_arena.service import defaults

AFTER_SEASON = ("stop", "next")
"""What the arena does once it closed a season: stay idle, or open the next one at once."""


@dataclass(frozen=True)
class SeasonSwitch:
    """How the arena closes a season at its end (``referee serve`` options)."""

    after: str = "stop"
    """One of :data:`AFTER_SEASON`."""
    archive: Path | None = None
    """Publish each closed season's site into ``archive/season-N`` (None: no archive)."""
    grace: float = defaults.SEASON_GRACE_SECONDS
    """Seconds the tables in flight at the season's end get to finish."""
    bootstrap: int = defaults.PUBLISH_BOOTSTRAP
    """Bootstrap resamples of the archive's intervals."""


def season_over(store: Store, now: datetime) -> Season | None:
    """The season to close now: past its end and not closed (None: nothing to close)."""
    season = season_of(store)
    if season is None or season.phase(now) != "over":
        return None
    return season


def switch(store: Store, config: SeasonSwitch, now: datetime, log: Callable[[str], None]) -> Season:
    """Close the season that is over (steps 3-5 of the module text; the caller stopped dealing
    from its key and holds the planning claim); the season now current (the closed one with
    ``stop``, the next one with ``next``)."""
    closed, revealed = close_season(store, now=now)
    given_up = revealed.abandoned if revealed is not None else 0
    log(
        f"season {closed.number} closed at its end: its deal key revealed, {given_up} game"
        f"{'s' * (given_up != 1)} not played by then given up"
    )
    if config.archive is not None:
        try:
            out = archive_season(store.directory, config.archive, closed.number, config.bootstrap)
            log(f"season {closed.number} archived in {out} (`referee verify --site {out}`)")
        except (OSError, ValueError) as error:  # the key is revealed: the season stays closed
            log(
                f"season {closed.number} not archived ({type(error).__name__}: {error}); "
                "`referee publish --out DIR` publishes it"
            )
    if config.after != "next":
        log(
            f"ladder idle after season {closed.number}: `referee season open` starts the next "
            "(the arena sees it)"
        )
        return closed
    nxt = open_season(
        store,
        starts=now,
        cutoff=now + (closed.cutoff - closed.starts),
        ends=now + (closed.ends - closed.starts),
        now=now,
    )
    log(
        f"season {nxt.number} opened: entries until {nxt.to_json()['cutoff']}, ends "
        f"{nxt.to_json()['ends']}, deal key commitment (SHA-256) {nxt.commitment}"
    )
    return nxt


def archive_season(directory: Path, root: Path, number: int, bootstrap: int) -> Path:
    """Publish the tournament's whole site (the closed season's standings, every game and the
    revealed key) into ``root/season-NUMBER``; that folder."""
    from take5_arena.leaderboard.board import compute_standings  # lazy: start-up time
    from take5_arena.leaderboard.site_build import write_site  # lazy: start-up time
    from take5_arena.standings import load_tournament  # lazy: start-up time

    out = root / f"season-{number}"
    games = load_tournament(directory)
    table = compute_standings(games.results, bootstrap=bootstrap, seed=0)
    title = f"{directory.resolve().name}: season {number}"
    write_site(out, games, table, title=title, full=True)
    return out


__all__ = ["AFTER_SEASON", "SeasonSwitch", "archive_season", "season_over", "switch"]
