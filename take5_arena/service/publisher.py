"""The publisher of a running arena: standings.json and the static site (a new complete version
each time, switched to atomically: take5_arena/leaderboard/site_versions.py), refreshed when
``every_games`` new games have landed, or ``every_seconds`` after the first one that has not been
published, whichever comes first, and the latest standings document kept for the arena's
Standings call and the web pages.

The standings are kept up to date game by game (take5_arena/leaderboard/live_board.py): a
publication adds the games recorded since the last one to the ratings, statistics and online Elo
it keeps, instead of computing them again from every game; they are computed from every game when
the publisher starts, when a game it had changed (an entrant relabelled by a new version), and at
each refresh of the intervals, which also checks the kept ratings against that full fit (logged).
The intervals are of every game while they are fast to compute, and at a large arena those of
the last refresh, carried to the ratings now (the standings say as of which game).
The crosstable and the ratings over time of standings.json are kept game by game too
(:meth:`LiveStandings.document_parts`), computed once per publication and given to the document
kept here and to the site's. The games added are read past a high-water mark (the last one added)
while the store's entrant labels stay as they were; a new version's labels make every game be
compared again.

The games are counted in the store (its last result's number, read every second), not told by
this process's ladder: on a store that several processes share (docs/operators/several-hosts.md),
a web process that plays no game (``referee serve --no-ladder --web``) publishes the games the
referees on other hosts record, as the referee that records them does.

On such a store, every process keeps the standings (its pages and its Standings call read them),
but one alone builds the static site: the holder of the store's :data:`SITE_BUILDER` claim (a
session-level advisory lock, as a table's claim: taken by the first publisher that asks, held for
as long as its process lives, and taken over by another process's next publication when it dies).
The others build nothing, so N processes cost one build, and the site is in the ``--site``
folder of the process that holds the claim (said in its log).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Hashable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from take5_arena.referee.store import Store
from take5_arena.service import logs
from take5_arena.service.ladder import LadderConfig

SITE_BUILDER = "site builder"
"""The claim (Schedules.claim) of the one process that builds the site of a shared store."""

if TYPE_CHECKING:  # the leaderboard (numpy, scipy) is loaded at the first publication
    from take5_arena.leaderboard.board import Standings
    from take5_arena.leaderboard.live_board import Check, LiveStandings
    from take5_arena.leaderboard.results import GameResult


class Publisher:
    """Refreshes standings (and the site) as games land in the store; keeps the latest standings
    document (see the module text)."""

    POLL_SECONDS = 1.0
    """How often the store is asked how many games it recorded."""

    def __init__(
        self,
        directory: str | Path,
        config: LadderConfig,
        *,
        title: str | None = None,
    ):
        self.directory = Path(directory)
        self.config = config
        self.title = title
        self.log = logs.logger("publisher")
        self.lock = threading.Lock()
        self.document: dict[str, Any] | None = None
        self.computed_at = ""
        self.published_games = -1
        """Games in the standings last published (-1: none yet); the organiser's health page
        shows it beside the games recorded, so a publisher that falls behind is seen."""
        self.publications = 0
        self.published_at: float | None = None
        """When the last publication ended (Unix time; None: none yet), for the metrics."""
        self.failures = 0
        """Publications that failed since the start (logged; the next one tries again)."""
        self.live: LiveStandings | None = None
        """The standings kept up to date between publications (the publisher's thread only)."""
        self._checked: Check | None = None
        self._pending = 0
        self._first_pending: float | None = None
        self._seen: int | None = None  # the store's recorded games at the last look
        self._lease: Store | None = None  # the connection holding the site's claim (shared)
        self._builds: bool | None = None  # whether this process builds the site (None: unknown)
        self._stop = threading.Event()
        self._kick = threading.Event()
        self._thread = threading.Thread(target=self._run, name="publisher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop, after publishing the games that landed since the last publication."""
        self._stop.set()
        self._kick.set()
        self._thread.join(120)

    def games_landed(self, n: int) -> None:
        """This process's ladder recorded ``n`` games: look at the store now rather than at the
        next poll."""
        self._kick.set()

    def refresh(self) -> None:
        """Publish at the next look whatever landed (a season closed: its revealed key belongs
        on the site now, not after the next games)."""
        with self.lock:
            self._pending = max(self._pending, self.config.every_games)
        self._kick.set()

    def _look(self, store: Store) -> None:
        """Count the games recorded since the last look, by whichever process recorded them (the
        results' sequence number: read at once, where counting them would read them all)."""
        last = store.audit.last_seq()
        count = last if isinstance(last, int) else 0
        with self.lock:
            before = max(self.published_games, 0) if self._seen is None else self._seen
            if count > before:
                self._pending += count - before
                if self._first_pending is None:
                    self._first_pending = time.monotonic()
            self._seen = count

    def latest(self) -> tuple[dict[str, Any] | None, str]:
        with self.lock:
            return self.document, self.computed_at

    def _due(self) -> bool:
        with self.lock:
            if self._pending >= self.config.every_games:
                return True
            return (
                self._first_pending is not None
                and time.monotonic() - self._first_pending >= self.config.every_seconds
            )

    def _run(self) -> None:
        self._publish_logged()  # what is there already, at start: a failure said and counted
        store: Store | None = None
        try:
            while not self._stop.is_set():
                self._kick.wait(self.POLL_SECONDS)
                self._kick.clear()
                try:
                    store = store or Store(self.directory, readonly=True)
                    self._look(store)
                except Exception as error:  # noqa: BLE001 - said; the next look tries again
                    self.log.error("reading the store failed: %s: %s", type(error).__name__, error)
                    if store is not None:
                        with contextlib.suppress(Exception):
                            store.close()
                    store = None
                    continue
                if self._due():
                    self._publish_logged()
        finally:
            if store is not None:
                store.close()
        # Stopping: published once more, last, whatever was counted: a game the ladder committed
        # as it was stopped may not have been counted, and the site must hold every game recorded.
        self._publish_logged()
        if self._lease is not None:  # the site's claim ends with its connection
            with contextlib.suppress(Exception):
                self._lease.close()
            self._lease = None

    def builds_site(self) -> bool:
        """Whether this process builds the site now: one of a store's own (SQLite), or the holder
        of a shared store's :data:`SITE_BUILDER` claim (taken here when nobody holds it: its
        holder stopped or died). Said in the log when it changes."""
        if self.config.site is None:
            return False
        if self._builds:  # a store of its own, or the claim held (until this process ends)
            return True
        if self._lease is None:
            try:
                lease = Store(self.directory, readonly=True)
            except Exception as error:  # noqa: BLE001 - not now; the next publication asks again
                self.log.error("the site's claim: %s: %s", type(error).__name__, error)
                return False
            if lease.url is None:  # SQLite: one process serves the directory (its run lock)
                lease.close()
                self._builds = True
                return True
            self._lease = lease
        try:
            builds = self._lease.schedules.claim(SITE_BUILDER)
        except Exception as error:  # noqa: BLE001 - a lost connection: a new one next time
            self.log.error("the site's claim: %s: %s", type(error).__name__, error)
            with contextlib.suppress(Exception):
                self._lease.close()
            self._lease, builds = None, False
        if builds != self._builds:
            self.log.info(
                f"this process builds the site in {self.config.site} (the store's site claim)"
                if builds
                else "another process of this store builds the site: this one keeps the standings"
            )
        self._builds = builds
        return builds

    def _publish_logged(self) -> None:
        try:
            self.publish()
        except Exception as error:  # noqa: BLE001 - reported; the next publication retries
            self.failures += 1
            self.log.error("publishing failed: %s: %s", type(error).__name__, error)

    def publish(self) -> None:
        """Compute the standings now, keep them, and write the site (if configured)."""
        from take5_arena.leaderboard.publish import standings_document  # lazy: start-up time
        from take5_arena.leaderboard.site_build import publish_site  # lazy: start-up time
        from take5_arena.leaderboard.site_versions import publish_versioned  # lazy: start-up time
        from take5_arena.standings import load_tournament  # lazy: start-up time

        with self.lock:
            self._pending = 0
            self._first_pending = None
        games = load_tournament(self.directory)
        stamp = datetime.now(timezone.utc)
        if not games.results:
            return
        table = self._standings(games.results, games.entrant_labels)
        assert self.live is not None
        # the crosstable and ratings over time once, from what the live standings keep: for the
        # document kept here and the site's
        parts = self.live.document_parts([r.entrant for r in table.rows])
        title = self.title or games.title
        doc = standings_document(
            table,
            games.results,
            title=title,
            generated_at=stamp.strftime("%Y-%m-%d %H:%M:%S UTC"),
            deals=games.deals,
            shared_tables=games.shared_tables,
            owners=games.owners,
            parts=parts,
        )
        if self.config.site is not None and self.builds_site():
            # a complete new version, switched to at once (readers never see half of one); in it,
            # streamed and incremental: only what the new games change is written
            publish_versioned(
                self.config.site,
                lambda folder: publish_site(
                    folder,
                    results=games.results,
                    games=games,
                    standings=table,
                    title=title,
                    generated_at=stamp.strftime("%Y-%m-%d %H:%M UTC"),
                    parts=parts,
                ),
            )
        with self.lock:
            self.document = doc
            self.computed_at = stamp.isoformat(timespec="seconds")
            self.published_games = len(games.results)
            self.publications += 1
            self.published_at = time.time()

    #: The kept ratings may differ from a full fit by this much (Elo) before it is an error.
    CHECK_TOLERANCE = 1e-6

    def _standings(self, results: list[GameResult], labels: Hashable | None) -> Standings:
        """The standings of ``results`` (every rated game now) from the kept ones plus the new
        games, or from all of them when the kept ones cannot be (see the module text)."""
        from take5_arena.leaderboard.live_board import LiveStandings  # lazy: start-up time

        live, self.live = self.live, None  # kept again only once all went well
        if live is None or not live.catch_up(results, labels=labels):
            self.log.info("publisher: standings from every game (%d)", len(results))
            live = LiveStandings(results, bootstrap=self.config.bootstrap, seed=0, labels=labels)
        table = live.standings()
        self.live = live
        check = live.last_check
        if check is not None and check is not self._checked:
            self._checked = check
            if check.difference > self.CHECK_TOLERANCE:
                self.log.error(
                    "the kept ratings differed from a full fit of %d games by %.3g Elo "
                    "(replaced by it)",
                    check.games,
                    check.difference,
                )
        return table


__all__ = ["SITE_BUILDER", "Publisher"]
