"""The publisher of a running arena: standings.json and the static site (a new complete version
each time, switched to atomically: take5_arena/leaderboard/site_versions.py), refreshed when
``every_games`` new games have landed, or ``every_seconds`` after the first one that has not been
published, whichever comes first, and the latest standings document kept for the arena's
Standings call and the web pages.

The games are counted in the store (its last result's number, read every second), not told by
this process's ladder: on a store that several processes share (docs/operators/several-hosts.md),
a web process that plays no game (``referee serve --no-ladder --web``) publishes the games the
referees on other hosts record, as the referee that records them does.
"""

from __future__ import annotations

import contextlib
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from take5_arena.referee.store import Store
from take5_arena.service import logs
from take5_arena.service.ladder import LadderConfig


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
        self._pending = 0
        self._first_pending: float | None = None
        self._seen: int | None = None  # the store's recorded games at the last look
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
        with contextlib.suppress(Exception):
            self.publish()  # what is there already, at start
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

    def _publish_logged(self) -> None:
        try:
            self.publish()
        except Exception as error:  # noqa: BLE001 - reported; the next publication retries
            self.log.error("publishing failed: %s: %s", type(error).__name__, error)

    def publish(self) -> None:
        """Compute the standings now, keep them, and write the site (if configured)."""
        from take5_arena.leaderboard.board import compute_standings  # lazy: start-up time
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
        table = compute_standings(games.results, bootstrap=self.config.bootstrap, seed=0)
        title = self.title or games.title
        doc = standings_document(
            table,
            games.results,
            title=title,
            generated_at=stamp.strftime("%Y-%m-%d %H:%M:%S UTC"),
            deals=games.deals,
            shared_tables=games.shared_tables,
            owners=games.owners,
        )
        if self.config.site is not None:
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
                ),
            )
        with self.lock:
            self.document = doc
            self.computed_at = stamp.isoformat(timespec="seconds")
            self.published_games = len(games.results)
            self.publications += 1


__all__ = ["Publisher"]
